"""Apply a batch of changes to a table's Hudi files: one commit per table run."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from etl.change_frame import for_current_table, for_historical_table, latest_per_key, surviving_rows
from etl.hudi_options import HudiProfile, WriteOperation, WriteProfile, hudi_write_options
from etl.schema import align_to_table, table_schema
from etl.timeline import table_exists
from etl.tombstones import (
    STALE,
    clear_tombstones,
    consolidate_tombstones,
    mark_stale,
    read_tombstones,
    tombstone_rows,
    write_tombstones,
)
from odp.config.models import TableConfig, TableMode
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.faults import fault_point

logger = logging.getLogger(__name__)
_CATALOG_LOCK = threading.Lock()


@dataclass(frozen=True)
class WritePlan:
    """What a run writes and how: the rows in table shape and the Hudi operation.

    Current-mode tables also carry their delete tombstones: the batch's deletes to record
    (``tombstones``), the incoming upserts dropped as older than a committed delete (``stale``), and
    whether the stored tombstones are cleared first (``clear_tombstones``: a full load, a new table).
    """

    rows: DataFrame
    operation: WriteOperation
    tombstones: DataFrame | None = None
    stale: DataFrame | None = None
    clear_tombstones: bool = False


@dataclass(frozen=True)
class WriteResult:
    operation: WriteOperation
    stale_dropped: int = 0  # incoming upserts not newer than their key's committed delete


def plan_write(
    changes: DataFrame,
    config: TableConfig,
    *,
    has_full_load: bool,
    exists: bool,
    tombstones: DataFrame | None = None,
) -> WritePlan:
    """Pure: the rows and operation of one run.

    current: last change per key; deletes travel as ``_hoodie_is_deleted`` in the same upsert. An
    insert / update not newer than its key's stored tombstone (``tombstones``: a delete already
    committed) is dropped, so a late change never resurrects a deleted row. A first full load is a
    bulk_insert; a full load of an existing table replaces its contents (insert_overwrite_table) with
    what survives of the batch. A full load, or the first write of a new table, ignores and clears the
    stored tombstones (the batch's own deletes become the new ones).
    historical: every change, upserted by (key, ``_odp_seq``) so a retried change is not doubled;
    a first full load is a bulk_insert.
    """
    if config.mode is TableMode.HISTORICAL:
        rows = for_historical_table(changes)
        if has_full_load and not exists:
            return WritePlan(rows, WriteOperation.BULK_INSERT)
        return WritePlan(rows, WriteOperation.UPSERT)
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
    if tombstones is None:
        return WritePlan(for_current_table(latest), WriteOperation.UPSERT, tombstones=deletes)
    flagged = mark_stale(latest, tombstones, keys)
    return WritePlan(
        for_current_table(flagged.where(~F.col(STALE)).drop(STALE)),
        WriteOperation.UPSERT,
        tombstones=deletes,
        stale=flagged.where(F.col(STALE)).drop(STALE),
    )


def write_changes(
    spark: SparkSession,
    changes: DataFrame,
    config: TableConfig,
    base_path: str,
    *,
    has_full_load: bool,
    catalog_sync: bool,
    profile: WriteProfile,
    file_ids: Sequence[str],
    run_id: str,
    input_rows: int = 0,
    has_deletes: bool = True,
    tombstone_path: str | None = None,
    before_commit: Callable[[], None] = lambda: None,
) -> WriteResult:
    """Write one commit to the table at base_path; returns the operation used and the stale changes dropped.

    Current-mode tables (with ``tombstone_path``): the stored tombstones filter the batch, then the
    batch's deletes are upserted into the tombstones (a full load or a new table clears them first),
    and only then is the table committed. A crash in between leaves tombstones that the rerun of the same files writes
    again unchanged. After the commit, a long tombstone log is folded into one folder. ``before_commit`` runs
    right before the table's commit (a test hook).
    ``input_rows`` (the batch's change count) sizes the local profile's shuffles; ``has_deletes`` false (the
    batch holds no delete) skips the tombstone write, so a run without deletes makes one commit and no probe.

    Raises:
        SchemaEvolutionError: the batch changes a column incompatibly (nothing is written).
    """
    exists = table_exists(spark, base_path)
    current = config.mode is TableMode.CURRENT and tombstone_path is not None
    stored = (
        read_tombstones(spark, tombstone_path, config.primary_key) if current and exists and not has_full_load else None
    )
    # ``stored`` is lazy: the table's write below may read the tombstones after this batch's own deletes
    # were added. Same outcome: a key whose last change in the batch is a delete has no upsert to drop.
    plan = plan_write(changes, config, has_full_load=has_full_load, exists=exists, tombstones=stored)
    rows = align_to_table(plan.rows, table_schema(spark, base_path)) if exists else plan.rows
    stale_dropped = 0
    if current and plan.stale is not None:
        stale_dropped = plan.stale.count()
        if stale_dropped:
            logger.warning(
                "%s: %d change(s) older than a committed delete of their key dropped",
                config.table_id,
                stale_dropped,
            )
    fault_point("etl.before_tombstones")  # nothing of this batch written yet
    if current and plan.clear_tombstones:
        clear_tombstones(spark, tombstone_path)
    if current and plan.tombstones is not None and has_deletes:
        write_tombstones(spark, plan.tombstones, tombstone_path, run_id=run_id)
    before_commit()
    options = hudi_write_options(
        config,
        operation=plan.operation,
        profile=profile,
        catalog_sync=catalog_sync,
        input_rows=input_rows,
        file_ids=file_ids,
        run_id=run_id,
    )
    rows.write.format("hudi").options(**options).mode("append").save(base_path)
    if current and stored is not None:
        # after the commit: nothing of this run reads the stored tombstones any more
        consolidate_tombstones(spark, tombstone_path, config.primary_key, run_id=run_id)
    return WriteResult(plan.operation, stale_dropped)


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
