"""Stage one of a raw table's write, before anything is written: the checks (table version, partition values), the
reads of the table's stored state (tombstones, kept values, the stored order of deleted keys), the write plan, the
schema evolution and the upsert-or-rewrite choice. Everything it refuses, it refuses with nothing written."""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession

from etl.hudi.options import WriteOperation
from etl.hudi.table_version import check_table_version
from etl.hudi.target import HudiTarget
from etl.hudi.timeline import HudiTableState
from etl.raw_table.batch import ChangeBatch, WriteSettings
from etl.raw_table.kept_values import resolve_kept
from etl.raw_table.late_deletes import read_stored_order, reads_stored_order
from etl.raw_table.partition_values import check_partition_values
from etl.raw_table.plan import WritePlan, plan_write
from etl.raw_table.rewrite import RewriteCounts, apply_choice, choose_for_run
from etl.raw_table.schema_evolution import align_to_table
from etl.raw_table.stale_count import StaleCount, count_stale
from etl.raw_table.tombstones import read_tombstones
from etl.raw_table.write_strategy import WriteChoice
from odp.config.models import TableConfig


@dataclass(frozen=True)
class StoredReads:
    """What a run reads of its table's stored state before writing anything: the stored tombstones (``tombstones``,
    lazy), the changes with their kept values filled (``changes``), and the stored ``_odp_seq`` of the keys a
    MERGE_ON_READ batch deletes (``order``)."""

    changes: DataFrame
    tombstones: DataFrame | None = None
    order: DataFrame | None = None


@dataclass(frozen=True)
class PreparedWrite:
    """A run's write, decided: the rows in the table's shape and schema (``rows``), the Hudi operation, the plan (its
    tombstones), the upsert-or-rewrite choice and a rewrite's counts, how the stale changes dropped are counted
    (``stale``: read after the tombstone write), and where the tombstones live (None: a historical table)."""

    target: HudiTarget
    plan: WritePlan
    rows: DataFrame
    operation: WriteOperation
    choice: WriteChoice
    rewrite: RewriteCounts | None
    stale: StaleCount
    tombstones_path: str | None
    read_tombstones: bool  # the stored tombstones were read: the log may be folded after the commit


def prepare_write(
    spark: SparkSession,
    batch: ChangeBatch,
    config: TableConfig,
    state: HudiTableState,
    *,
    settings: WriteSettings,
    cached: ExitStack,
) -> PreparedWrite:
    """Stage one (each frame it caches is unpersisted when ``cached`` closes).

    Raises:
        UnsupportedTableVersionError: the table is stored at another Hudi table version than ODP writes
            (:mod:`etl.hudi.table_version`).
        SchemaEvolutionError: the batch changes a column incompatibly.
        ChangeFileError: a partition value the table's partition layout cannot store
            (:mod:`etl.raw_table.partition_values`), or a change keeps a column nothing supplies a value for.
    """
    base_path = state.base_path
    target = _checked_target(batch, config, state)
    tombstones_path = settings.tombstones_of(config)
    reads = _read_stored(spark, batch, config, state, tombstones_path=tombstones_path, cached=cached)
    plan = plan_write(
        reads.changes,
        config,
        has_full_load=batch.has_full_load,
        exists=state.exists,
        tombstones=reads.tombstones,
        stored_order=reads.order,
    )
    writes_tombstones = tombstones_path is not None and batch.has_deletes  # the writer's condition, plan.tombstones set
    stale = count_stale(plan, config.primary_key, config.table_id, writes_tombstones=writes_tombstones)
    plan = stale.plan
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
    return PreparedWrite(
        target=target,
        plan=plan,
        rows=rows,
        operation=rewrite.operation if rewrite is not None else plan.operation,
        choice=choice,
        rewrite=rewrite.counts if rewrite is not None else None,
        stale=stale,
        tombstones_path=tombstones_path,
        read_tombstones=reads.tombstones is not None,
    )


def _checked_target(batch: ChangeBatch, config: TableConfig, state: HudiTableState) -> HudiTarget:
    """The table's Hudi target in its stored partition layout, once the table's version and the batch's partition
    values are known to be writable."""
    check_table_version(
        state.table_version,
        label=config.table_id,
        base_path=state.base_path,
        catalog_name=f"{config.database}.{config.target_table}",
        replay=True,
    )
    target = HudiTarget.from_table(config).with_stored_layout(state.encoded_partitions)
    check_partition_values(batch.changes, config.partition_by, config.table_id, encoded=target.encode_partitions)
    return target


def _read_stored(
    spark: SparkSession,
    batch: ChangeBatch,
    config: TableConfig,
    state: HudiTableState,
    *,
    tombstones_path: str | None,
    cached: ExitStack,
) -> StoredReads:
    """The reads before the plan (``tombstones_path``: the table's tombstone table, if it keeps one); each frame they
    cache is unpersisted when ``cached`` closes.

    Raises:
        ChangeFileError: a change keeps a column nothing supplies a value for (:mod:`etl.raw_table.kept_values`).
    """
    exists = state.exists
    # lazy: read after this batch's deletes were added; a key whose last change is a delete has no upsert to drop
    reads = tombstones_path is not None and exists and not batch.has_full_load
    tombstones = read_tombstones(spark, tombstones_path, config.primary_key, one_task=batch.one_task) if reads else None
    changes = batch.changes
    if batch.kept_columns:
        read_stored = exists and not batch.has_full_load  # a full load replaces what is stored
        changes, filled = resolve_kept(
            spark,
            changes,
            config,
            state.base_path,
            columns=batch.kept_columns,
            read_stored=read_stored,
            tombstones=tombstones,
        )
        cached.callback(filled.unpersist)
    order = None
    if reads_stored_order(config, exists=exists, has_full_load=batch.has_full_load, has_deletes=batch.has_deletes):
        order = read_stored_order(spark, changes, config, state.base_path)
        if order is not None:
            cached.callback(order.unpersist)
    return StoredReads(changes, tombstones, order)
