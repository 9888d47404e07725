"""The merged snapshot a table rewrite writes: the stored rows with the run's changes applied as Hudi's upsert would.

The upsert of a current table merges each change into its stored row with ``hoodie.record.merge.mode=
EVENT_TIME_ORDERING`` on ``_odp_seq`` (etl.hudi.options): the stored row stays when its ``_odp_seq`` is greater than
the change's, else the change wins (a tie goes to the change, as in Hudi's event-time merge), and a winning change
with ``_hoodie_is_deleted`` removes the row (a delete older than the stored row loses like any change). The same
rule, in one Spark plan, makes the rows that ``insert_overwrite_table`` writes: the two plans give the same table.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from etl.change_frame import IS_DELETED, SEQ
from etl.hudi.options import WriteOperation
from etl.hudi.schema import HUDI_META_PREFIX
from etl.hudi.target import HudiTarget
from etl.hudi.timeline import HudiTableState
from etl.raw_table import write_strategy
from etl.raw_table.table_size import stored_table
from etl.raw_table.write_strategy import WriteChoice
from odp.config.models import TableConfig, TableMode, TableType
from odp.tracker.statuses import WriteStrategy

logger = logging.getLogger(__name__)

_FROM_BATCH = "_odp_from_batch"


def stored_rows(spark: SparkSession, base_path: str) -> DataFrame:
    """The table's snapshot as data columns (Hudi's meta columns dropped, ``_hoodie_is_deleted`` kept)."""
    snapshot = spark.read.format("hudi").load(base_path)
    return snapshot.select(
        *[name for name in snapshot.columns if not name.startswith(HUDI_META_PREFIX) or name == IS_DELETED]
    )


def stored_row_wins(change: Column, stored: Column) -> Column:
    """Pure: Hudi's event-time rule for one key, true where the stored row stays against the change: its ``_odp_seq``
    (``stored``) is greater than the change's (``change``); a tie goes to the change. Null when nothing is stored."""
    return stored > change


def merged_snapshot(stored: DataFrame, changes: DataFrame, keys: Sequence[str]) -> DataFrame:
    """Pure: the table after ``changes`` (one row per key, table-shaped, with ``_odp_seq`` and ``_hoodie_is_deleted``)
    are applied to ``stored`` by event-time ordering; in ``changes``' columns and types (a column the stored rows
    lack, a new one, is null there)."""
    schema = changes.schema
    older = stored.withColumn(_FROM_BATCH, F.lit(False)).withColumn(IS_DELETED, F.lit(False))
    both = changes.withColumn(_FROM_BATCH, F.lit(True)).unionByName(older, allowMissingColumns=True)
    # stored_row_wins as a ranking: the greater _odp_seq first, and on a tie the change
    window = Window.partitionBy(*keys).orderBy(F.col(SEQ).desc(), F.col(_FROM_BATCH).desc())
    winners = both.withColumn("_odp_rank", F.row_number().over(window)).where("_odp_rank = 1")
    return winners.where(~F.col(IS_DELETED)).select(*[F.col(f.name).cast(f.dataType).alias(f.name) for f in schema])


