"""Typed values, one way for every path: declared types, the strict cast, its message, and type inference.

The file readers (:mod:`etl.readers.dms`, :mod:`etl.readers.json_sources`) and the streaming micro-batch
(:mod:`etl.streaming.typed_rows`) all type their values here, so a value refused from a file is refused
from a stream with the same words: ``column amount: value '12.345' is not a valid decimal(12,2)``, placed
by :func:`placed_error` (``row 2, ...`` in a file, ``shard <s> sequence <n>, ...`` on a stream).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from etl.hudi.schema import is_widening

# The parsed text values of a record (column -> text) and the types inferred from them (column -> type).
VALUES = "_odp_values"
TYPES = "_odp_types"
SHOWN_VALUE_CHARS = 100

_SIMPLE_TYPES: dict[str, T.DataType] = {
    "string": T.StringType(),
    "boolean": T.BooleanType(),
    "tinyint": T.ByteType(),
    "smallint": T.ShortType(),
    "int": T.IntegerType(),
    "bigint": T.LongType(),
    "float": T.FloatType(),
    "double": T.DoubleType(),
    "date": T.DateType(),
    "timestamp": T.TimestampType(),
    "timestamp_ntz": T.TimestampNTZType(),
    "binary": T.BinaryType(),
}
_DECIMAL = re.compile(r"^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$")
_INTEGRAL_TEXT = r"^[+-]?[0-9]+(\.0*)?$"
_FLOAT_TEXT = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$|^[+-]?(NaN|Infinity)$"
# A date without a time part: Spark's cast would keep the day of '2026-01-01 10:00:00' and drop the time.
_DATE_TEXT = r"^\s*[+-]?[0-9]{4,7}(-[0-9]{1,2}(-[0-9]{1,2})?)?\s*$"
# Widening order for inferred types: a column seen as bigint and double is double, anything else string.
_RANK = {"boolean": 0, "tinyint": 1, "smallint": 2, "int": 3, "bigint": 4, "float": 5, "double": 6}


def spark_type(declared: str) -> T.DataType:
    """The Spark type of a declared column type (the names config validation accepts).

    Raises:
        KeyError: not a type name config validation accepts.
    """
    decimal = _DECIMAL.match(declared)
    if decimal:
        return T.DecimalType(int(decimal.group(1)), int(decimal.group(2)))
    return _SIMPLE_TYPES[declared]


def _text_fits(text: Column, target: T.DataType) -> Column | None:
    """Text that converts to ``target`` without losing anything (Spark's lenient cast would truncate)."""
    if isinstance(target, T.IntegralType):
        return text.rlike(_INTEGRAL_TEXT)
    if isinstance(target, T.FractionalType) and not isinstance(target, T.DecimalType):
        return text.rlike(_FLOAT_TEXT)
    if isinstance(target, T.DecimalType):
        return text.rlike(rf"^[+-]?([0-9]+\.?[0-9]{{0,{target.scale}}}0*|\.[0-9]{{1,{target.scale}}}0*)$")
    if isinstance(target, T.DateType):
        return text.rlike(_DATE_TEXT)
    return None


def strict_cast(value: Column, source: T.DataType, declared: str, name: str) -> tuple[Column, Column]:
    """(``value`` as the declared type, an error text or NULL): a value that does not convert is never NULLed.

    Text must spell a value of the type (``1.5`` is not a bigint, ``1.234`` not a decimal(12,2), a time is
    not a date) and fit it (``3000000000`` is not an int); a typed value must survive the round trip (a
    double 1.5 is not a bigint); widenings always pass. The error: ``column <name>: value '<value>' is not
    a valid <declared>`` (the value cut to :data:`SHOWN_VALUE_CHARS`).
    """
    target = spark_type(declared)
    typed = value.cast(target)
    if source == target or isinstance(target, T.StringType) or is_widening(source, target):
        return typed, F.lit(None).cast("string")
    if isinstance(source, T.StringType):
        fits = _text_fits(value, target)
        ok = typed.isNotNull() if fits is None else fits & typed.isNotNull()
    else:
        ok = typed.isNotNull() & (typed.cast(source) == value)
    shown = F.substring(value.cast("string"), 1, SHOWN_VALUE_CHARS)
    error = F.when(
        value.isNotNull() & ~ok,
        F.concat(F.lit(f"column {name}: value '"), shown, F.lit(f"' is not a valid {declared}")),
    )
    return typed, error


def typed_values(columns: Mapping[str, str]) -> tuple[list[Column], list[Column]]:
    """(columns cast to their declared types, their conversion errors) from the text values map (:data:`VALUES`)."""
    data, errors = [], []
    for name, kind in columns.items():
        value, error = strict_cast(F.col(VALUES).getItem(name), T.StringType(), kind, name)
        data.append(value.alias(name))
        errors.append(error)
    return data, errors


def placed_error(place: Column, errors: Sequence[Column]) -> Column:
    """``<place>, <the first error>``, or NULL when there is none (``place``: where the record is)."""
    if not errors:
        return F.lit(None).cast("string")
    return F.concat(place, F.lit(", "), F.coalesce(*errors))


def widest(kinds: set[str]) -> str:
    """The one Spark type that holds every inferred kind of a column."""
    if not kinds:
        return "string"
    if len(kinds) == 1:
        return next(iter(kinds))
    if "string" in kinds or "boolean" in kinds or not kinds <= set(_RANK):
        return "string"
    return max(kinds, key=_RANK.__getitem__)
