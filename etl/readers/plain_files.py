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

import csv
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from py4j.protocol import Py4JJavaError
from pyspark.errors.exceptions.captured import CapturedException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from etl.change_frame import FILE, FILE_ORDER, INSERT, KEEP, OP, ORDERING, ROW, with_sequence
from etl.culprits import find_culprit
from etl.errors import ChangeFileError
from etl.readers.column_names import name_clash
from etl.readers.common import (
    ERROR,
    SourceFile,
    TableRead,
    executor_error,
    expected_columns,
    keep_marks,
    missing_columns_of,
    row_error,
    traced_file_error,
)
from etl.readers.dms import _configured_name, ordering_of
from etl.readers.event_horizon import EventTimeHorizon
from etl.readers.new_columns import files_columns_rule, refusal, undeclared
from etl.readers.one_scan import (
    FULL_LOAD,
    by_schema,
    file_scan,
    line_scan,
    literal_path,
    parquet_scan,
    parquet_schemas,
    union_scans,
)
from etl.readers.typed_values import strict_cast
from odp.config.models import NewColumns, TableConfig

JSON_SUFFIXES = (".json", ".jsonl", ".json.gz", ".jsonl.gz")
CSV_SUFFIXES = (".csv", ".csv.gz")
Result = TypeVar("Result")
FILE_COLUMNS = (FILE, FILE_ORDER, ROW, FULL_LOAD)  # what a scan adds to a file's columns


def _is_parquet(source: SourceFile) -> bool:
    return not source.name.lower().endswith(CSV_SUFFIXES + JSON_SUFFIXES)


def _is_json(source: SourceFile) -> bool:
    return source.name.lower().endswith(JSON_SUFFIXES)


def _source(spark: SparkSession, source: SourceFile) -> Callable[[list[str]], DataFrame]:
    """How Spark reads the file's format: CSV with its header (every value text), JSON lines (types inferred)."""
    if _is_json(source):
        return lambda uris: spark.read.json(uris, mode="FAILFAST")
    return lambda uris: spark.read.csv(uris, header=True, inferSchema=False, mode="FAILFAST")


def _unreadable(spark: SparkSession, files: Sequence[SourceFile], error: Exception) -> ChangeFileError:
    """The file a failed scan of ``files`` fails on (Spark's parse errors do not name their file): the files read
    apart, by bisection (:func:`etl.culprits.find_culprit`: one bad file among 1,000 in about ten reads)."""

    def probe(subset: list[SourceFile]) -> BaseException | None:
        try:
            for group in ([s for s in subset if not _is_json(s)], [s for s in subset if _is_json(s)]):
                if group:
                    _parse_all(_source(spark, group[0])([literal_path(source.uri) for source in group]))
        except (CapturedException, Py4JJavaError) as failure:
            return failure
        return None

    trace = find_culprit(files, probe, error)
    if trace.culprit is None:
        return executor_error(error, files)
    culprit = trace.culprit.item
    return traced_file_error(culprit.key, "JSON" if _is_json(culprit) else "CSV", trace.culprit)


def _parse_all(frame: DataFrame) -> None:
    """Parse every value of every row (one Spark job). A plain ``count()`` would not: Spark prunes the CSV columns
    it does not need, and a malformed line would only fail a later job, naming no file."""
    if frame.columns:
        frame.select(F.max(F.hash(*[F.col(f"`{name}`") for name in frame.columns]))).collect()


def _scanned(spark: SparkSession, files: Sequence[SourceFile], run: Callable[[], Result]) -> Result:
    """``run()`` (a Spark job over ``files``); a read error names the file it fails on (:func:`_unreadable`)."""
    try:
        return run()
    except (CapturedException, Py4JJavaError) as error:
        raise _unreadable(spark, files, error) from error


def _text_shapes(spark: SparkSession, files: Sequence[SourceFile]) -> dict[int, tuple[str | None, list[str]]]:
    """By file order: each CSV / JSON-lines file's first non-blank line (a CSV file's header) and the fields its
    JSON objects name (lower case, sorted as Spark orders an inferred schema). One Spark job over every file."""
    json_orders = [source.order for source in files if _is_json(source)]
    fields = F.when(F.col(FILE_ORDER).isin(json_orders), F.json_object_keys("value"))
    lines = file_scan(spark.read.text, files, F.monotonically_increasing_id()).where(F.trim("value") != "")
    shapes = lines.groupBy(FILE_ORDER).agg(
        F.min_by("value", ROW).alias("first"), F.flatten(F.collect_list(fields)).alias("fields")
    )
    found = {row[FILE_ORDER]: row for row in _scanned(spark, files, shapes.collect)}
    return {
        source.order: (found[source.order]["first"], sorted(set(found[source.order]["fields"])))
        if source.order in found
        else (None, [])
        for source in files
    }


def _text_names(source: SourceFile, shape: tuple[str | None, list[str]]) -> list[str]:
    """Pure: the column names a CSV file's header (as Spark's CSV source splits it) or a JSON-lines file's objects
    declare, as written."""
    if _is_json(source):
        return shape[1]
    return next(csv.reader([shape[0]]), []) if shape[0] is not None else []


