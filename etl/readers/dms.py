"""AWS DMS S3-target files (Parquet or CSV) -> change frame.

Full-load files (LOAD*) may lack the ``Op`` column (every row is an insert); CDC files must have it.
DMS upper-cases column names when the task says so; names are matched case-insensitively and
written in lower case (Glue lower-cases them anyway). Ordering: the configured column, then the file
key, then the row position.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import reduce

from py4j.protocol import Py4JJavaError
from pyspark.errors.exceptions.captured import CapturedException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from etl.change_frame import FILE, FILE_ORDER, INSERT, OP, ORDERING, ROW, with_sequence
from etl.errors import ChangeFileError, TableConfigError
from etl.readers.common import SourceFile
from odp.config.models import TableConfig

OP_SOURCE = "op"
ORDERING_DIGITS = 20


def sortable(column: Column, kind: T.DataType) -> Column:
    """Text that sorts like the value: zero-padded integers, ISO timestamps, text as is."""
    if isinstance(kind, T.IntegralType):
        return F.lpad(column.cast("string"), ORDERING_DIGITS, "0")
    if isinstance(kind, T.TimestampType | T.TimestampNTZType):
        return F.date_format(column, "yyyy-MM-dd HH:mm:ss.SSSSSS")
    return column.cast("string")


def _load(spark: SparkSession, source: SourceFile, config: TableConfig) -> DataFrame:
    name = source.name.lower()
    try:
        if name.endswith((".csv", ".csv.gz")):
            return _load_csv(spark, source, config)
        frame = spark.read.parquet(source.uri)
        frame.schema  # noqa: B018 - resolves the footer now, so a broken file is named here
    except (CapturedException, Py4JJavaError) as error:
        kind = "CSV" if ".csv" in name else "Parquet"
        reason = str(error).strip().splitlines()[0][:300]
        raise ChangeFileError(source.key, f"unreadable {kind}: {reason}") from error
    return frame.toDF(*[column.lower() for column in frame.columns])


def _load_csv(spark: SparkSession, source: SourceFile, config: TableConfig) -> DataFrame:
    """DMS CSV has no header: columns are the configured ones, in order, after ``Op`` in CDC files."""
    if not config.columns:
        raise TableConfigError(f"{config.table_id}: CSV files need the table's columns in its configuration")
    names = [name.lower() for name in config.columns]
    frame = spark.read.csv(source.uri, header=False, inferSchema=False)
    if len(frame.columns) == len(names) + 1:
        return frame.toDF(OP_SOURCE, *names)
    if len(frame.columns) == len(names):
        return frame.toDF(*names)
    raise ChangeFileError(
        source.key, f"CSV has {len(frame.columns)} fields, expected {len(names)} columns (+ Op in CDC files)"
    )


def _changes_of(spark: SparkSession, source: SourceFile, config: TableConfig) -> DataFrame:
    frame = _load(spark, source, config).withColumn(ROW, F.monotonically_increasing_id())
    present = set(frame.columns)
    for key in config.primary_key:
        if key.lower() not in present:
            raise ChangeFileError(source.key, f"missing key column {key}")
    if OP_SOURCE in present:
        op = F.upper(F.trim(F.col(OP_SOURCE)))
        if source.is_full_load:
            op = F.when(op.isNull() | (op == ""), F.lit(INSERT)).otherwise(op)
    elif source.is_full_load:
        op = F.lit(INSERT)
    else:
        raise ChangeFileError(source.key, "missing Op column in a CDC file")
    ordering_name = (config.ordering_column or "").lower()
    if ordering_name and ordering_name in present:
        ordering = sortable(F.col(ordering_name), frame.schema[ordering_name].dataType)
    elif ordering_name and not source.is_full_load:
        raise ChangeFileError(source.key, f"missing ordering column {config.ordering_column}")
    else:
        ordering = F.lit("")
    typed = {name.lower(): kind for name, kind in (config.columns or {}).items()}
    data = [
        F.col(name).cast(typed[name]).alias(name) if name in typed else F.col(name)
        for name in frame.columns
        if name not in (OP_SOURCE, ROW)
    ]
    return frame.select(
        op.alias(OP),
        F.coalesce(ordering, F.lit("")).alias(ORDERING),
        F.lit(source.key).alias(FILE),
        F.lit(source.order).alias(FILE_ORDER),
        F.col(ROW),
        *data,
    )


def read_dms(spark: SparkSession, files: Sequence[SourceFile], config: TableConfig) -> DataFrame:
    """Every file's changes in one frame (columns unioned by name; new columns null elsewhere).

    Raises:
        ChangeFileError: unreadable file, missing key / ordering / Op column.
        TableConfigError: CSV without configured columns.
    """
    frames = [_changes_of(spark, source, config) for source in sorted(files, key=lambda f: f.order)]
    frame = reduce(lambda left, right: left.unionByName(right, allowMissingColumns=True), frames)
    return with_sequence(frame.toDF(*[_configured_name(name, config) for name in frame.columns]))


def _configured_name(name: str, config: TableConfig) -> str:
    for configured in (*config.primary_key, *(config.columns or {}), *(config.partition_by or ())):
        if configured.lower() == name:
            return configured
    return name
