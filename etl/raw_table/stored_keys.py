"""The stored rows of some keys of a raw table: its snapshot (COW and MOR alike, logs merged) narrowed to the keys.

A few keys are read with ``key IN (...)``, which Hudi 1.0.2's data skipping looks up in the record level index so
that only the file groups holding them are read (about half the time of the semi-join below on a table of 12 file
groups: docs/decisions/022). That needs a table with the record index and a one-column key of whole numbers or text
(Hudi compares the literal's text with the record key; another type's text differs, and the lookup would find
nothing), and no more keys than Spark's IN-list threshold (``spark.sql.optimizer.inSetConversionThreshold``, 10 by
default): above it Spark turns the list into an ``InSet``, which Hudi 1.0.2 does not prune by.

Every other read is a semi-join of the keys with the whole snapshot (a projected scan of every file group). The keys
are matched over every partition, not by a partition filter: with the global record index a row whose partition
value changed lives in its old partition until the change moves it.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from etl.hudi.target import RECORD_INDEX, HudiTarget
from odp.config.models import TableConfig

IN_LIST_THRESHOLD = "spark.sql.optimizer.inSetConversionThreshold"
SPARK_IN_LIST_THRESHOLD = 10  # Spark's default for IN_LIST_THRESHOLD
RECORD_INDEX_SKIPPING = {
    "hoodie.enable.data.skipping": "true",
    "hoodie.metadata.enable": "true",
    "hoodie.metadata.record.index.enable": "true",
}
# Key types whose Spark literal prints as Hudi's record key does
_LOOKUP_TYPES = (T.IntegerType, T.LongType, T.StringType)


def stored_rows_of_keys(
    spark: SparkSession,
    base_path: str,
    config: TableConfig,
    wanted: DataFrame,
    columns: Sequence[str | Column],
) -> DataFrame | None:
    """The stored rows of the keys in ``wanted`` (its key columns, ``config.primary_key``) as ``columns`` of the
    table's snapshot, lazily; None when ``wanted`` holds no key (nothing is read). One Spark job looks at the keys
    first (at most the IN-list threshold plus one of them)."""
    keys = list(config.primary_key)
    limit = int(spark.conf.get(IN_LIST_THRESHOLD, str(SPARK_IN_LIST_THRESHOLD)))
    found = wanted.select(*keys).where(F.col(keys[0]).isNotNull()).distinct().limit(limit + 1).collect()
    if not found:
        return None
    if len(found) <= limit and by_record_index(config, wanted.schema[keys[0]].dataType):
        table = spark.read.format("hudi").options(**RECORD_INDEX_SKIPPING).load(base_path)
        return table.where(F.col(keys[0]).isin([row[0] for row in found])).select(*columns)
    return spark.read.format("hudi").load(base_path).join(wanted, keys, "left_semi").select(*columns)


def by_record_index(config: TableConfig, key_type: T.DataType) -> bool:
    """Pure: whether Hudi's record index can find the table's keys from a ``key IN (...)`` filter: the record level
    index, a record key of one column (not a historical table's key and ``_odp_seq``), whole numbers or text."""
    target = HudiTarget.from_table(config)
    one_column = len(target.record_keys) == 1
    return target.index == RECORD_INDEX and one_column and isinstance(key_type, _LOOKUP_TYPES)
