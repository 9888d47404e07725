"""Shards merged: the shard column of a table fed by many source tables (an entry with ``from:``).

The File Manager files every shard's files under the merged table, so one run reads them together:
one lease, one commit whose tag names every file (exactly once per file, so per shard), one plan. The
readers see each file as its own source table (``TableConfig.as_read``: the key without the shard);
this step then adds the shard, taken from the staging key the change frame keeps per row, and the
shard is the first key column: ordering and deletes apply per (shard, key).
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from etl.change_frame import FILE
from odp.config.models import ShardFrom, TableConfig

# 1-based position of the segment in <source>/<schema>/<table>/... (Spark's element_at).
_SEGMENT = {ShardFrom.SCHEMA: 2, ShardFrom.TABLE: 3}


def with_shard(config: TableConfig) -> Callable[[DataFrame], DataFrame]:
    """DataFrame -> DataFrame: add the table's shard column from each row's staging key (a no-op for a table
    that is not merged, or whose rows carry the shard themselves)."""

    def transform(frame: DataFrame) -> DataFrame:
        if not config.shard_from_key or config.shard_from is None or config.shard_column is None:
            return frame
        segment = F.element_at(F.split(F.col(FILE), "/"), _SEGMENT[config.shard_from])
        return frame.withColumn(config.shard_column, segment)

    return transform
