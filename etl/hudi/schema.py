"""Fit an incoming change frame to the table's schema: allowed evolution, or a clear error."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from etl.errors import SchemaEvolutionError

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


def align_to_table(frame: DataFrame, table: T.StructType) -> DataFrame:
    """Cast incoming columns to the table's types where that widens; add the table's missing columns as null.

    New incoming columns stay (the table gains them). An incoming column that is wider than the table's
    (int -> bigint) stays wide: Hudi promotes the table's column.

    Raises:
        SchemaEvolutionError: a column changes to a type that does not hold the old values.
    """
    existing = {f.name.lower(): f for f in table.fields}
    problems = []
    columns = []
    for field in frame.schema.fields:
        old = existing.get(field.name.lower())
        if old is None or old.dataType == field.dataType:
            columns.append(F.col(field.name))
        elif is_widening(field.dataType, old.dataType):
            columns.append(F.col(field.name).cast(old.dataType).alias(field.name))
        elif is_widening(old.dataType, field.dataType):
            columns.append(F.col(field.name))
        else:
            problems.append(
                f"column {field.name}: table has {old.dataType.simpleString()}, "
                f"files bring {field.dataType.simpleString()}"
            )
    if problems:
        raise SchemaEvolutionError(
            "incompatible schema change (" + "; ".join(problems) + "): fix the source or recreate the table"
        )
    present = {name.lower() for name in frame.columns}
    missing = [F.lit(None).cast(f.dataType).alias(f.name) for f in table.fields if f.name.lower() not in present]
    return frame.select(*columns, *missing)
