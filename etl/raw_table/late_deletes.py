"""Late deletes of MERGE_ON_READ current tables: a delete older than its key's stored row loses, as an update does.

Event-time ordering on ``_odp_seq`` says a change older than the stored row loses, deletes included
(:func:`etl.raw_table.rewrite.stored_row_wins`). Hudi applies it where it merges a change into a base file
(COPY_ON_WRITE, and a MERGE_ON_READ file group small enough to take inserts), and between log records. But a
MERGE_ON_READ file group above ``hoodie.parquet.small.file.limit`` (every file group of a real table: ODP sets 4 MiB)
writes a delete to a delete block of its log, and Hudi's readers (1.0.2, and 0.15.0 as Athena reads) apply a log delete
to the base file's row without comparing orderings; the compaction then makes it permanent. A late CDC file, landing
after a newer change of the key was committed, would so delete a row it should leave.

So a run of an existing MERGE_ON_READ current table whose batch holds deletes reads the stored ``_odp_seq`` of just
the keys it deletes (:func:`etl.raw_table.stored_keys.stored_rows_of_keys`), and its plan drops each delete older than
its key's stored row (:func:`mark_late_deletes`) with the stale changes it already drops: it is counted in
``stale_dropped``, and it leaves no tombstone (it was never committed). A late update needs nothing: Hudi compares
the orderings of a logged record with the base file's.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from etl.change_frame import DELETE, OP, SEQ
from etl.raw_table.rewrite import stored_row_wins
from etl.raw_table.stored_keys import stored_rows_of_keys
from etl.raw_table.tombstones import STALE, newest_per_key
from odp.config.models import TableConfig, TableMode, TableType

_STORED_SEQ = "_odp_stored_seq"


def reads_stored_order(config: TableConfig, *, exists: bool, has_full_load: bool, has_deletes: bool) -> bool:
    """Pure: whether a run reads the stored ``_odp_seq`` of the keys it deletes: an existing MERGE_ON_READ current
    table, a batch with deletes, no full load (it replaces the table). COPY_ON_WRITE merges every delete with the
    ordering rule; a new table has nothing stored."""
    merge_on_read = config.mode is TableMode.CURRENT and config.table_type is TableType.MERGE_ON_READ
    return merge_on_read and exists and has_deletes and not has_full_load


def read_stored_order(spark: SparkSession, changes: DataFrame, config: TableConfig, base_path: str) -> DataFrame | None:
    """The stored ``_odp_seq`` of each key some change of the batch deletes (key columns and ``_odp_seq``, one row per
    key that has a stored row), persisted: the caller unpersists it after the write, so the table is read before
    anything of the run is written. None when no change is a delete (nothing is read)."""
    keys = list(config.primary_key)
    deleted = changes.where(F.col(OP) == F.lit(DELETE)).select(*keys)
    stored = stored_rows_of_keys(spark, base_path, config, deleted, [*keys, SEQ])
    if stored is None:
        return None
    return newest_per_key(stored, keys).persist()


def mark_late_deletes(flagged: DataFrame, stored: DataFrame, keys: Sequence[str]) -> DataFrame:
    """Pure: ``flagged`` (one change per key, with or without ``_odp_stale``) with ``_odp_stale`` true also for a delete
    older than its key's stored row (``stored``: key columns and ``_odp_seq``, one row per key). A tie goes to the
    delete, a key with nothing stored keeps its delete, and inserts and updates are left as they are."""
    stored_seq = stored.select(*keys, F.col(SEQ).alias(_STORED_SEQ))
    loses = F.coalesce(stored_row_wins(F.col(SEQ), F.col(_STORED_SEQ)), F.lit(False))
    late = (F.col(OP) == F.lit(DELETE)) & loses
    stale = (F.col(STALE) | late) if STALE in flagged.columns else late
    joined = flagged.join(stored_seq, on=list(keys), how="left")
    return joined.select(*[name for name in flagged.columns if name != STALE], stale.alias(STALE))
