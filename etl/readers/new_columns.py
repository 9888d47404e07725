"""Columns outside a table's configured ``columns``: one rule for every format (the table's ``new_columns``).

- ``add`` (the default): a new table column (schema evolution, :mod:`etl.hudi.schema`); a record format's new
  attribute takes the widest type its values show (:func:`etl.readers.typed_values.widest`);
- ``refuse``: the file is refused, naming the column (and, for record formats, the row);
- ``ignore``: dropped; every change row says what it dropped in :data:`DROPPED`, which
  :func:`etl.change_counts.count_changes` totals in its one pass (the run's history and the
  ``IgnoredColumnValues`` metric) and :func:`etl.file_processor.transform.transform_changes` removes.

A table without ``columns`` declares nothing: every column is added (config refuses ``refuse`` / ``ignore``
there). File formats (Parquet, plain CSV / JSON) decide per file from its schema
(:func:`file_columns_rule`); record formats (Debezium, DynamoDB, the stream) per record from the keys of
its values map (:func:`record_columns`). The streaming micro-batch uses the same function, so a record
refused from a file is a bad record on a stream with the same words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from etl.change_frame import FILE_ORDER
from etl.errors import ChangeFileError
from etl.readers.column_names import kept_spellings, record_name_error
from etl.readers.typed_values import TYPES, VALUES, widest
from odp.config.models import NewColumns, SourceFormat, TableConfig, is_reserved_column

DROPPED = "_odp_dropped"  # ignore: the names a change row dropped (NULL: none)
DROPPED_TYPE = T.ArrayType(T.StringType())


def noun(config: TableConfig) -> str:
    """How messages name an undeclared column: DynamoDB has attributes, the other formats columns."""
    return "attribute" if config.format is SourceFormat.DYNAMODB else "column"


REFUSED = (
    " is not in the table's columns (new_columns: refuse): declare it in columns, or set new_columns to add or ignore"
)


def refusal(config: TableConfig, name: str) -> str:
    """The reason a refused file gets: ``column <name> is not in the table's columns (new_columns: refuse) ...``."""
    return f"{noun(config)} {name}{REFUSED}"


def undeclared(names: Sequence[str], config: TableConfig) -> list[str]:
    """Pure: the ``names`` (a file's columns, lower case) outside the configured columns; none without columns."""
    if not config.columns:
        return []
    declared = {name.lower() for name in config.columns}
    return [name for name in names if name.lower() not in declared]


def file_columns_rule(frame: DataFrame, data_columns: Sequence[str], key: str, config: TableConfig) -> DataFrame:
    """A file's frame under the table's ``new_columns``, decided from its columns (``data_columns``: the ones
    that hold data, lower case). ``add``: unchanged. ``ignore``: the undeclared columns dropped and named in
    :data:`DROPPED` on every row. Always adds :data:`DROPPED` (NULL when nothing is dropped), so files union.

    Raises:
        ChangeFileError: ``refuse`` and the file has a column outside ``columns`` (names the file and the column).
    """
    extra = undeclared(data_columns, config)
    if extra and config.new_columns is NewColumns.REFUSE:
        raise ChangeFileError(key, refusal(config, extra[0]))
    if not extra or config.new_columns is not NewColumns.IGNORE:
        return frame.withColumn(DROPPED, F.lit(None).cast(DROPPED_TYPE))
    return frame.drop(*extra).withColumn(DROPPED, F.array(*[F.lit(name) for name in extra]))


def files_columns_rule(frame: DataFrame, columns_of: Mapping[int, Sequence[str]], config: TableConfig) -> DataFrame:
    """:func:`file_columns_rule` for one scan of files whose columns differ (JSON lines: each file's own fields):
    ``columns_of``: each file's order -> its data columns (lower case), already checked per file for ``refuse``.
    ``ignore``: every undeclared column dropped, and each row's :data:`DROPPED` names those of its own file."""
    extra = {order: undeclared(names, config) for order, names in columns_of.items()}
    dropped = sorted({name for names in extra.values() for name in names})
    if not dropped or config.new_columns is not NewColumns.IGNORE:
        return frame.withColumn(DROPPED, F.lit(None).cast(DROPPED_TYPE))
    entries = [part for order, names in extra.items() if names for part in (F.lit(order), F.array(*map(F.lit, names)))]
    return frame.drop(*dropped).withColumn(DROPPED, F.create_map(*entries)[F.col(FILE_ORDER)])


