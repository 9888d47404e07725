"""Debezium and DynamoDB-stream files -> change frame.

Files are read whole on the executors (one task per file, so row positions are exact) and parsed by
:mod:`etl.readers.records`. Column types come from the table's configured ``columns``; without
them, from the Debezium schema envelope or the values themselves (widest type seen wins).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from etl.change_frame import FILE, FILE_ORDER, OP, ORDERING, ROW, with_sequence
from etl.readers.common import ERROR, SourceFile
from etl.readers.records import parse_file
from odp.config.models import TableConfig

VALUES = "_odp_values"
TYPES = "_odp_types"
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
    ]
)
# Widening order for inferred types: a column seen as bigint and double is double, anything else string.
_RANK = {"boolean": 0, "tinyint": 1, "smallint": 2, "int": 3, "bigint": 4, "float": 5, "double": 6}


def widest(kinds: set[str]) -> str:
    """The one Spark type that holds every inferred kind of a column."""
    if not kinds:
        return "string"
    if len(kinds) == 1:
        return next(iter(kinds))
    if "string" in kinds or "boolean" in kinds or not kinds <= set(_RANK):
        return "string"
    return max(kinds, key=_RANK.__getitem__)


def _parse(source: SourceFile, source_format: str, keys: tuple[str, ...]):
    def parse(pair: tuple[str, str]) -> Iterator[tuple]:
        for change in parse_file(pair[1], source_format, keys):
            yield (
                source.order,
                source.key,
                change.row,
                change.op,
                change.ordering,
                change.error,
                change.values,
                change.types,
            )

    return parse


def _read(spark: SparkSession, files: Sequence[SourceFile], config: TableConfig) -> DataFrame:
    context = spark.sparkContext
    keys = tuple(config.primary_key)
    rdds = [
        context.wholeTextFiles(source.uri, minPartitions=1).flatMap(_parse(source, config.format.value, keys))
        for source in sorted(files, key=lambda f: f.order)
    ]
    parsed = spark.createDataFrame(context.union(rdds), PARSED_SCHEMA)
    if config.columns:
        columns = dict(config.columns)
    else:
        seen = parsed.select(F.explode(TYPES)).distinct().collect()
        kinds: dict[str, set[str]] = {}
        for name, kind in seen:
            kinds.setdefault(name, set()).add(kind)
        columns = {name: widest(found) for name, found in sorted(kinds.items())}
        for key in keys:
            columns.setdefault(key, "string")
    data = [F.col(VALUES).getItem(name).cast(kind).alias(name) for name, kind in columns.items()]
    frame = parsed.select(
        OP, F.coalesce(F.col(ORDERING), F.lit("")).alias(ORDERING), FILE, FILE_ORDER, ROW, ERROR, *data
    )
    return with_sequence(frame)


def read_debezium(spark: SparkSession, files: Sequence[SourceFile], config: TableConfig) -> DataFrame:
    """Debezium JSON lines (Kafka Connect S3 sink), with or without the schema envelope."""
    return _read(spark, files, config)


def read_dynamodb(spark: SparkSession, files: Sequence[SourceFile], config: TableConfig) -> DataFrame:
    """DynamoDB stream records, one JSON record per line (Kinesis Data Streams / Firehose delivery)."""
    return _read(spark, files, config)
