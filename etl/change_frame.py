"""The canonical change frame and the pure change logic over it.

Every reader turns its source files into the same frame: one row per change with

- ``_odp_op``: ``I`` insert, ``U`` update, ``D`` delete (deletes carry the key and, where the
  source has it, the last row image);
- ``_odp_ordering``: the source's ordering value as sortable text (DMS: the configured column;
  Debezium: ``source.ts_ms`` then the log position; DynamoDB: ApproximateCreationDateTime in
  milliseconds then the sequence number);
- ``_odp_file``: the staging key of the file, ``_odp_file_order``: its place among the batch's files
  (key order), ``_odp_row``: the row position inside the file;
- ``_odp_seq``: ordering, then file key, then row position in one sortable string (space separated). It is the Hudi
  ordering (precombine) field, so a late change never overwrites a newer one, and part of the
  record key of historical tables, so every change is kept once;
- ``_odp_keep`` (optional): the columns whose stored value the change leaves as it is (a Debezium
  unavailable-value placeholder: Postgres TOAST; a column missing from a file with ``missing_columns: keep``),
  resolved by :func:`fill_kept` before the write;
- the key and data columns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

OP = "_odp_op"
ORDERING = "_odp_ordering"
FILE = "_odp_file"
FILE_ORDER = "_odp_file_order"
ROW = "_odp_row"
SEQ = "_odp_seq"
KEEP = "_odp_keep"  # array<string>: columns whose stored value stays (NULL or empty: none)
STORED = "_odp_stored"  # transient: a stored row (or tombstone) of a key, placed in the key's event-time order
UNRESOLVED = "_odp_unresolved"  # transient: kept columns nothing supplied a value for
LATER_STORED = "_odp_later_stored"  # transient: a stored row or tombstone newer than the change (it will lose)
IS_DELETED = "_hoodie_is_deleted"  # Hudi's own delete marker: deletes travel in the upsert commit
META_COLUMNS = (OP, ORDERING, FILE, FILE_ORDER, ROW, SEQ, KEEP)
# Columns a historical table keeps from the change frame (op and ordering travel with every change).
HISTORY_COLUMNS = (OP, ORDERING, SEQ)

INSERT, UPDATE, DELETE = "I", "U", "D"
OPS = (INSERT, UPDATE, DELETE)
ROW_DIGITS = 12
SEQ_SEPARATOR = " "


def sequence_column(ordering: Column, file: Column, row: Column) -> Column:
    """``ordering file row`` with the row zero-padded: sorts like (ordering, file key, row).

    The separator is a space, below every character of the ordering values, so an empty ordering (a
    full-load row without one) sorts before any change that has one, and ``5`` before ``50``.
    """
    return F.concat_ws(
        SEQ_SEPARATOR,
        F.coalesce(ordering, F.lit("")),
        file,
        F.lpad(row.cast("string"), ROW_DIGITS, "0"),
    )


def with_sequence(frame: DataFrame) -> DataFrame:
    """Add ``_odp_seq`` from the ordering, file and row columns."""
    return frame.withColumn(SEQ, sequence_column(F.col(ORDERING), F.col(FILE), F.col(ROW)))


def data_columns(frame: DataFrame) -> list[str]:
    """The key and data columns of a change frame (everything but the ``_odp_`` columns)."""
    return [name for name in frame.columns if name not in META_COLUMNS and name != IS_DELETED]


def latest_per_key(keys: Sequence[str]) -> Callable[[DataFrame], DataFrame]:
    """Keep the last change of each key by (ordering, file order, row position).

    Insert then delete leaves the delete (so the key ends up absent), delete then insert leaves the
    insert, several updates leave the last.
    """

    def transform(frame: DataFrame) -> DataFrame:
        window = Window.partitionBy(*keys).orderBy(
            F.col(ORDERING).desc_nulls_last(), F.col(FILE_ORDER).desc(), F.col(ROW).desc()
        )
        return frame.withColumn("_odp_rank", F.row_number().over(window)).where("_odp_rank = 1").drop("_odp_rank")

    return transform


def for_current_table(frame: DataFrame) -> DataFrame:
    """Rows for a current-state upsert: data columns, ``_odp_seq``, and Hudi's delete marker."""
    return frame.select(*data_columns(frame), SEQ, (F.col(OP) == F.lit(DELETE)).alias(IS_DELETED))


def for_historical_table(frame: DataFrame) -> DataFrame:
    """Rows for a historical table: every change with its op and ordering; nothing is deleted."""
    return frame.select(*data_columns(frame), *HISTORY_COLUMNS)


def surviving_rows(frame: DataFrame) -> DataFrame:
    """Latest changes that leave a row (not deletes): what a full load writes."""
    return frame.where(F.col(OP) != F.lit(DELETE))


def kept(name: str) -> Column:
    """True where a change keeps the stored value of column ``name``."""
    return F.coalesce(F.array_contains(F.col(KEEP), name), F.lit(False))


def fill_kept(
    keys: Sequence[str], columns: Sequence[str], stored: DataFrame | None = None
) -> Callable[[DataFrame], DataFrame]:
    """Give every kept cell (:data:`KEEP`) the value of its column at the key's nearest earlier change in event-time
    order (``_odp_seq``) that carries the column: an earlier change of the batch or ``stored`` (the stored row of the
    key, or every stored change of a historical table, with ``_odp_seq`` and ``_odp_op``; tombstones as deletes),
    whichever is later. A delete in between leaves nothing to keep. A kept cell nothing supplies stays NULL and is
    named in :data:`UNRESOLVED`; :data:`LATER_STORED` is true for a change older than something stored for its key
    (event-time ordering drops it, so it needs no value). ``columns``: the columns any change keeps.

    A late change therefore never brings back an older value: a batch's earlier change loses against a newer
    stored row, and a stored row newer than the change is never used for it.
    """

    def transform(frame: DataFrame) -> DataFrame:
        both = frame.withColumn(STORED, F.lit(False))
        for name in columns:
            if name not in both.columns:
                both = both.withColumn(name, F.lit(None).cast("string"))
        if stored is not None:
            both = both.unionByName(stored.withColumn(STORED, F.lit(True)), allowMissingColumns=True)
        key = Window.partitionBy(*keys)
        earlier = key.orderBy(SEQ).rowsBetween(Window.unboundedPreceding, -1)
        barrier = F.last(F.when(F.col(OP) == F.lit(DELETE), F.col(SEQ)), ignorenulls=True).over(earlier)
        values, unresolved = {}, []
        for name in columns:
            carrier = F.when(
                ~kept(name) & (F.col(OP) != F.lit(DELETE)), F.struct(F.col(SEQ).alias("s"), F.col(name).alias("v"))
            )
            source = F.last(carrier, ignorenulls=True).over(earlier)
            found = source.isNotNull() & (barrier.isNull() | (source["s"] > barrier))
            values[name] = F.when(kept(name), F.when(found, source["v"])).otherwise(F.col(name))
            unresolved.append(F.when(kept(name) & ~found, F.lit(name)))
        later = F.max(F.when(F.col(STORED), F.col(SEQ))).over(key) > F.col(SEQ)
        filled = both.select(
            *[values.get(name, F.col(name)).alias(name) for name in both.columns],
            F.filter(F.array(*unresolved), lambda name: name.isNotNull()).alias(UNRESOLVED),
            F.coalesce(later, F.lit(False)).alias(LATER_STORED),
        )
        return filled.where(~F.col(STORED)).drop(STORED)

    return transform
