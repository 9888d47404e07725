"""Plain file drops (``format: files``): CSV with a header row, JSON lines, or Parquet, without CDC
operations -> change frame.

Every row is an upsert of its key: in ``mode: current`` the last row of a key wins (by the
configured ordering column when there is one, else by file key, then row position), in
``mode: historical`` every row is appended. Nothing is ever deleted by a plain file. Column names
are matched case-insensitively; configured ``columns`` types are applied with the readers' strict cast
(:mod:`etl.readers.typed_values`), and a value the type cannot hold exactly fails the file with its
row's key, column and value instead of becoming NULL or being rounded.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import reduce

from py4j.protocol import Py4JJavaError
from pyspark.errors.exceptions.captured import CapturedException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from etl.change_frame import FILE, FILE_ORDER, INSERT, KEEP, OP, ORDERING, ROW, with_sequence
from etl.errors import ChangeFileError
from etl.readers.common import ERROR, SourceFile, expected_columns, keep_marks, missing_columns_of, row_error
from etl.readers.dms import _configured_name, ordering_of
from etl.readers.event_horizon import EventTimeHorizon
from etl.readers.new_columns import file_columns_rule, refusal, undeclared
from etl.readers.one_scan import FULL_LOAD, by_schema, parquet_scan, parquet_schemas
from etl.readers.typed_values import strict_cast
from odp.config.models import NewColumns, TableConfig

JSON_SUFFIXES = (".json", ".jsonl", ".json.gz", ".jsonl.gz")
CSV_SUFFIXES = (".csv", ".csv.gz")


def _is_parquet(source: SourceFile) -> bool:
    return not source.name.lower().endswith(CSV_SUFFIXES + JSON_SUFFIXES)


def _load(spark: SparkSession, source: SourceFile) -> DataFrame:
    """A CSV or JSON-lines file read on its own (its header / fields are its columns), with its file columns."""
    name = source.name.lower()
    kind = "CSV" if name.endswith(CSV_SUFFIXES) else "JSON"
    try:
        if kind == "CSV":
            frame = spark.read.csv(source.uri, header=True, inferSchema=False, mode="FAILFAST")
        else:
            frame = spark.read.json(source.uri, mode="FAILFAST")
        frame.count()  # reads the file now, so a malformed line is named with its file
    except (CapturedException, Py4JJavaError) as error:
        reason = str(error).strip().splitlines()[0][:300]
        raise ChangeFileError(source.key, f"unreadable {kind}: {reason}") from error
    return frame.select(
        *[F.col(f"`{column}`").alias(column.lower()) for column in frame.columns],
        F.lit(source.key).alias(FILE),
        F.lit(source.order).alias(FILE_ORDER),
        F.monotonically_increasing_id().alias(ROW),
    )


def _typed(frame: DataFrame, config: TableConfig) -> DataFrame:
    """The frame with its configured types, cast strictly (:func:`etl.readers.typed_values.strict_cast`).

    Raises:
        ChangeFileError: a value its type cannot hold exactly; names the file (the first in file order with one),
            the row by its key (a plain file's row position is not known here), the column and the value.
    """
    declared = {name.lower(): kind for name, kind in (config.columns or {}).items()}
    cast = {n: strict_cast(F.col(n), frame.schema[n].dataType, declared[n], n) for n in frame.columns if n in declared}
    if cast:
        keys = [key.lower() for key in config.primary_key]
        first = (
            frame.select(FILE, FILE_ORDER, *keys, F.coalesce(*[error for _, error in cast.values()]).alias("_odp_why"))
            .where(F.col("_odp_why").isNotNull())
            .orderBy(FILE_ORDER)
            .first()
        )
        if first is not None:
            where = ", ".join(f"{key}={first[key]!r}" for key in keys)
            raise ChangeFileError(first[FILE], f"row {where}, {first['_odp_why']}")
    return frame.select(*[cast[n][0].alias(n) if n in cast else F.col(n) for n in frame.columns])


def _declares_columns(source: SourceFile) -> bool:
    """CSV (with its header) and Parquet declare their columns; JSON lines do not (a key may be left out)."""
    return not source.name.lower().endswith(JSON_SUFFIXES)


def _checked_columns(
    source: SourceFile, names: Sequence[str], config: TableConfig, expected: Sequence[str]
) -> list[str]:
    """Pure: the checks of one file's columns (``names``, lower case), in the order a file is refused; returns
    the expected columns its rows keep stored (``missing_columns: keep``).

    Raises:
        ChangeFileError: a missing key or ordering column, a missing column the table refuses, a column outside
            ``columns`` under ``new_columns: refuse``.
    """
    for key in config.primary_key:
        if key.lower() not in names:
            raise ChangeFileError(source.key, f"missing key column {key}")
    kept = missing_columns_of(source.key, names, expected, config) if _declares_columns(source) else []
    ordering_name = (config.ordering_column or "").lower()
    if ordering_name and ordering_name not in names:
        raise ChangeFileError(source.key, f"missing ordering column {config.ordering_column}")
    extra = undeclared(names, config)
    if extra and config.new_columns is NewColumns.REFUSE:
        raise ChangeFileError(source.key, refusal(config, extra[0]))
    return kept


def _changes_of(
    loaded: DataFrame,
    first: SourceFile,
    config: TableConfig,
    horizon: EventTimeHorizon | None,
    kept: Sequence[str],
) -> DataFrame:
    """The upserts of one read (a CSV / JSON file, or Parquet files sharing a schema; ``first``: its first file),
    whose columns every file passed :func:`_checked_columns` for."""
    names = [n for n in loaded.columns if n not in (FILE, FILE_ORDER, ROW, FULL_LOAD)]
    loaded = file_columns_rule(loaded, names, first.key, config)  # checked per file: refuses nothing here
    frame = _typed(loaded, config)
    names = [n for n in frame.columns if n not in (FILE, FILE_ORDER, ROW, FULL_LOAD)]
    ordering_name = (config.ordering_column or "").lower()
    # The DMS encoding of ordering values (numbers and times compare as such, never as free text); a value
    # that cannot be ordered fails the file with its row (etl.change_counts raises the first _odp_error).
    ordering, ordering_error = (
        ordering_of(
            F.col(ordering_name),
            frame.schema[ordering_name].dataType,
            ordering_name,
            required=F.lit(True),
            horizon=horizon,
        )
        if ordering_name
        else (F.lit(""), None)
    )
    return frame.select(
        F.lit(INSERT).alias(OP),
        F.coalesce(ordering, F.lit("")).alias(ORDERING),
        row_error([ordering_error] if ordering_error is not None else []).alias(ERROR),
        F.col(FILE),
        F.col(FILE_ORDER),
        F.col(ROW),
        *[F.col(n) for n in names],
        *([keep_marks([_configured_name(name, config) for name in kept]).alias(KEEP)] if kept else []),
    )


def read_plain_files(
    spark: SparkSession,
    files: Sequence[SourceFile],
    config: TableConfig,
    horizon: EventTimeHorizon | None = None,
    *,
    stored_columns: Sequence[str] = (),
) -> DataFrame:
    """Every file's rows as upserts in one frame (columns unioned by name; new columns null elsewhere).
    ``horizon``: the event times a timestamp / date ordering column may hold (None: any). ``stored_columns``:
    the stored table's data columns, what a CSV or Parquet file of a table without ``columns`` must carry.
    Parquet files are read in one scan per distinct schema (:mod:`etl.readers.one_scan`, footers checked per file
    first); CSV and JSON files one by one (each file's header / fields are its columns).

    Raises:
        ChangeFileError: an unreadable file, a missing key or ordering column, a value its type cannot hold, a
            column outside ``columns`` under ``new_columns: refuse`` (:mod:`etl.readers.new_columns`), a missing
            column the table's ``missing_columns`` refuses.
    """
    expected = expected_columns(config, stored_columns)
    ordered = sorted(files, key=lambda f: f.order)
    parquet_files = [source for source in ordered if _is_parquet(source)]
    schemas = dict(zip(parquet_files, parquet_schemas(spark, parquet_files), strict=True)) if parquet_files else {}
    kept_of: dict[str, list[str]] = {}
    frames = []
    for source in ordered:  # every file's columns checked in file order: the first bad file is named
        if source in schemas:
            names = [name.lower() for name in schemas[source].fieldNames()]
            kept_of[schemas[source].json()] = _checked_columns(source, names, config, expected)
            continue
        loaded = _load(spark, source)
        kept = _checked_columns(source, loaded.columns, config, expected)
        frames.append(_changes_of(loaded, source, config, horizon, kept))
    for schema, group in by_schema(parquet_files, [schemas[source] for source in parquet_files]):
        frames.append(
            _changes_of(parquet_scan(spark, schema, group), group[0], config, horizon, kept_of[schema.json()])
        )
    frame = reduce(lambda left, right: left.unionByName(right, allowMissingColumns=True), frames)
    return with_sequence(frame.toDF(*[_configured_name(name, config) for name in frame.columns]))
