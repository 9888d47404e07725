"""A table's files of one format in one Spark scan, each row still knowing its file.

Reading every file on its own and unioning the frames makes the plan, the listings and the Spark jobs grow with
the file count (503 one-row DMS files: one schema job, one listing and one plan branch each). Here:

- Parquet: every file's footer is read on the driver (:func:`parquet_schemas`, a few threads, no Spark job), so
  the per-file checks (key / Op / ordering present, ``new_columns``, ``missing_columns``) still see what each file
  declares and an unreadable footer still names its file. Files are grouped by their Spark schema (one group in
  the usual case) and each group is one scan with that schema given (:func:`parquet_scan`), so Spark infers nothing
  again.
- Text formats (DMS CSV, Debezium, DynamoDB): one ``binaryFile`` scan of every file (:func:`binary_scan`), each
  file whole on one executor, parsed by the format's pure parser.

A scanned row's file is found from ``_metadata.file_path`` (the path Spark listed, URI-encoded) mapped back to its
:class:`SourceFile` (:func:`same_file`): :data:`FILE` (the key errors name), :data:`FILE_ORDER` and whether it
is a full-load file. A Parquet row's number in its file is ``_metadata.row_index`` (exact, whatever the splits).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import reduce

from py4j.protocol import Py4JJavaError
from pyspark.errors import AnalysisException
from pyspark.errors.exceptions.captured import CapturedException
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from etl.change_frame import FILE, FILE_ORDER, ROW
from etl.errors import ChangeFileError
from etl.jvm import gateway_without_delay, java_class
from etl.readers.column_names import schema_clash
from etl.readers.common import SourceFile, java_cause

FULL_LOAD = "_odp_full_load"  # transient: the row comes from a full-load file
_PATH = "_odp_path"  # transient: the path Spark read the row from
FOOTER_THREADS = 8  # footers read at once on the driver (S3 latency, not CPU, bounds them)
LISTING_PARALLELISM = "spark.sql.sources.parallelPartitionDiscovery.parallelism"


_SCHEME = r"^[A-Za-z][A-Za-z0-9+.-]*:/*"


def same_file(path: str) -> str:
    """Pure: a path as it is written (a landed file's URI, a ``binaryFile`` row's ``path``), as compared with
    another: without its scheme and leading slashes (``s3://bucket/k`` is ``bucket/k``), nothing decoded. A landed
    URI is the key as it is (Hadoop's path takes the text as it is), so ``a%41`` names the file ``a%41``, not
    ``aA``. :func:`same_file_column` for ``_metadata.file_path``, which Spark reports URI-encoded."""
    return re.sub(_SCHEME, "", path)


def same_file_column(path: Column) -> Column:
    """:func:`same_file` of ``_metadata.file_path``, which Spark reports URI-encoded (``file:/x/a%2541%20b+c`` for
    the file ``/x/a%41 b+c``): percent-escapes decoded exactly. Spark's ``url_decode`` is Java's form decoding,
    which also turns ``+`` into a space, so a ``+`` is protected as ``%2B`` first."""
    return F.call_function("url_decode", F.regexp_replace(F.regexp_replace(path, _SCHEME, ""), r"\+", "%2B"))


def bound_listing_tasks(spark: SparkSession) -> None:
    """Bound Spark's listing job to the application's cores, unless the job's configuration sets it.

    A scan given more than 32 paths lists them with a Spark job of one task per path (up to 10,000): a run of
    1,000 landed files started 1,000 tasks of one ``getFileStatus`` each, 4 to 6 s on 2 cores. With the bound,
    each task lists its share of the paths; on S3 the same requests run on the same cores, without the
    scheduling of a task per file."""
    if not spark.sparkContext.getConf().contains(LISTING_PARALLELISM):
        spark.conf.set(LISTING_PARALLELISM, str(spark.sparkContext.defaultParallelism))


_GLOB = re.compile(r"([\\{}\[\]*?])")


def literal_path(uri: str) -> str:
    """Pure: ``uri`` as Spark's file sources take it literally: its glob characters (``\\ { } [ ] * ?``) escaped.

    Spark's reader globs every path it is given: ``a[1].parquet`` read ``a1.parquet`` and ``c*.parquet`` every
    file starting with ``c``, silently. Escaped, the glob matches the one file named."""
    return _GLOB.sub(r"\\\1", uri)


def sql_string(value: str) -> str:
    """Pure: ``value`` as a Spark SQL string literal: single quotes, backslash and quote escaped, and ``$`` written
    ``\\u0024``, because Spark substitutes ``${...}`` variables in SQL text before parsing it (``${env:HOME}``
    became the home folder); the parser turns ``\\u0024`` back into ``$``."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'").replace("$", "\\u0024") + "'"


def file_columns(path: Column, files: Sequence[SourceFile]) -> list[Column]:
    """:data:`FILE`, :data:`FILE_ORDER` and :data:`FULL_LOAD` of a row from the path Spark read it from.

    The files' map is one SQL literal (``map(path, named_struct(...), ...)``), parsed once: built from column
    functions it cost about 8 Py4J calls a file (4 s for 1,000 files)."""
    files_map = F.expr(
        "map("
        + ", ".join(
            f"{sql_string(same_file(source.uri))}, named_struct('k', {sql_string(source.key)}, "
            f"'o', {int(source.order)}, 'f', {str(bool(source.is_full_load)).lower()})"
            for source in files
        )
        + ")"
    )
    found = files_map[same_file_column(path)]
    return [found["k"].alias(FILE), found["o"].alias(FILE_ORDER), found["f"].alias(FULL_LOAD)]


class _FooterReader:
    """Reads Parquet footers through the JVM: the classes, the Hadoop configuration and Spark's schema converter are
    looked up once (each lookup is a Py4J round trip), then a footer costs the calls of its own file."""

    def __init__(self, spark: SparkSession) -> None:
        self._spark = spark
        self._conf = spark._jsc.hadoopConfiguration()
        self._path = java_class(spark, "org.apache.hadoop.fs.Path")
        self._input_file = java_class(spark, "org.apache.parquet.hadoop.util.HadoopInputFile")
        self._open = java_class(spark, "org.apache.parquet.hadoop.ParquetFileReader").open
        self._footer = java_class(spark, "org.apache.parquet.hadoop.Footer")
        parquet = "org.apache.spark.sql.execution.datasources.parquet"
        converter = java_class(spark, f"{parquet}.ParquetToSparkSchemaConverter")
        self._converter = converter(spark._jsparkSession.sessionState().conf())
        self._read_schema = java_class(spark, f"{parquet}.ParquetFileFormat").readSchemaFromFooter

    def schema(self, source: SourceFile) -> T.StructType:
        gateway_without_delay(self._spark)  # a pool thread: a wide file's schema is more than 8 KB (etl.jvm)
        hadoop = self._path(source.uri)
        try:
            reader = self._open(self._input_file.fromPath(hadoop, self._conf))
            try:
                footer = self._footer(hadoop, reader.getFooter())
            finally:
                reader.close()
        except Py4JJavaError as error:  # a direct call's error has no "Caused by": its Java exception is the cause
            cause = java_cause(error) if "Caused by:" in str(error) else error.java_exception.toString()[:300]
            raise ChangeFileError(source.key, f"unreadable Parquet: {cause}") from error
        # Spark's own rule: the Spark schema a Spark writer stored in the footer, else the Parquet types converted
        try:
            schema = T.StructType.fromJson(json.loads(self._read_schema(footer, self._converter).json()))
        except (CapturedException, Py4JJavaError) as error:  # a type Spark cannot read (INT64 TIMESTAMP(NANOS))
            raise ChangeFileError(source.key, f"unreadable Parquet: {java_cause(error)}") from error
        clash = schema_clash(schema)
        if clash is not None:
            raise ChangeFileError(source.key, clash)
        return schema


def parquet_schemas(spark: SparkSession, files: Sequence[SourceFile]) -> list[T.StructType]:
    """Each file's Spark schema from its footer, in ``files``' order (driver threads, no Spark job).

    Raises:
        ChangeFileError: the first file (in ``files``' order) whose footer does not read or holds a type Spark
            cannot read (``unreadable Parquet: <cause>``), or whose columns a table cannot hold side by side
            (:func:`etl.readers.column_names.schema_clash`: names that differ only in case, ODP's own names).
    """
    footers = _FooterReader(spark)
    with ThreadPoolExecutor(max_workers=FOOTER_THREADS) as pool:
        futures = [pool.submit(footers.schema, source) for source in files]
    return [future.result() for future in futures]


def by_schema(
    files: Sequence[SourceFile], schemas: Sequence[T.StructType]
) -> list[tuple[T.StructType, list[SourceFile]]]:
    """Pure: the files grouped by schema (first appearance order); a group is read by one scan."""
    groups: dict[str, tuple[T.StructType, list[SourceFile]]] = {}
    for source, schema in zip(files, schemas, strict=True):
        groups.setdefault(schema.json(), (schema, []))[1].append(source)
    return list(groups.values())


def copies(files: Sequence[SourceFile]) -> list[list[SourceFile]]:
    """Pure: ``files`` in rounds where each path appears once (a file delivered twice under one key is read
    twice, as its own change rows each time); one round unless a path repeats."""
    rounds: list[list[SourceFile]] = []
    seen: dict[str, int] = {}
    for source in files:
        place = seen[same_file(source.uri)] = seen.get(same_file(source.uri), -1) + 1
        if place == len(rounds):
            rounds.append([])
        rounds[place].append(source)
    return rounds


def file_scan(load: Callable[[list[str]], DataFrame], files: Sequence[SourceFile], row: Column) -> DataFrame:
    """One scan of ``files`` by a Spark file source (``load(uris)``; one scan per :func:`copies` round): its columns
    (lower case), then :data:`FILE`, :data:`FILE_ORDER`, :data:`FULL_LOAD` and :data:`ROW` (``row``, evaluated on the
    scan)."""
    frames = []
    for group in copies(files):
        loaded = load([literal_path(source.uri) for source in group])
        frames.append(
            loaded.select(
                *[F.col(f"`{name}`").alias(name.lower()) for name in loaded.columns],
                *file_columns(F.col("_metadata.file_path"), group),
                row.alias(ROW),
            )
        )
    return reduce(DataFrame.unionByName, frames)


def parquet_scan(spark: SparkSession, schema: T.StructType, files: Sequence[SourceFile]) -> DataFrame:
    """One scan of Parquet files sharing ``schema`` (:func:`file_scan`); :data:`ROW` is the row's 0-based number in
    its file."""
    return file_scan(lambda uris: spark.read.schema(schema).parquet(*uris), files, F.col("_metadata.row_index"))


def line_scan(load: Callable[[list[str]], DataFrame], files: Sequence[SourceFile]) -> DataFrame:
    """One scan of line-based text files (CSV, JSON lines) by a Spark file source (:func:`file_scan`); :data:`ROW` is
    the row's 0-based number in its file. A text source reads a file's lines in order (its splits are packed in
    order of their start), so ``monotonically_increasing_id`` grows along a file; a window over the file numbers
    its rows from 0 (one shuffle, however many files)."""
    scanned = file_scan(load, files, F.monotonically_increasing_id())
    in_file = Window.partitionBy(FILE_ORDER, FILE).orderBy(ROW)
    return scanned.withColumn(ROW, (F.row_number().over(in_file) - 1).cast("long"))


def binary_scan(
    spark: SparkSession,
    files: Sequence[SourceFile],
    rows_of: Callable[[SourceFile], Callable[[bytes], Iterable[tuple]]],
    schema: T.StructType,
) -> DataFrame:
    """Every file read whole in one ``binaryFile`` scan and turned into ``schema`` rows by ``rows_of(file)``
    on the executors (a file is one row of the scan, so positions inside it are exact)."""
    parsers: dict[str, list[Callable[[bytes], Iterable[tuple]]]] = {}
    for source in files:  # a path delivered twice is parsed once per delivery
        parsers.setdefault(same_file(source.uri), []).append(rows_of(source))

    def rows(pair) -> Iterator[tuple]:
        for parse in parsers[same_file(pair[0])]:
            yield from parse(bytes(pair[1]))

    uris = list({same_file(source.uri): source.uri for source in files}.values())
    scanned = spark.read.format("binaryFile").load([literal_path(uri) for uri in uris]).select("path", "content")
    return spark.createDataFrame(scanned.rdd.flatMap(rows), schema)


Scan = tuple[DataFrame, Sequence[SourceFile]]  # one scan's frame and its files


def union_scans(scans: Sequence[Scan]) -> DataFrame:
    """The frames of a table's scans as one frame, in the scans' order (columns by name; a column a scan lacks is
    NULL in its rows).

    Raises:
        ChangeFileError: a scan whose columns cannot be merged with the others' (:func:`check_mergeable`).
    """
    check_mergeable(scans)
    return reduce(lambda left, right: left.unionByName(right, allowMissingColumns=True), [frame for frame, _ in scans])


def check_mergeable(scans: Sequence[Scan]) -> None:
    """Merge the scans' columns largest scan first (planning only, no Spark job), so that a scan that does not
    merge with the ones before it is the smaller side: its files are refused, not the table's other files.

    Raises:
        ChangeFileError: the first file of such a scan (in file order): ``column status is struct<a:bigint> here
            and string in 15 other file(s) of the run: one table column cannot hold both``. An analysis error that
            no column explains is raised as it is.
    """
    order = sorted(range(len(scans)), key=lambda index: -len(scans[index][1]))
    merged, files = scans[order[0]][0], len(scans[order[0]][1])
    for index in order[1:]:
        frame, group = scans[index]
        try:
            merged = merged.unionByName(frame, allowMissingColumns=True)
        except AnalysisException as error:
            first = min(group, key=lambda source: source.order)
            conflict = _unmergeable_column(merged, frame)
            if conflict is None:
                raise
            name, theirs, mine = conflict
            raise ChangeFileError(
                first.key,
                f"column {name} is {mine} here and {theirs} in {files} other file(s) of the run: one table column "
                "cannot hold both",
            ) from error
        files += len(group)


def _unmergeable_column(merged: DataFrame, frame: DataFrame) -> tuple[str, str, str] | None:
    """(name, its type in ``merged``, its type in ``frame``) of the first column both hold whose types a union
    refuses, or None."""
    theirs = {field.name.lower(): field for field in merged.schema.fields}
    for field in frame.schema.fields:
        other = theirs.get(field.name.lower())
        if other is None or other.dataType == field.dataType:
            continue
        try:
            merged.select(F.col(f"`{other.name}`")).unionByName(frame.select(F.col(f"`{field.name}`")))
        except AnalysisException:
            return field.name, other.dataType.simpleString(), field.dataType.simpleString()
    return None
