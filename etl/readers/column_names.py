"""Column names a table cannot hold side by side: names that differ only in case, and ODP's own names.

Spark resolves column names case-insensitively (``spark.sql.caseSensitive`` false, its default and Glue's): a file
with columns ``status`` and ``STATUS`` fails the whole scan of its table's files (``[COLUMN_ALREADY_EXISTS]``, no
file named), and a Hudi table keeps one name per column. ODP's change frame uses ``_odp_*`` columns (a transform's
input ``_odp``) and Hudi writes ``_hoodie_*`` ones: a source column of those names would take their place. So such
names are refused up front, per file (its footer, its header, its JSON keys) or per record (Debezium, DynamoDB, a
stream), naming both columns: never renamed silently, never left to fail a scan that names no file.

Pure: no Spark, except :func:`record_name_error`, which builds the per-record check as a Spark column.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from odp.config.models import RESERVED_COLUMN_PREFIXES, TRANSFORM_META, is_reserved_column

_RESERVED = " has a name ODP reserves for its own columns (_odp, _odp_*, _hoodie_*): rename it at the source"
_SAME_NAME = " differ only in case: Spark compares column names case-insensitively, so they cannot be two columns"


def name_clash(names: Iterable[str], noun: str = "column") -> str | None:
    """Pure: why ``names`` (one file's columns, as written) cannot be columns side by side, or None.

    ``column _hoodie_commit_time has a name ODP reserves ...``, ``columns status and STATUS differ only in case ...``
    (the first problem in the names' order).
    """
    seen: dict[str, str] = {}
    for name in names:
        if is_reserved_column(name):
            return f"{noun} {name}{_RESERVED}"
        first = seen.setdefault(name.lower(), name)
        if first != name:
            return f"{noun}s {first} and {name}{_SAME_NAME} (rename one at the source)"
    return None


def schema_clash(schema: T.StructType) -> str | None:
    """Pure: :func:`name_clash` of a file's Spark schema, nested fields too (``columns s.a and s.A differ ...``):
    Spark refuses a struct whose fields differ only in case as it refuses two such columns."""
    top = name_clash(schema.fieldNames())
    if top is not None:
        return top
    for field in schema.fields:
        nested = _nested_clash(field.dataType, field.name)
        if nested is not None:
            return nested
    return None


def _nested_clash(kind: T.DataType, path: str) -> str | None:
    if isinstance(kind, T.ArrayType):
        return _nested_clash(kind.elementType, path)
    if isinstance(kind, T.MapType):
        return _nested_clash(kind.valueType, path)
    if not isinstance(kind, T.StructType):
        return None
    seen: dict[str, str] = {}
    for field in kind.fields:
        first = seen.setdefault(field.name.lower(), field.name)
        if first != field.name:
            return f"columns {path}.{first} and {path}.{field.name}{_SAME_NAME} (rename one at the source)"
        nested = _nested_clash(field.dataType, f"{path}.{field.name}")
        if nested is not None:
            return nested
    return None


def kept_spellings(seen: Mapping[str, int], preferred: Sequence[str] = ()) -> dict[str, str]:
    """Pure: for each name records spell in more than one way (``seen``: name -> records carrying it; ``preferred``:
    the table's declared columns, one more spelling), lower case -> the spelling kept: the preferred one, else the
    one most records carry, else the first in sorted order. Names spelled one way are left out."""
    spelled: dict[str, set[str]] = {}
    for name in [*seen, *preferred]:
        spelled.setdefault(name.lower(), set()).add(name)
    kept = {name.lower(): name for name in preferred}
    for name, _ in sorted(seen.items(), key=lambda pair: (-pair[1], pair[0])):
        kept.setdefault(name.lower(), name)
    return {lower: kept[lower] for lower, names in spelled.items() if len(names) > 1}


def record_name_error(names: Column, kept: Mapping[str, str], noun: str) -> Column:
    """The first of a record's ``names`` (an array of its attribute names) that cannot be a column, with why, else
    NULL: a reserved name, or a spelling other than the one kept for its name (``kept``: :func:`kept_spellings`)."""
    lower = F.lower
    reserved = F.filter(
        names,
        lambda name: (
            (lower(name) == TRANSFORM_META)
            | lower(name).startswith(RESERVED_COLUMN_PREFIXES[0])
            | lower(name).startswith(RESERVED_COLUMN_PREFIXES[1])
        ),
    )
    error = F.when(F.size(reserved) > 0, F.concat(F.lit(f"{noun} "), reserved.getItem(0), F.lit(_RESERVED)))
    if not kept:
        return error
    spelling = F.create_map(*[F.lit(part) for pair in kept.items() for part in pair])
    others = F.filter(names, lambda name: spelling[lower(name)].isNotNull() & (spelling[lower(name)] != name))
    other = others.getItem(0)
    return error.when(
        F.size(others) > 0,
        F.concat(
            F.lit(f"{noun} "),
            other,
            F.lit(" differs only in case from "),
            spelling[lower(other)],
            F.lit(
                ", the spelling kept for the table (its columns', or most records'): Spark compares column names "
                "case-insensitively, so they cannot be two columns (rename it at the source)"
            ),
        ),
    )
