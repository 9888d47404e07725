"""The optional per-table transform: one Spark SQL SELECT over a table's changes, before the write.

The role HoodieStreamer's SqlQueryBasedTransformer plays: parse an outbox table's JSON payload into
columns, rename, drop or mask columns. The SELECT reads ``<SRC>``: the table's validated changes, with
their data columns as they are and each change's bookkeeping (op, ordering, file, row, sequence) packed
in one struct column ``_odp``, which the SELECT must keep as it is, beside the key and partition
columns. Config load checks the text (:func:`odp.config.models.transform_problems`); here Spark checks it
against the real columns, and any failure (analysis or run time) fails only this table.
"""

from __future__ import annotations

import uuid

from py4j.protocol import Py4JJavaError
from pyspark.errors.exceptions.captured import CapturedException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from etl.change_frame import META_COLUMNS, data_columns
from etl.errors import TransformError
from etl.readers.common import ERROR, java_cause
from etl.readers.new_columns import DROPPED
from odp.config.models import TRANSFORM_META, TRANSFORM_SOURCE, TableConfig


def transform_changes(spark: SparkSession, changes: DataFrame, config: TableConfig) -> DataFrame:
    """The validated change frame, without the readers' error and dropped-names columns, through the table's
    transform (if any).

    Raises:
        TransformError: the SELECT does not parse or resolve, drops ``_odp`` or a key / partition column,
            yields a NULL key, or fails while it runs (names the table and Spark's cause).
    """
    frame = changes.drop(*[name for name in (ERROR, DROPPED) if name in changes.columns])
    if not config.transform:
        return frame
    meta = [name for name in META_COLUMNS if name in frame.columns]
    packed = frame.select(F.struct(*meta).alias(TRANSFORM_META), *data_columns(frame))
    view = f"_odp_changes_{uuid.uuid4().hex[:12]}"
    packed.createOrReplaceTempView(view)
    where = f"{config.table_id}: the table's transform"
    try:
        result = spark.sql(config.transform.replace(TRANSFORM_SOURCE, view))
    except (CapturedException, Py4JJavaError) as error:
        raise TransformError(f"{where} does not run: {java_cause(error)}") from error
    finally:
        spark.catalog.dropTempView(view)
    by_lower = {name.lower(): name for name in result.columns}
    required = [*config.primary_key, *config.partition_by]
    missing = [name for name in [TRANSFORM_META, *required] if name.lower() not in by_lower]
    if missing:
        raise TransformError(f"{where} drops column(s) {missing}: it must keep _odp and the key and partition columns")
    if result.schema[by_lower[TRANSFORM_META]].dataType != packed.schema[TRANSFORM_META].dataType:
        raise TransformError(f"{where} changes _odp: select it as it is")
    null_key = " OR ".join(f"`{by_lower[name.lower()]}` IS NULL" for name in config.primary_key)
    try:
        bad = result.where(null_key).limit(1).count()
    except (CapturedException, Py4JJavaError) as error:
        raise TransformError(f"{where} fails on the data: {java_cause(error)}") from error
    if bad:
        raise TransformError(f"{where} yields a NULL key ({', '.join(config.primary_key)})")
    others = [F.col(f"`{name}`") for name in result.columns if name != by_lower[TRANSFORM_META]]
    return result.select(*[F.col(f"{by_lower[TRANSFORM_META]}.{name}").alias(name) for name in meta], *others)
