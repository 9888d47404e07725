"""Apply a batch of changes to a raw table's Hudi files (tombstones first, then the table): one commit per run."""

from __future__ import annotations

import logging
import threading
from contextlib import ExitStack
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from etl.change_frame import DELETE, OP, for_current_table, for_historical_table, latest_per_key, surviving_rows
from etl.hudi.commit import CommitTag
from etl.hudi.kept_values import resolve_kept
from etl.hudi.late_deletes import mark_late_deletes, read_stored_order, reads_stored_order
from etl.hudi.options import HudiProfile, WriteOperation, WriteProfile, hudi_write_options
from etl.hudi.partition_paths import check_partition_values
from etl.hudi.rewrite import RewriteCounts, apply_choice, choose_for_run
from etl.hudi.schema import align_to_table
from etl.hudi.table_version import check_table_version, save_hudi
from etl.hudi.target import HudiTarget
from etl.hudi.timeline import TableState, cleaning_due, read_table_state
from etl.hudi.tombstones import (
    STALE,
    clear_tombstones,
    consolidate_tombstones,
    mark_stale,
    read_tombstones,
    tombstone_rows,
    write_tombstones,
)
from etl.hudi.write_strategy import WriteChoice
from odp.config.models import TableConfig, TableMode, TableType
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.faults import fault_point
from odp.naming import tombstone_path

logger = logging.getLogger(__name__)
_CATALOG_LOCK = threading.Lock()


@dataclass(frozen=True)
class WritePlan:
    """What a run writes and how: the rows in table shape and the Hudi operation.

    Current-mode tables also carry their delete tombstones: the batch's deletes to record
    (``tombstones``), the changes dropped as stale (``stale``: upserts not newer than a committed delete, and in a
    MERGE_ON_READ table deletes older than their key's stored row), and whether the stored tombstones are cleared
    first (``clear_tombstones``: a full load, a new table).
    """

    rows: DataFrame
    operation: WriteOperation
    tombstones: DataFrame | None = None
    stale: DataFrame | None = None
    clear_tombstones: bool = False


@dataclass(frozen=True)
class WriteSettings:
    """The job-level settings of a job's table writes: the write profile, catalog sync, the raw root (tombstones
    beside each table) and the job's fault point area (``etl``: the File Processor, ``streaming``: a micro-batch).
    """

    profile: WriteProfile
    catalog_sync: bool
    raw_root: str
    job: str = "etl"

    def tombstones_of(self, config: TableConfig) -> str | None:
        """Where a current-mode table's tombstones live (None for a historical table: it keeps every delete)."""
        if config.mode is not TableMode.CURRENT:
            return None
        return tombstone_path(self.raw_root, config.database, config.target_table)


@dataclass(frozen=True)
class ChangeBatch:
    """One run's changes of a table (the canonical change frame) and what is known of them before the write:
    ``rows`` (the change count: sizes the local profile's shuffles), whether a full load is among them, and
    whether any change is a delete (none: no tombstone write, so a run without deletes makes one commit), and the
    columns some change leaves as stored (a partial update: filled before the write)."""

    changes: DataFrame
    rows: int
    has_full_load: bool = False
    has_deletes: bool = True
    kept_columns: tuple[str, ...] = ()  # columns some change keeps stored (etl.hudi.kept_values); none: no fill
    one_task: bool = False  # the changes are one Spark partition (TablePlan.one_task): a small tombstone log too


@dataclass(frozen=True)
class WriteResult:
    operation: WriteOperation
    # incoming upserts not newer than their key's committed delete, and deletes older than their key's stored row
    stale_dropped: int = 0
    choice: WriteChoice | None = None  # upsert or rewrite, and why (etl.hudi.write_strategy); None: not chosen
    counts: RewriteCounts | None = None  # a rewrite: what it applied (Hudi counts its every row as an insert)