def _check_text_names(files: Sequence[SourceFile], shapes: dict[int, tuple[str | None, list[str]]]) -> None:
    """Refuse, in file order, a CSV or JSON-lines file whose names a table cannot hold side by side, before Spark
    reads them (a CSV scan would rename them ``status0`` / ``STATUS1``, a JSON scan fail naming no file).

    Raises:
        ChangeFileError: names the file and both columns (:func:`etl.readers.column_names.name_clash`).
    """
    for source in files:
        clash = name_clash(_text_names(source, shapes[source.order]))
        if clash is not None:
            raise ChangeFileError(source.key, clash)


def _by_header(
    spark: SparkSession, files: Sequence[SourceFile], shapes: dict[int, tuple[str | None, list[str]]]
) -> list[tuple[DataFrame, list[SourceFile]]]:
    """CSV files grouped by their header line (first appearance order), each group one scan (:func:`line_scan`;
    Spark reads the group's header to name its columns: one small job a group)."""
    groups: dict[str | None, list[SourceFile]] = {}
    for source in files:
        groups.setdefault(shapes[source.order][0], []).append(source)
    return [
        (_scanned(spark, group, lambda group=group: line_scan(_source(spark, group[0]), group)), group)
        for group in groups.values()
    ]


def _typed(frame: DataFrame, config: TableConfig) -> DataFrame:
    """The frame with its configured types, cast strictly (:func:`etl.readers.typed_values.strict_cast`).

    Raises:
        ChangeFileError: a value its type cannot hold exactly; names the file (the first in file order with one),
            the row by its key (as plain-file messages always have), the column and the value.
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
    config: TableConfig,
    horizon: EventTimeHorizon | None,
    kept: Sequence[str],
    columns_of: Mapping[int, Sequence[str]],
) -> DataFrame:
    """The upserts of one scan (CSV files sharing a header, every JSON-lines file, or Parquet files sharing a
    schema), whose columns every file passed :func:`_checked_columns` for (``columns_of``: each file's order -> its
    columns; ``kept``: the columns every change of the scan keeps stored)."""
    loaded = files_columns_rule(loaded, columns_of, config)  # checked per file: refuses nothing here
    frame = _typed(loaded, config)
    names = [n for n in frame.columns if n not in FILE_COLUMNS]
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


def read_plain_files(spark: SparkSession, files: Sequence[SourceFile], read: TableRead) -> DataFrame:
    """Every file's rows as upserts in one frame (columns unioned by name; new columns null elsewhere).
    ``read.horizon``: the event times a timestamp / date ordering column may hold. ``read.stored_columns``: what a
    CSV or Parquet file of a table without ``columns`` must carry.

    A format's files are read in one scan, not one by one (:mod:`etl.readers.one_scan`): Parquet one per distinct
    schema (footers checked per file first), CSV one per distinct header line, JSON lines one for every file (the
    schema Spark infers over them all). What each file declares is known first, so the per-file checks run in file
    order: Parquet footers on the driver, and one Spark job over the text files for each CSV file's header and the
    fields each JSON-lines file names (a merged scan alone cannot tell a field a file lacks from one it holds as
    NULL). A file Spark cannot parse is found by reading the scan's files apart (:func:`_unreadable`).

    Raises:
        ChangeFileError: an unreadable file, a missing key or ordering column, a value its type cannot hold, a
            column outside ``columns`` under ``new_columns: refuse`` (:mod:`etl.readers.new_columns`), a missing
            column the table's ``missing_columns`` refuses.
    """
    config, horizon = read.config, read.horizon
    expected = expected_columns(config, read.stored_columns)
    ordered = sorted(files, key=lambda f: f.order)
    parquet_files = [source for source in ordered if _is_parquet(source)]
    schemas = parquet_schemas(spark, parquet_files) if parquet_files else []
    names_of = {
        s.order: [name.lower() for name in schema.fieldNames()]
        for s, schema in zip(parquet_files, schemas, strict=True)
    }
    text_files = [source for source in ordered if not _is_parquet(source)]
    shapes = _text_shapes(spark, text_files) if text_files else {}
    _check_text_names(text_files, shapes)
    csv_scans = _by_header(spark, [source for source in text_files if not _is_json(source)], shapes)
    for scan, group in csv_scans:  # FAILFAST: a malformed line names its file, before any column check
        _scanned(spark, group, lambda scan=scan: _parse_all(scan))
        names_of |= {source.order: [n for n in scan.columns if n not in FILE_COLUMNS] for source in group}
    json_files = [source for source in text_files if _is_json(source)]
    json_scans = (  # Spark's schema inference reads every line (FAILFAST)
        [(_scanned(spark, json_files, lambda: line_scan(_source(spark, json_files[0]), json_files)), json_files)]
        if json_files
        else []
    )
    names_of |= {source.order: sorted({name.lower() for name in shapes[source.order][1]}) for source in json_files}
    # every file's columns checked in file order: the first bad file is named
    kept_of = {source.order: _checked_columns(source, names_of[source.order], config, expected) for source in ordered}
    parquet_scans = [(parquet_scan(spark, schema, group), group) for schema, group in by_schema(parquet_files, schemas)]

    def changes(scan: DataFrame, group: list[SourceFile]) -> DataFrame:
        return _changes_of(scan, config, horizon, kept_of[group[0].order], {s.order: names_of[s.order] for s in group})

    frame = union_scans([(changes(scan, group), group) for scan, group in (*parquet_scans, *csv_scans, *json_scans)])
    return with_sequence(frame.toDF(*[_configured_name(name, config) for name in frame.columns]))
