"""Fit an incoming change frame to the table's schema: allowed evolution (:func:`etl.hudi.schema.is_widening`), or a
clear error."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from etl.errors import SchemaEvolutionError
from etl.hudi.schema import is_widening


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