def choose_for_run(
    spark: SparkSession,
    config: TableConfig,
    target: HudiTarget,
    base_path: str,
    *,
    operation: WriteOperation,
    exists: bool,
    changes: int,
    state: HudiTableState | None = None,
) -> WriteChoice | None:
    """The write choice of a run's upsert into an existing table (None: not an upsert of an existing current table,
    e.g. a full load or a table's first write, which keep their operation). Reads the table's size
    (:func:`etl.raw_table.table_size.stored_table`) only for a COPY_ON_WRITE table and a batch large enough for a
    rewrite to pay off (:func:`etl.raw_table.write_strategy.worth_sizing`). ``state``: the table as the run read it; its
    latest commit's write statistics may recommend MERGE_ON_READ
    (:func:`etl.raw_table.write_strategy.merge_on_read_advice`) whatever the choice, and a table with the simple index
    is told when its size (from the timeline, no listing) has outgrown it
    (:func:`etl.raw_table.write_strategy.simple_index_advice`)."""
    if not exists or operation is not WriteOperation.UPSERT or config.mode is not TableMode.CURRENT:
        return None
    copy_on_write = config.table_type is TableType.COPY_ON_WRITE
    costs = write_strategy.DEFAULT_COSTS  # looked up per run: a test can price a plan
    sized = copy_on_write and write_strategy.worth_sizing(changes, costs)
    choice = write_strategy.choose_write(
        stored_table(spark, base_path) if sized else None,
        changes,
        refused=write_strategy.rewrite_refusal(config, target.index),
        costs=costs,
    )
    last_commit = state.commits[-1] if state is not None and state.commits else None
    advice = write_strategy.merge_on_read_advice(last_commit, copy_on_write=copy_on_write)
    if advice is not None:
        choice = replace(choice, reason=f"{choice.reason}; {advice}", recommend_merge_on_read=True)
    outgrown = None
    if target.simple_index and state is not None:
        outgrown = write_strategy.simple_index_advice(state.rows, state.bytes, partitioned=bool(target.partitions))
    if outgrown is not None:
        choice = replace(choice, reason=f"{choice.reason}; {outgrown}")
    logger.info("%s: %s", config.table_id, choice.reason)
    return choice


@dataclass(frozen=True)
class RewriteCounts:
    """What a rewrite applied, counted as Hudi's upsert counts it (its write statistics count every row a
    rewrite writes as an insert): a change of a key without a stored row is an insert, a change not older than
    its stored row an update (a delete: a delete; a change of partition: an insert and a delete), a change older
    than its stored row nothing."""

    inserts: int
    updates: int
    deletes: int


@dataclass(frozen=True)
class TableRewrite:
    """A run's rewrite: its operation and what it applied (the run's counts)."""

    counts: RewriteCounts
    operation: WriteOperation = WriteOperation.INSERT_OVERWRITE_TABLE


def rewrite_counts(
    stored: DataFrame, changes: DataFrame, keys: Sequence[str], partitions: Sequence[str] = ()
) -> RewriteCounts:
    """The changes' inserts, updates and deletes against the stored rows (one Spark job: the changes joined with
    the stored keys, orderings and partition values)."""
    stored_seq = F.col("_odp_stored_seq")
    was = {name: f"_odp_stored_{index}" for index, name in enumerate(partitions)}
    joined = changes.select(*keys, SEQ, IS_DELETED, *partitions).join(
        stored.select(*keys, F.col(SEQ).alias("_odp_stored_seq"), *[F.col(n).alias(a) for n, a in was.items()]),
        on=list(keys),
        how="left",
    )
    applies = stored_seq.isNotNull() & ~stored_row_wins(F.col(SEQ), stored_seq)  # not older than the stored row
    moves = F.lit(False)
    for name, alias in was.items():
        moves = moves | ~F.col(name).eqNullSafe(F.col(alias))

    def tally(condition: Column) -> Column:
        return F.coalesce(F.sum(F.when(condition, 1).otherwise(0)), F.lit(0))

    deleted, kept = F.col(IS_DELETED), ~F.col(IS_DELETED)
    row = joined.agg(
        tally(stored_seq.isNull() & kept).alias("inserts"),
        tally(applies & kept & ~moves).alias("updates"),
        tally(applies & deleted).alias("deletes"),
        tally(applies & kept & moves).alias("moves"),
    ).first()
    moved = int(row["moves"])
    return RewriteCounts(int(row["inserts"]) + moved, int(row["updates"]), int(row["deletes"]) + moved)


def apply_choice(
    spark: SparkSession, choice: WriteChoice | None, rows: DataFrame, base_path: str, config: TableConfig
) -> tuple[DataFrame, TableRewrite | None]:
    """The rows a run writes and its rewrite: for a table rewrite, the merged snapshot (written with
    ``insert_overwrite_table``) and its counts; else the plan's rows and None (the plan's upsert)."""
    if choice is None or choice.strategy is not WriteStrategy.REWRITE_TABLE:
        return rows, None
    stored, keys = stored_rows(spark, base_path), config.primary_key
    counts = rewrite_counts(stored, rows, keys, config.partition_by)
    return merged_snapshot(stored, rows, keys), TableRewrite(counts)
