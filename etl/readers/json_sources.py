"""Debezium and DynamoDB-stream files -> change frame, and the executor-side parse every text format shares.

Files are read whole on the executors as bytes (one task per file, so row positions are exact; gzip is
recognised by its magic bytes, whatever the extension, and text is decoded strictly in the table's
encoding) and parsed by the pure functions of :mod:`etl.readers.records` (JSON) or
:mod:`etl.readers.csv_records` (DMS CSV). A file that does not parse yields one error record naming
its place, so nothing raises on an executor. Column types come from the table's configured ``columns``;
without them, from the Debezium schema envelope or the values themselves (widest type seen wins).
Values that do not convert to their type are errors (file, row, column, value), never NULL.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from etl.change_frame import FILE, FILE_ORDER, OP, ORDERING, ROW, with_sequence
from etl.readers.common import ERROR, SourceFile, row_error, strict_cast
from etl.readers.records import ParsedChange, parse_content
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
ContentParser = Callable[[bytes], Iterable[ParsedChange]]


def widest(kinds: set[str]) -> str:
    """The one Spark type that holds every inferred kind of a column."""
    if not kinds:
        return "string"
    if len(kinds) == 1:
        return next(iter(kinds))
    if "string" in kinds or "boolean" in kinds or not kinds <= set(_RANK):
        return "string"
    return max(kinds, key=_RANK.__getitem__)


def _rows(source: SourceFile, parse: ContentParser) -> Callable[[tuple[str, bytes]], Iterator[tuple]]:
    order, key = source.order, source.key

    def rows(pair: tuple[str, bytes]) -> Iterator[tuple]:
        for change in parse(pair[1]):
            yield (order, key, change.row, change.op, change.ordering, change.error, change.values, change.types)

    return rows


def parsed_changes(
    spark: SparkSession, files: Sequence[SourceFile], parser_of: Callable[[SourceFile], ContentParser]
) -> DataFrame:
    """Every file parsed on the executors (one task per file) into :data:`PARSED_SCHEMA` rows."""
    context = spark.sparkContext
    rdds = [
        context.binaryFiles(source.uri, minPartitions=1).flatMap(_rows(source, parser_of(source)))
        for source in sorted(files, key=lambda f: f.order)
    ]
    return spark.createDataFrame(context.union(rdds), PARSED_SCHEMA)


def typed_values(parsed: DataFrame, columns: dict[str, str], names: dict[str, str] | None = None) -> tuple[list, list]:
    """(columns cast to their declared types, their conversion errors) from the text values map.

    ``names`` maps a configured column to its key in the values map (default: the same name).
    """
    data, errors = [], []
    for name, kind in columns.items():
        value, error = strict_cast(F.col(VALUES).getItem((names or {}).get(name, name)), T.StringType(), kind, name)
        data.append(value.alias(name))
        errors.append(error)
    return data, errors


def _read(spark: SparkSession, files: Sequence[SourceFile], config: TableConfig) -> DataFrame:
    keys = tuple(config.primary_key)
    source_format, encoding = config.format.value, config.encoding
    shape = config.debezium_shape.value if config.debezium_shape else None

    def parser_of(_: SourceFile) -> ContentParser:
        return lambda data: parse_content(data, source_format, keys, encoding=encoding, shape=shape)

    parsed = parsed_changes(spark, files, parser_of)
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
    data, errors = typed_values(parsed, columns)
    frame = parsed.select(
        OP,
        F.coalesce(F.col(ORDERING), F.lit("")).alias(ORDERING),
        FILE,
        FILE_ORDER,
        ROW,
        F.coalesce(F.col(ERROR), row_error(errors)).alias(ERROR),
        *data,
    )
    return with_sequence(frame)


def read_debezium(spark: SparkSession, files: Sequence[SourceFile], config: TableConfig) -> DataFrame:
    """Debezium JSON (Kafka Connect S3 sink): envelopes or flattened records, with or without the schema."""
    return _read(spark, files, config)


def read_dynamodb(spark: SparkSession, files: Sequence[SourceFile], config: TableConfig) -> DataFrame:
    """DynamoDB stream records, one JSON record per line (Kinesis Data Streams / Firehose delivery)."""
    return _read(spark, files, config)
