"""A Hudi table's data schema (its meta columns left out) and the widening rule every writer and reader keeps."""

from __future__ import annotations

from pyspark.sql import types as T

HUDI_META_PREFIX = "_hoodie_"
_INTEGRAL_RANK = {T.ByteType: 1, T.ShortType: 2, T.IntegerType: 3, T.LongType: 4}


def is_widening(narrow: T.DataType, wide: T.DataType) -> bool:
    """Types a column may move between without losing values (what Hudi promotes on read)."""
    if narrow == wide:
        return True
    narrow_rank, wide_rank = _INTEGRAL_RANK.get(type(narrow)), _INTEGRAL_RANK.get(type(wide))
    if narrow_rank and wide_rank:
        return narrow_rank <= wide_rank
    if narrow_rank and isinstance(wide, T.DoubleType):
        return True
    if isinstance(narrow, T.FloatType) and isinstance(wide, T.DoubleType):
        return True
    if isinstance(narrow, T.DecimalType) and isinstance(wide, T.DecimalType):
        return narrow.scale == wide.scale and narrow.precision <= wide.precision
    return False


def data_schema(schema: T.StructType) -> T.StructType:
    """Pure: a Hudi table's schema without its meta columns (``_hoodie_is_deleted`` kept: a data column)."""
    return T.StructType(
        [f for f in schema.fields if not f.name.startswith(HUDI_META_PREFIX) or f.name == "_hoodie_is_deleted"]
    )
