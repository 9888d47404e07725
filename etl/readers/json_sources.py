"""Debezium and DynamoDB-stream files -> change frame, and the executor-side parse every text format shares.

Files are read whole on the executors as bytes (all of a table's files in one scan, each file whole in one
task, so row positions are exact; gzip is
recognised by its magic bytes, whatever the extension, and text is decoded strictly in the table's
encoding) and parsed by the pure functions of :mod:`etl.readers.records` (JSON) or
:mod:`etl.readers.csv_records` (DMS CSV). A file that does not parse yields one error record naming
its place, so nothing raises on an executor. Column types come from the table's configured ``columns``;
without them, from the Debezium schema envelope or the values themselves (widest type seen wins). A field or
attribute outside ``columns`` follows the table's ``new_columns`` (:mod:`etl.readers.new_columns`).
Values that do not convert to their type are errors (file, row, column, value), never NULL: the strict
cast, its message and the inference are :mod:`etl.readers.typed_values`, which the streaming path shares.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from etl.change_frame import FILE, FILE_ORDER, KEEP, OP, ORDERING, ROW, with_sequence
from etl.readers.common import ERROR, SourceFile, TableRead, row_error
from etl.readers.new_columns import DROPPED, record_columns
from etl.readers.one_scan import binary_scan
from etl.readers.records import ParsedChange, RecordLayout, record_content_changes
from etl.readers.typed_values import TYPES, VALUES, typed_values

PARSED_SCHEMA = T.StructType(
    [
        T.StructField(FILE_ORDER, T.IntegerType()),
        T.StructField(FILE, T.StringType()),
        T.StructField(ROW, T.LongType()),
        T.StructField(OP, T.StringType()),
        T.StructField(ORDERING, T.StringType()),
        T.StructField(ERROR, T.StringType()),
        T.StructField(VALUES, T.MapType(T.StringType(), T.StringType())),
        T.StructField(TYPES, T.MapType(T.StringType(), T.StringType())),
        T.StructField(KEEP, T.ArrayType(T.StringType())),
    ]
)
ContentParser = Callable[[bytes], Iterable[ParsedChange]]


def _rows(source: SourceFile, parse: ContentParser) -> Callable[[bytes], Iterator[tuple]]:
    order, key = source.order, source.key

    def rows(data: bytes) -> Iterator[tuple]:
        for change in parse(data):
            yield (
                order,
                key,
                change.row,
                change.op,
                change.ordering,
                change.error,
                change.values,
                change.types,
                list(change.keep),
            )

    return rows


def parsed_changes(
    spark: SparkSession, files: Sequence[SourceFile], parser_of: Callable[[SourceFile], ContentParser]
) -> DataFrame:
    """Every file parsed on the executors into :data:`PARSED_SCHEMA` rows, all files in one scan
    (:func:`etl.readers.one_scan.binary_scan`: each file whole in one task)."""
    return binary_scan(spark, files, lambda source: _rows(source, parser_of(source)), PARSED_SCHEMA)


def _read(spark: SparkSession, files: Sequence[SourceFile], read: TableRead) -> DataFrame:
    config = read.config
    layout = RecordLayout(
        config.format.value,
        tuple(config.primary_key),
        shape=config.debezium_shape.value if config.debezium_shape else None,
        horizon=read.horizon,
        placeholder=config.unavailable_value_placeholder if config.format.value == "debezium" else None,
        encoding=config.encoding,
    )

    def parser_of(_: SourceFile) -> ContentParser:
        return lambda data: record_content_changes(data, layout)

    parsed = parsed_changes(spark, files, parser_of)
    rule = record_columns(parsed, config)
    data, errors = typed_values(rule.columns)
    frame = parsed.select(
        OP,
        F.coalesce(F.col(ORDERING), F.lit("")).alias(ORDERING),
        FILE,
        FILE_ORDER,
        ROW,
        F.coalesce(F.col(ERROR), row_error([rule.error, *errors])).alias(ERROR),
        rule.dropped.alias(DROPPED),
        *data,
        F.col(KEEP),
    )
    return with_sequence(frame)


def read_debezium(spark: SparkSession, files: Sequence[SourceFile], read: TableRead) -> DataFrame:
    """Debezium JSON (Kafka Connect S3 sink): envelopes or flattened records, with or without the schema.
    ``read.horizon``: the event times (``source.ts_ms``) accepted."""
    return _read(spark, files, read)


def read_dynamodb(spark: SparkSession, files: Sequence[SourceFile], read: TableRead) -> DataFrame:
    """DynamoDB stream records, one JSON record per line (Kinesis Data Streams / Firehose delivery).
    ``read.horizon``: the event times (``ApproximateCreationDateTime``) accepted."""
    return _read(spark, files, read)