@dataclass(frozen=True)
class RecordColumns:
    """How a record format's values are typed under ``new_columns``: the columns (name -> type) the records
    are cast to, the record's refusal (``refuse``; else NULL) and what it drops (``ignore``; else NULL)."""

    columns: dict[str, str]
    error: Column
    dropped: Column


def _names_seen(parsed: DataFrame, names: Column) -> dict[str, tuple[set[str], int]]:
    """name -> (the types its values show, records carrying it), over ``names`` (an array of names per record); one
    Spark job."""
    found = (
        parsed.select(F.explode(names).alias("name"), F.col(TYPES).alias("types"))
        .groupBy("name", F.col("types")[F.col("name")].alias("kind"))
        .count()
        .collect()
    )
    seen: dict[str, tuple[set[str], int]] = {}
    for name, kind, count in found:
        kinds, records = seen.get(name, (set(), 0))
        seen[name] = (kinds | ({kind} if kind else set()), records + count)
    return seen


def _spelled_once(
    columns: dict[str, str], seen: Mapping[str, tuple[set[str], int]], config: TableConfig
) -> tuple[dict[str, str], Column]:
    """``columns`` without the spellings a table cannot keep beside another (:mod:`etl.readers.column_names`), and
    the record's error naming the first such name it carries (NULL: none)."""
    kept = kept_spellings({name: records for name, (_, records) in seen.items()}, list(config.columns or ()))
    error = record_name_error(F.map_keys(F.col(VALUES)), kept, noun(config))
    return {n: kind for n, kind in columns.items() if not is_reserved_column(n) and kept.get(n.lower(), n) == n}, error


def record_columns(parsed: DataFrame, config: TableConfig) -> RecordColumns:
    """The columns of records parsed into :data:`VALUES` / :data:`TYPES` maps, under the table's ``new_columns``.

    Without ``columns``: every name, typed from the values (the widest type seen), one Spark job over ``parsed``.
    With them: ``add`` adds each undeclared name with the widest type its values show (string when they show none:
    only NULLs), one Spark job; ``refuse`` / ``ignore`` keep the configured columns and mark the records. Where
    names are added (without ``columns``, and ``add``), a record carrying a name ODP reserves or a spelling another
    kept name differs from only in case is refused (:mod:`etl.readers.column_names`).
    """
    none = F.lit(None).cast("string")
    no_drop = F.lit(None).cast(DROPPED_TYPE)
    if not config.columns:
        seen = _names_seen(parsed, F.map_keys(F.col(TYPES)))
        columns = {name: widest(kinds) for name, (kinds, _) in sorted(seen.items())}
        for key in config.primary_key:
            columns.setdefault(key, "string")
        columns, error = _spelled_once(columns, seen, config)
        return RecordColumns(columns, error, no_drop)
    declared = dict(config.columns)
    extra = F.array_sort(F.array_except(F.map_keys(F.col(VALUES)), F.array(*[F.lit(name) for name in declared])))
    if config.new_columns is NewColumns.ADD:
        seen = _names_seen(parsed, extra)
        added = {name: widest(kinds) for name, (kinds, _) in sorted(seen.items())}
        columns, error = _spelled_once({**declared, **added}, seen, config)
        return RecordColumns(columns, error, no_drop)
    has_extra = F.size(extra) > 0
    if config.new_columns is NewColumns.REFUSE:
        message = F.concat(F.lit(f"{noun(config)} "), extra.getItem(0), F.lit(REFUSED))
        return RecordColumns(declared, F.when(has_extra, message), no_drop)
    return RecordColumns(declared, none, F.when(has_extra, extra))
