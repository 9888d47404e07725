"""Hudi write options: one function of the typed table config, nothing copied per job."""

from __future__ import annotations

import json
from collections.abc import Sequence
from enum import StrEnum

from etl.change_frame import SEQ
from odp.config.models import TableConfig, TableMode, TableType

COMMIT_METADATA_PREFIX = "_odp_"
FILE_IDS_METADATA = "_odp_file_ids"
RUN_ID_METADATA = "_odp_run_id"
SIMPLE_KEYGEN = "org.apache.hudi.keygen.SimpleKeyGenerator"
COMPLEX_KEYGEN = "org.apache.hudi.keygen.ComplexKeyGenerator"
CUSTOM_KEYGEN = "org.apache.hudi.keygen.CustomKeyGenerator"
NONPARTITIONED_KEYGEN = "org.apache.hudi.keygen.NonpartitionedKeyGenerator"


class WriteOperation(StrEnum):
    UPSERT = "upsert"
    BULK_INSERT = "bulk_insert"
    INSERT_OVERWRITE_TABLE = "insert_overwrite_table"


def record_key_fields(config: TableConfig) -> tuple[str, ...]:
    """Current tables: the primary key. Historical tables: the key plus ``_odp_seq``, so every change stays."""
    if config.mode is TableMode.HISTORICAL:
        return (*config.primary_key, SEQ)
    return tuple(config.primary_key)


def key_generator(record_keys: Sequence[str], partitions: Sequence[str]) -> tuple[str, str]:
    """(key generator class, partition path field option).

    One key field with one partition column: SimpleKeyGenerator. One key field with several partition
    columns: CustomKeyGenerator (a one-field ComplexKeyGenerator encodes keys differently across Hudi
    releases, HUDI-9666). Several key fields: ComplexKeyGenerator. No partitions: NonpartitionedKeyGenerator.
    """
    if not partitions:
        return NONPARTITIONED_KEYGEN, ""
    if len(record_keys) > 1:
        return COMPLEX_KEYGEN, ",".join(partitions)
    if len(partitions) == 1:
        return SIMPLE_KEYGEN, partitions[0]
    return CUSTOM_KEYGEN, ",".join(f"{name}:SIMPLE" for name in partitions)


def hudi_write_options(
    config: TableConfig,
    *,
    operation: WriteOperation,
    catalog_sync: bool,
    metadata_table: bool,
    file_ids: Sequence[str] = (),
    run_id: str = "",
    compaction_delta_commits: int = 5,
) -> dict[str, str]:
    """Every option of one Hudi write of a table.

    ``_odp_seq`` is the ordering (precombine) field with EVENT_TIME_ORDERING, so a change older than
    the stored row never replaces it. The consumed file ids and the run id travel in the commit's
    extra metadata (keys with the ``_odp_`` prefix): exactly-once reconciliation reads them back.
    """
    record_keys = record_key_fields(config)
    partitions = tuple(config.partition_by)
    keygen, partition_field = key_generator(record_keys, partitions)
    options = {
        "hoodie.table.name": config.target_table,
        "hoodie.datasource.write.table.name": config.target_table,
        "hoodie.datasource.write.table.type": config.table_type.value,
        "hoodie.datasource.write.operation": operation.value,
        "hoodie.datasource.write.recordkey.field": ",".join(record_keys),
        "hoodie.datasource.write.precombine.field": SEQ,
        "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
        "hoodie.datasource.write.keygenerator.class": keygen,
        "hoodie.datasource.write.partitionpath.field": partition_field,
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.metadata.enable": "true" if metadata_table else "false",
        "hoodie.write.set.null.for.missing.columns": "true",
        "hoodie.datasource.write.commitmeta.key.prefix": COMMIT_METADATA_PREFIX,
        FILE_IDS_METADATA: json.dumps(sorted(file_ids)),
        RUN_ID_METADATA: run_id,
        "hoodie.bulkinsert.shuffle.parallelism": "2",
        "hoodie.upsert.shuffle.parallelism": "2",
        "hoodie.insert.shuffle.parallelism": "2",
        "hoodie.delete.shuffle.parallelism": "2",
    }
    if config.mode is TableMode.CURRENT and partitions:
        # A key's partition value can change (an update to the partition column, or a delete whose
        # image carries an old value). A global index finds the stored row in whichever partition it
        # is and moves it, where the default per-partition index would leave a stale copy behind.
        options["hoodie.index.type"] = "GLOBAL_SIMPLE"
        options["hoodie.simple.index.update.partition.path"] = "true"
    if config.table_type is TableType.MERGE_ON_READ:
        options.update(
            {
                "hoodie.compact.inline": "true",
                "hoodie.compact.inline.max.delta.commits": str(compaction_delta_commits),
            }
        )
    if catalog_sync:
        options.update(glue_sync_options(config))
    return options


def glue_sync_options(config: TableConfig) -> dict[str, str]:
    """Hudi meta sync to the Glue Data Catalog (Glue's Hive metastore client), hive-style partitions."""
    partitions = tuple(config.partition_by)
    return {
        "hoodie.datasource.meta.sync.enable": "true",
        "hoodie.datasource.hive_sync.enable": "true",
        "hoodie.datasource.hive_sync.mode": "hms",
        "hoodie.datasource.hive_sync.use_jdbc": "false",
        "hoodie.datasource.hive_sync.database": config.database,
        "hoodie.datasource.hive_sync.table": config.target_table,
        "hoodie.datasource.hive_sync.partition_fields": ",".join(partitions),
        "hoodie.datasource.hive_sync.partition_extractor_class": (
            "org.apache.hudi.hive.MultiPartKeysValueExtractor"
            if partitions
            else "org.apache.hudi.hive.NonPartitionedExtractor"
        ),
        "hoodie.datasource.hive_sync.support_timestamp": "true",
    }
