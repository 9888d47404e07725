"""A micro-batch's values typed as the file readers type them (:mod:`etl.readers.typed_values`).

A value that the readers refuse from a file is a bad record on a stream, with the same words; the stream
has no file or row, so the record is named by its shard and sequence number:
``shard <s> sequence <n>, column amount: value '12.345' is not a valid decimal(12,2)``.
A stored value is never rounded or truncated: only records whose every value passes are written.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from etl.change_frame import FILE, FILE_ORDER, OP, ORDERING, ROW, with_sequence
from etl.readers.typed_values import placed_error, typed_values
from etl.streaming.records import SEQUENCE_NUMBER, SHARD


def record_place() -> Column:
    """``shard <s> sequence <n>``: where a routed record came from (what ``row N`` is in a file)."""
    return F.concat(F.lit("shard "), F.col(SHARD), F.lit(" sequence "), F.col(SEQUENCE_NUMBER))


def cast_error(columns: Mapping[str, str], refusal: Column | None = None) -> Column:
    """The record's ``refusal`` (an attribute outside the table's columns under ``new_columns: refuse``,
    :func:`etl.readers.new_columns.record_columns`), else its first value that does not convert to its column's
    type (:func:`strict_cast`), placed; else NULL."""
    errors = typed_values(columns)[1]
    return placed_error(record_place(), [refusal, *errors] if refusal is not None else errors)


def change_frame(rows: DataFrame, columns: Mapping[str, str]) -> DataFrame:
    """Routed rows of one table that passed :func:`cast_error` -> the canonical change frame (the shard
    stands for the file)."""
    data, _ = typed_values(columns)
    frame = rows.select(
        OP,
        ORDERING,
        F.col(SHARD).alias(FILE),
        F.lit(0).alias(FILE_ORDER),
        F.lit(0).cast("long").alias(ROW),
        *data,
    )
    return with_sequence(frame)