def plan_write(
    changes: DataFrame,
    config: TableConfig,
    *,
    has_full_load: bool,
    exists: bool,
    tombstones: DataFrame | None = None,
    stored_order: DataFrame | None = None,
) -> WritePlan:
    """Pure: the rows and operation of one run.

    current: last change per key; deletes travel as ``_hoodie_is_deleted`` in the same upsert. An
    insert / update not newer than its key's stored tombstone (``tombstones``: a delete already
    committed) is dropped, so a late change never resurrects a deleted row. A delete older than its key's
    stored row (``stored_order``: the stored ``_odp_seq`` of the keys the batch deletes, read for a MERGE_ON_READ
    table, :mod:`etl.hudi.late_deletes`) is dropped too, and records no tombstone. A first full load is a
    bulk_insert; a full load of an existing table replaces its contents (insert_overwrite_table) with
    what survives of the batch. A full load, or the first write of a new table, ignores and clears the
    stored tombstones (the batch's own deletes become the new ones).
    historical: every change, upserted by (key, ``_odp_seq``) so a retried change is not doubled;
    a first full load is a bulk_insert.
    """
    if config.mode is TableMode.HISTORICAL:
        first_load = has_full_load and not exists
        operation = WriteOperation.BULK_INSERT if first_load else WriteOperation.UPSERT
        return WritePlan(for_historical_table(changes), operation)
    keys = tuple(config.primary_key)
    latest = changes.transform(latest_per_key(keys))
    deletes = tombstone_rows(latest, keys)
    if has_full_load:
        rows = for_current_table(surviving_rows(latest))
        operation = WriteOperation.INSERT_OVERWRITE_TABLE if exists else WriteOperation.BULK_INSERT
        return WritePlan(rows, operation, tombstones=deletes, clear_tombstones=True)
    if not exists:
        # A new (or recreated) table starts without tombstones: any left from an earlier table go.
        return WritePlan(for_current_table(latest), WriteOperation.UPSERT, tombstones=deletes, clear_tombstones=True)
    if tombstones is None and stored_order is None:
        return WritePlan(for_current_table(latest), WriteOperation.UPSERT, tombstones=deletes)
    flagged = latest if tombstones is None else mark_stale(latest, tombstones, keys)
    if stored_order is not None:
        flagged = mark_late_deletes(flagged, stored_order, keys)
        deletes = tombstone_rows(flagged.where(~F.col(STALE)), keys)  # a delete that lost is no tombstone
    kept, stale = flagged.where(~F.col(STALE)).drop(STALE), flagged.where(F.col(STALE)).drop(STALE)
    return WritePlan(for_current_table(kept), WriteOperation.UPSERT, tombstones=deletes, stale=stale)


def write_changes(
    spark: SparkSession,
    batch: ChangeBatch,
    config: TableConfig,
    base_path: str,
    tag: CommitTag,
    *,
    settings: WriteSettings,
    state: TableState | None = None,
) -> WriteResult:
    """Write one commit (carrying ``tag``) to the table at base_path; returns the operation and the stale changes
    dropped. The write :func:`etl.hudi.commit.commit_once` runs for the File Processor and the micro-batch.

    Current-mode tables: the stored tombstones filter the batch, then the batch's deletes are upserted into the
    tombstones (a full load or a new table clears them first), and only then is the table committed (a rerun of
    the same changes writes the same tombstones again); after it, a long tombstone log is folded into one folder.
    Fault points ``<job>.before_tombstones`` and ``<job>.before_commit`` (odp.faults) come before each write.
    Without catalog sync, the table is then registered in the session catalog.

    Changes that keep a column's stored value (``batch.kept_columns``) get it first (:mod:`etl.hudi.kept_values`).
    A MERGE_ON_READ table's deletes older than their key's stored row are dropped (:mod:`etl.hudi.late_deletes`).

    ``state``: the table as the caller read it under the table's lease (:func:`etl.hudi.timeline.read_table_state`:
    whether it exists, its partition layout, its schema); None: read here.

    Raises:
        UnsupportedTableVersionError: the table is stored at another Hudi table version than ODP writes (nothing is
            written; :mod:`etl.hudi.table_version`).
        SchemaEvolutionError: the batch changes a column incompatibly (nothing is written).
        ChangeFileError: a partition value the table's partition layout cannot store (nothing is written;
            :mod:`etl.hudi.partition_paths`).
        ChangeFileError: or a change keeps a column nothing supplies a value for (nothing is written).
    """
    state = state if state is not None else read_table_state(spark, base_path)
    check_table_version(
        state.table_version,
        label=config.table_id,
        base_path=base_path,
        catalog_name=f"{config.database}.{config.target_table}",
        replay=True,
    )
    exists = state.exists
    target = HudiTarget.from_table(config).with_stored_layout(state.encoded_partitions)
    check_partition_values(batch.changes, config.partition_by, config.table_id, encoded=target.encode_partitions)
    with ExitStack() as cached:  # what the reads cached for the write is unpersisted after it
        reads = _read_stored(spark, batch, config, base_path, exists=exists, settings=settings, cached=cached)
        return _write(spark, batch, config, base_path, tag, target=target, settings=settings, state=state, reads=reads)


