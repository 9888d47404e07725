"""AWS DMS S3-target files (Parquet or CSV, gzip or not) -> change frame.

Full-load files (LOAD*) may lack the ``Op`` column (every row is an insert); CDC files must have it.
DMS upper-cases column names when the task says so; names are matched case-insensitively and
written as configured (lower case when not configured). Ordering: the configured column (validated
per row, see :func:`ordering_of`), then the file key, then the row position.

Parquet is read by Spark, a table's files in one scan per distinct schema (:mod:`etl.readers.one_scan`: footers
checked per file first); CSV is parsed per file on the executors (:mod:`etl.readers.csv_records`):
header or not, every line's field count checked, strict decoding. Declared column types are enforced
on both (:func:`etl.readers.typed_values.strict_cast`).
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from etl.change_frame import FILE, FILE_ORDER, INSERT, KEEP, OP, ORDERING, ROW, with_sequence
from etl.errors import ChangeFileError, TableConfigError
from etl.readers.common import (
    ERROR,
    SourceFile,
    TableRead,
    expected_columns,
    keep_marks,
    missing_columns_of,
    row_error,
)
from etl.readers.csv_records import CsvLayout, csv_content_changes
from etl.readers.event_horizon import EventTimeHorizon
from etl.readers.json_sources import parsed_changes
from etl.readers.new_columns import DROPPED, DROPPED_TYPE, file_columns_rule, refusal, undeclared
from etl.readers.one_scan import FULL_LOAD, Scan, by_schema, parquet_scan, parquet_schemas, union_scans
from etl.readers.typed_values import spark_type, strict_cast, typed_values
from odp.config.models import NewColumns, TableConfig

OP_SOURCE = "op"
ORDERING_DIGITS = 20
# $AR_H_CHANGE_SEQ (DMS's change sequence) is 35 digits: digit text is padded to at least that, so a value
# stored by an earlier release (unpadded 35 digits) and a new one compare the same way.
SEQUENCE_TEXT_DIGITS = 35
_TIMESTAMP_TEXT = "yyyy-MM-dd HH:mm:ss.SSSSSS"


def horizon_error(column: Column, name: str, horizon: EventTimeHorizon | None) -> Column:
    """``ordering column <name>: event time <t> is later than the horizon ...`` (or earlier than the floor),
    else NULL, for a timestamp or date ordering ``column`` (read in the session time zone: UTC)."""
    if horizon is None:
        return F.lit(None).cast("string")
    moment = column.cast("timestamp")
    shown = F.concat(F.lit(f"ordering column {name}: event time "), F.date_format(moment, "yyyy-MM-dd HH:mm:ss"))
    latest = F.lit(horizon.latest.strftime("%Y-%m-%d %H:%M:%S.%f")).cast("timestamp")
    later = F.when(moment > latest, F.concat(shown, F.lit(horizon.later_text)))
    if horizon.floor is None:
        return later
    floor = F.lit(horizon.floor.strftime("%Y-%m-%d %H:%M:%S.%f")).cast("timestamp")
    return F.coalesce(later, F.when(moment < floor, F.concat(shown, F.lit(horizon.earlier_text))))


def ordering_of(
    column: Column, kind: T.DataType, name: str, *, required: Column, horizon: EventTimeHorizon | None = None
) -> tuple[Column, Column]:
    """(sortable text, error or NULL) of a DMS ordering value; one encoding per type, so values compare as
    numbers or times, never as free text.

    - integers: zero-padded to 20 digits (negative values are errors);
    - timestamps / dates: ``yyyy-MM-dd HH:mm:ss.SSSSSS`` (what DMS's TimestampColumnName writes); outside
      ``horizon`` (None: any time) an error (:func:`horizon_error`). Integers and digit text are sequences,
      not times: no horizon;
    - text: must be digits (the DMS change sequence), padded to at least 35; anything else is an error
      (declare a time column ``timestamp`` in ``columns``);
    - other types are errors. A NULL ordering is an error where ``required`` (CDC rows), empty otherwise.
    """
    shown = F.substring(column.cast("string"), 1, 100)
    prefix = f"ordering column {name}: value '"
    if isinstance(kind, T.IntegralType):
        text = F.lpad(column.cast("string"), ORDERING_DIGITS, "0")
        error = F.when(column < 0, F.concat(F.lit(prefix), shown, F.lit("' is negative")))
    elif isinstance(kind, T.TimestampType | T.TimestampNTZType | T.DateType):
        text, error = F.date_format(column, _TIMESTAMP_TEXT), horizon_error(column, name, horizon)
    elif isinstance(kind, T.StringType):
        text = F.when(F.length(column) < SEQUENCE_TEXT_DIGITS, F.lpad(column, SEQUENCE_TEXT_DIGITS, "0")).otherwise(
            column
        )
        error = F.when(
            ~column.rlike("^[0-9]+$"),
            F.concat(
                F.lit(prefix),
                shown,
                F.lit("' is not a digit sequence (declare a time column as timestamp in columns)"),
            ),
        )
    else:
        why = f"ordering column {name} has type {kind.simpleString()}: use an integer, timestamp or digit-text column"
        return F.lit(""), F.lit(why)
    missing = F.when(column.isNull() & required, F.lit(f"ordering column {name} is NULL"))
    return F.coalesce(text, F.lit("")), F.coalesce(missing, error)


def _file_columns_checked(
    source: SourceFile, names: Sequence[str], config: TableConfig, expected: Sequence[str]
) -> list[str]:
    """Pure: the checks of one Parquet file's declared columns (``names``, lower case, from its footer), in the
    order a file is refused; returns the expected columns its changes keep stored (``missing_columns: keep``).

    Raises:
        ChangeFileError: a column outside ``columns`` under ``new_columns: refuse``, a missing key column, a
            missing column the table refuses, no Op column in a CDC file, no ordering column in a CDC file.
    """
    extra = undeclared([name for name in names if name != OP_SOURCE], config)
    if extra and config.new_columns is NewColumns.REFUSE:
        raise ChangeFileError(source.key, refusal(config, extra[0]))
    for key in config.primary_key:
        if key.lower() not in names:
            raise ChangeFileError(source.key, f"missing key column {key}")
    kept = missing_columns_of(source.key, names, expected, config)
    if OP_SOURCE not in names and not source.is_full_load:
        raise ChangeFileError(source.key, "missing Op column in a CDC file")
    ordering_name = (config.ordering_column or "").lower()
    if ordering_name and ordering_name not in names and not source.is_full_load:
        raise ChangeFileError(source.key, f"missing ordering column {config.ordering_column}")
    return kept


def _parquet_frames(
    spark: SparkSession,
    files: Sequence[SourceFile],
    config: TableConfig,
    horizon: EventTimeHorizon | None,
    expected: Sequence[str],
) -> list[Scan]:
    """The change frames of the Parquet files with their files: every footer checked in file order (the first bad
    file is named), then one scan per distinct schema (:mod:`etl.readers.one_scan`), usually one for the table."""
    schemas = parquet_schemas(spark, files)
    kept_of: dict[str, list[str]] = {}
    for source, schema in zip(files, schemas, strict=True):
        names = [name.lower() for name in schema.fieldNames()]
        kept_of[schema.json()] = _file_columns_checked(source, names, config, expected)
    frames = []
    for schema, group in by_schema(files, schemas):
        frame = parquet_scan(spark, schema, group).withColumn(ERROR, F.lit(None).cast("string"))
        data = [name.lower() for name in schema.fieldNames() if name.lower() != OP_SOURCE]
        frame = file_columns_rule(frame, data, group[0].key, config)
        frames.append((_changes_of(frame, config, horizon, kept=kept_of[schema.json()], parquet=True), group))
    return frames


def _is_csv(source: SourceFile) -> bool:
    return ".csv" in source.name.lower()


def _csv_frame(spark: SparkSession, files: Sequence[SourceFile], config: TableConfig) -> DataFrame:
    """Every CSV file parsed per file; declared columns typed strictly; ``op`` and ``_odp_error`` beside them."""
    if not config.columns:
        raise TableConfigError(f"{config.table_id}: CSV files need the table's columns in its configuration")
    layout = CsvLayout.of(config, [_configured_name(name.lower(), config) for name in config.columns])

    def parser_of(source: SourceFile):
        full_load = source.is_full_load
        return lambda data: csv_content_changes(data, layout, is_full_load=full_load)

    parsed = parsed_changes(spark, files, parser_of)
    data, errors = typed_values({name.lower(): kind for name, kind in config.columns.items()})
    full_loads = [source.key for source in files if source.is_full_load]
    return parsed.select(
        F.col(OP).alias(OP_SOURCE),
        FILE,
        FILE_ORDER,
        ROW,
        F.col(FILE).isin(full_loads).alias(FULL_LOAD),
        F.coalesce(F.col(ERROR), row_error(errors)).alias(ERROR),
        *data,
        F.col(KEEP),
    )


def _op_of(present: set[str], *, parquet: bool) -> Column:
    """The change's op: ``Op`` (an empty one of a Parquet full-load row an insert), or an insert when no file of the
    scan has ``Op`` (every one is a full load, checked per file)."""
    if OP_SOURCE not in present:
        return F.lit(INSERT)
    op = F.upper(F.trim(F.col(OP_SOURCE)))
    return F.when(F.col(FULL_LOAD) & (op.isNull() | (op == "")), F.lit(INSERT)).otherwise(op) if parquet else op


def _typed_columns(frame: DataFrame, declared: dict[str, str]) -> tuple[dict[str, Column], list[Column]]:
    """Each data column of the scan, cast strictly to its declared type where it has one, and the cast errors."""
    typed: dict[str, Column] = {}
    errors: list[Column] = []
    for name in frame.columns:
        if name in (OP_SOURCE, ROW, ERROR, FILE, FILE_ORDER, FULL_LOAD, DROPPED, KEEP):
            continue
        if name in declared:
            typed[name], error = strict_cast(F.col(name), frame.schema[name].dataType, declared[name], name)
            errors.append(error)
        else:
            typed[name] = F.col(name)
    return typed, errors


def _ordering(
    frame: DataFrame,
    config: TableConfig,
    typed: dict[str, Column],
    declared: dict[str, str],
    horizon: EventTimeHorizon | None,
    *,
    parquet: bool,
) -> tuple[Column, Column | None]:
    """The change's ordering (and its error): the configured column encoded by :func:`ordering_of`, or empty for a
    Parquet scan of full loads without it (checked per file).

    Raises:
        ChangeFileError: CSV: the ordering column is not among the configured columns.
    """
    name = (config.ordering_column or "").lower()
    if name and name in frame.columns:
        kind = spark_type(declared[name]) if name in declared else frame.schema[name].dataType
        return ordering_of(typed[name], kind, config.ordering_column, required=~F.col(FULL_LOAD), horizon=horizon)
    if name and not parquet:
        raise ChangeFileError("CSV", f"missing ordering column {config.ordering_column}")
    return F.lit(""), None


def _changes_of(
    frame: DataFrame,
    config: TableConfig,
    horizon: EventTimeHorizon | None,
    *,
    kept: Sequence[str] = (),
    parquet: bool,
) -> DataFrame:
    """The change frame of one scan: Parquet files sharing a schema (``parquet``: columns checked per file by
    :func:`_file_columns_checked`, typed here, an empty Op of a full-load row an insert, ``kept``: the columns
    every change keeps stored), or every CSV file (already typed, ``op`` set for full-load rows, kept columns
    marked per file by the parser). Both carry :data:`FILE`, :data:`FILE_ORDER`, :data:`ROW` and :data:`FULL_LOAD`.

    Raises:
        ChangeFileError: CSV: a key or ordering column outside the configured columns.
    """
    present = set(frame.columns)
    if not parquet:
        for key in config.primary_key:
            if key.lower() not in present:
                raise ChangeFileError("CSV", f"missing key column {key}")
    declared = {name.lower(): kind for name, kind in (config.columns or {}).items()} if parquet else {}
    typed, errors = _typed_columns(frame, declared)
    ordering, ordering_error = _ordering(frame, config, typed, declared, horizon, parquet=parquet)
    if ordering_error is not None:
        errors.append(ordering_error)
    return frame.select(
        _op_of(present, parquet=parquet).alias(OP),
        ordering.alias(ORDERING),
        F.col(FILE),
        F.col(FILE_ORDER),
        F.col(ROW),
        F.coalesce(F.col(ERROR), row_error(errors)).alias(ERROR),
        (F.col(DROPPED) if DROPPED in present else F.lit(None).cast(DROPPED_TYPE)).alias(DROPPED),
        *[value.alias(name) for name, value in typed.items()],
        *([keep_marks([_configured_name(name, config) for name in kept]).alias(KEEP)] if kept else []),
        *([F.col(KEEP)] if KEEP in frame.columns else []),  # CSV: marked per file by the parser
    )


def read_dms(spark: SparkSession, files: Sequence[SourceFile], read: TableRead) -> DataFrame:
    """Every file's changes in one frame (columns unioned by name; new columns null elsewhere). ``read.horizon``:
    the event times a timestamp / date ordering column may hold. ``read.stored_columns``: what a Parquet file of a
    table without ``columns`` must carry (``missing_columns``).

    Raises:
        ChangeFileError: unreadable Parquet, missing key / ordering / Op column, a column outside ``columns``
            under ``new_columns: refuse`` (:mod:`etl.readers.new_columns`), a missing column refused.
        TableConfigError: CSV without configured columns.
    """
    config, horizon = read.config, read.horizon
    ordered = sorted(files, key=lambda f: f.order)
    expected = [name for name in expected_columns(config, read.stored_columns) if name != OP_SOURCE]
    parquet_files = [source for source in ordered if not _is_csv(source)]
    frames = _parquet_frames(spark, parquet_files, config, horizon, expected) if parquet_files else []
    csv_files = [source for source in ordered if _is_csv(source)]
    if csv_files:
        frames.append((_changes_of(_csv_frame(spark, csv_files, config), config, horizon, parquet=False), csv_files))
    frame = union_scans(frames)
    return with_sequence(frame.toDF(*[_configured_name(name, config) for name in frame.columns]))


def _configured_name(name: str, config: TableConfig) -> str:
    for configured in (*config.primary_key, *(config.columns or {}), *(config.partition_by or ())):
        if configured.lower() == name:
            return configured
    return name
