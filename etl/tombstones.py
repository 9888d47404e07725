"""Delete tombstones of current-mode tables: a committed delete is newer data than a late, older change.

Hudi removes a deleted record, so a late change older than the delete would find no stored record and
come back as an insert. The tombstones remember, per key, the ``_odp_seq`` of the last committed delete
in a small COPY_ON_WRITE Hudi table beside the table (never inside its base path, never in a catalog):
``<raw_root>/<database>/_odp_tombstones/<target_table>``. A run drops every incoming insert / update
whose ``_odp_seq`` is not newer than its key's tombstone, writes its own deletes as tombstones before
the table's commit, and a full load clears them.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from etl.change_frame import DELETE, OP, SEQ
from etl.hudi_options import WriteOperation, WriteProfile, key_generator, profile_options, record_index_options
from etl.schema import align_to_table, table_schema
from etl.timeline import table_exists
from odp.config.models import TableConfig
from odp.naming import TOMBSTONE_FOLDER

STALE = "_odp_stale"  # transient column: an upsert at or below its key's tombstone
_TOMBSTONE_SEQ = "_odp_tombstone_seq"


def tombstone_write_options(
    config: TableConfig, *, operation: WriteOperation, profile: WriteProfile, input_rows: int = 0
) -> dict[str, str]:
    """Every option of one write of a table's tombstones.

    COPY_ON_WRITE, not partitioned, keyed by the table's primary key, ``_odp_seq`` as the ordering field
    with EVENT_TIME_ORDERING (a key keeps its newest delete), the profile's metadata table and
    parallelism, the record level index (an upsert of a few deletes never joins every stored tombstone),
    and no catalog sync.
    """
    keys = tuple(config.primary_key)
    keygen, partition_field = key_generator(keys, ())
    name = f"{config.target_table}{TOMBSTONE_FOLDER}"
    return {
        "hoodie.table.name": name,
        "hoodie.datasource.write.table.name": name,
        "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
        "hoodie.datasource.write.operation": operation.value,
        "hoodie.datasource.write.recordkey.field": ",".join(keys),
        "hoodie.datasource.write.precombine.field": SEQ,
        "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
        "hoodie.datasource.write.keygenerator.class": keygen,
        "hoodie.datasource.write.partitionpath.field": partition_field,
        "hoodie.datasource.meta.sync.enable": "false",
        "hoodie.datasource.hive_sync.enable": "false",
        **profile_options(profile, input_rows),
        **record_index_options(),
    }


def tombstone_rows(latest: DataFrame, keys: Sequence[str]) -> DataFrame:
    """Pure: the tombstones a batch leaves, from its last change per key: key and ``_odp_seq`` of each delete."""
    return latest.where(F.col(OP) == F.lit(DELETE)).select(*keys, SEQ)


def mark_stale(latest: DataFrame, tombstones: DataFrame, keys: Sequence[str]) -> DataFrame:
    """Pure: ``latest`` plus ``_odp_stale``, true for an insert / update not newer than its key's tombstone.

    Deletes are never stale (a delete older than another delete changes nothing). ``latest`` holds one
    change per key, so a batch's own deletes can never mark its own upserts stale.
    """
    stored = tombstones.select(*keys, F.col(SEQ).alias(_TOMBSTONE_SEQ))
    stale = (F.col(OP) != F.lit(DELETE)) & F.col(_TOMBSTONE_SEQ).isNotNull() & (F.col(SEQ) <= F.col(_TOMBSTONE_SEQ))
    joined = latest.join(stored, on=list(keys), how="left")
    return joined.select(*latest.columns, stale.alias(STALE))  # the frame's column order, plus the flag


def read_tombstones(spark: SparkSession, path: str, keys: Sequence[str]) -> DataFrame | None:
    """The stored tombstones (key and ``_odp_seq``), or None when the table has none yet."""
    if not table_exists(spark, path):
        return None
    return spark.read.format("hudi").load(path).select(*keys, SEQ)


def clear_tombstones(spark: SparkSession, path: str) -> None:
    """Delete a table's tombstone table (a full load is the truth: it starts the table afresh).

    Raises:
        ValueError: ``path`` is not a tombstone path (never delete anything else).
    """
    if f"/{TOMBSTONE_FOLDER}/" not in path:
        raise ValueError(f"not a tombstone path: {path}")
    jvm = spark.sparkContext._jvm
    hadoop_path = jvm.org.apache.hadoop.fs.Path(path)
    filesystem = hadoop_path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    if filesystem.exists(hadoop_path):
        filesystem.delete(hadoop_path, True)


def write_tombstones(
    spark: SparkSession, rows: DataFrame, config: TableConfig, path: str, *, profile: WriteProfile
) -> None:
    """Upsert tombstones (a key keeps its newest delete). Writes nothing when ``rows`` is empty.

    Called only for a batch that holds deletes (the caller counted them): a run without deletes never
    reaches this probe nor a second commit.
    """
    if rows.isEmpty():  # every delete of the batch was followed by a re-insert of its key
        return
    aligned = align_to_table(rows, table_schema(spark, path)) if table_exists(spark, path) else rows
    options = tombstone_write_options(config, operation=WriteOperation.UPSERT, profile=profile)
    aligned.write.format("hudi").options(**options).mode("append").save(path)