@dataclass(frozen=True)
class StoredReads:
    """What a run reads of its table's stored state before writing anything: the stored tombstones (``tombstones``,
    lazy), the changes with their kept values filled (``changes``), and the stored ``_odp_seq`` of the keys a
    MERGE_ON_READ batch deletes (``order``)."""

    changes: DataFrame
    tombstones: DataFrame | None = None
    order: DataFrame | None = None


def _read_stored(
    spark: SparkSession,
    batch: ChangeBatch,
    config: TableConfig,
    base_path: str,
    *,
    exists: bool,
    settings: WriteSettings,
    cached: ExitStack,
) -> StoredReads:
    """The reads of :func:`write_changes` before its plan; each frame they cache is unpersisted when ``cached`` closes.

    Raises:
        ChangeFileError: a change keeps a column nothing supplies a value for (:mod:`etl.hudi.kept_values`).
    """
    path = settings.tombstones_of(config)
    # lazy: read after this batch's deletes were added; a key whose last change is a delete has no upsert to drop
    reads = path is not None and exists and not batch.has_full_load
    tombstones = read_tombstones(spark, path, config.primary_key, one_task=batch.one_task) if reads else None
    changes = batch.changes
    if batch.kept_columns:
        read_stored = exists and not batch.has_full_load  # a full load replaces what is stored
        changes, filled = resolve_kept(
            spark,
            changes,
            config,
            base_path,
            columns=batch.kept_columns,
            read_stored=read_stored,
            tombstones=tombstones,
        )
        cached.callback(filled.unpersist)
    order = None
    if reads_stored_order(config, exists=exists, has_full_load=batch.has_full_load, has_deletes=batch.has_deletes):
        order = read_stored_order(spark, changes, config, base_path)
        if order is not None:
            cached.callback(order.unpersist)
    return StoredReads(changes, tombstones, order)


def _write(
    spark: SparkSession,
    batch: ChangeBatch,
    config: TableConfig,
    base_path: str,
    tag: CommitTag,
    *,
    target: HudiTarget,
    settings: WriteSettings,
    state: TableState,
    reads: StoredReads,
) -> WriteResult:
    """The plan, the tombstones and the table's commit of :func:`write_changes` (``reads``: what it read before)."""
    tombstones = settings.tombstones_of(config)
    plan = plan_write(
        reads.changes,
        config,
        has_full_load=batch.has_full_load,
        exists=state.exists,
        tombstones=reads.tombstones,
        stored_order=reads.order,
    )
    schema = state.data_schema
    rows = align_to_table(plan.rows, schema) if schema is not None else plan.rows
    choice = choose_for_run(
        spark,
        config,
        target,
        base_path,
        operation=plan.operation,
        exists=state.exists,
        changes=batch.rows,
        state=state,
    )
    rows, rewrite = apply_choice(spark, choice, rows, base_path, config)  # a rewrite: the merged snapshot
    operation = rewrite.operation if rewrite is not None else plan.operation
    stale_dropped = _count_stale(plan, config)
    fault_point(f"{settings.job}.before_tombstones", table_id=config.table_id)  # nothing of this batch written yet
    if tombstones is not None:
        _write_tombstones(spark, plan, tombstones, run_id=tag.run_id, has_deletes=batch.has_deletes)
    fault_point(f"{settings.job}.before_commit", table_id=config.table_id)  # tombstones written, no commit yet
    clean = cleaning_due(state, merge_on_read=target.table_type is TableType.MERGE_ON_READ)
    _save(rows, target, base_path, operation, tag=tag, settings=settings, input_rows=batch.rows, clean=clean)
    if tombstones is not None and reads.tombstones is not None:
        # after the commit: nothing of this run reads the stored tombstones any more
        consolidate_tombstones(spark, tombstones, config.primary_key, run_id=tag.run_id)
    if not settings.catalog_sync:
        register_in_session_catalog(spark, config, base_path)
    return WriteResult(operation, stale_dropped, choice, rewrite.counts if rewrite is not None else None)


def _save(
    rows: DataFrame,
    target: HudiTarget,
    base_path: str,
    operation: WriteOperation,
    *,
    tag: CommitTag,
    settings: WriteSettings,
    input_rows: int,
    clean: bool,
) -> None:
    """The table's Hudi commit, with the options of its target and ``tag`` in its metadata (``clean``: whether Hudi
    may clean after it, :func:`etl.hudi.timeline.cleaning_due`)."""
    options = hudi_write_options(
        target,
        operation=operation,
        profile=settings.profile,
        catalog_sync=settings.catalog_sync,
        input_rows=input_rows,
        metadata=tag.metadata(),
        clean=clean,
    )
    save_hudi(rows, base_path, options)


def _count_stale(plan: WritePlan, config: TableConfig) -> int:
    """The changes the plan drops as stale, in one Spark job, each kind logged when any: upserts older than their key's
    committed delete, deletes older than their key's stored row."""
    if plan.stale is None:
        return 0
    is_delete = F.col(OP) == F.lit(DELETE)
    counts = plan.stale.agg(F.count(F.lit(1)).alias("all"), F.count(F.when(is_delete, 1)).alias("deletes")).first()
    deletes = int(counts["deletes"])
    upserts = int(counts["all"]) - deletes
    if upserts:
        logger.warning("%s: %d change(s) older than a committed delete of their key dropped", config.table_id, upserts)
    if deletes:
        logger.warning("%s: %d delete(s) older than their key's stored row dropped", config.table_id, deletes)
    return upserts + deletes


def _write_tombstones(spark: SparkSession, plan: WritePlan, path: str, *, run_id: str, has_deletes: bool) -> None:
    """Clear the stored tombstones when the plan says so, then add the batch's deletes (when it has any)."""
    if plan.clear_tombstones:
        clear_tombstones(spark, path)
    if plan.tombstones is not None and has_deletes:
        write_tombstones(spark, plan.tombstones, path, run_id=run_id)


def job_write_profile(spark: SparkSession, args: FileProcessorJobArgs) -> WriteProfile:
    """The write profile of a run: the job's ``hudi_profile`` and the cores Spark has (local sizing)."""
    return WriteProfile(profile=HudiProfile(args.hudi_profile), cores=spark.sparkContext.defaultParallelism)


def register_in_session_catalog(spark: SparkSession, config: TableConfig, base_path: str) -> None:
    """Locally (no Glue catalog): make ``SELECT * FROM database.table`` work in this session.

    Serialised: concurrent tables of one database would race on ``CREATE DATABASE`` / ``CREATE TABLE``
    in the embedded metastore (check-then-create is not atomic there).
    """
    database, table = config.database, config.target_table
    with _CATALOG_LOCK:
        spark.sql(f"CREATE DATABASE IF NOT EXISTS `{database}`")
        if not spark.catalog.tableExists(f"{database}.{table}"):
            spark.sql(f"CREATE TABLE `{database}`.`{table}` USING hudi LOCATION '{base_path}'")
        else:
            spark.sql(f"REFRESH TABLE `{database}`.`{table}`")
