"""The size of a stored Hudi table, from what Hudi already keeps: the metadata table's file listing (the latest
base file of every file group, with its bytes) and the latest commit's write statistics (rows per byte of the base
files it wrote, the file groups it wrote). No data file is opened. Feeds :mod:`etl.raw_table.write_strategy`."""

from __future__ import annotations

import logging
from typing import Any

from py4j.protocol import Py4JJavaError
from pyspark.sql import SparkSession

from etl.hudi.timeline import TIMELINE_UTILS, _meta_client, table_exists
from etl.jvm import java_class
from etl.raw_table.write_strategy import StoredTable

logger = logging.getLogger(__name__)


def stored_table(spark: SparkSession, base_path: str) -> StoredTable | None:
    """The table's rows (estimated), bytes, file groups and partitions; None: no table or no completed commit, or
    Hudi failed to list it (logged: the run then upserts, the choice is never a reason to fail a table).

    Bytes, file groups and partitions are exact (the latest base files of the completed timeline, listed from
    the metadata table). Rows are the bytes times the rows per byte of the base files the latest commit wrote
    (its write statistics: a COW upsert rewrites whole files, so the ratio is the table's); None when the latest
    commit wrote no base file (a MERGE_ON_READ delta commit).
    """
    if not table_exists(spark, base_path):
        return None
    try:
        return _stored_table(spark, base_path)
    except Py4JJavaError as error:
        logger.warning("%s: the table's size could not be read, the run upserts: %s", base_path, error)
        return None


def _stored_table(spark: SparkSession, base_path: str) -> StoredTable | None:
    meta_client = _meta_client(spark, base_path)
    timeline = meta_client.getActiveTimeline().getCommitsTimeline().filterCompletedInstants()
    last = timeline.lastInstant()
    if not last.isPresent():
        return None
    files = _latest_base_files(spark, meta_client)
    table_bytes = sum(size for _, _, size in files)
    metadata = java_class(spark, TIMELINE_UTILS).getCommitMetadata(last.get(), timeline)
    written_rows = written_bytes = 0
    for stat in metadata.getWriteStats():
        if str(stat.getPath()).endswith(".parquet"):
            written_rows += int(stat.getNumWrites())
            written_bytes += int(stat.getFileSizeInBytes())
    rows = round(table_bytes * written_rows / written_bytes) if written_bytes else None
    return StoredTable(
        rows=rows,
        bytes=table_bytes,
        file_groups=len({file_id for _, file_id, _ in files}),
        partitions=len({partition for partition, _, _ in files}),
    )


def _latest_base_files(spark: SparkSession, meta_client: Any) -> list[tuple[str, str, int]]:
    """(partition folder, file id, bytes) of the latest base file of every file group (metadata table listing)."""
    context = java_class(spark, "org.apache.hudi.common.engine.HoodieLocalEngineContext")(meta_client.getStorageConf())
    # the metadata table's listing when the table has one (every table ODP writes but the simple index's), else the
    # file system's
    with_metadata = bool(meta_client.getTableConfig().isMetadataTableAvailable())
    metadata_config = java_class(spark, "org.apache.hudi.common.config.HoodieMetadataConfig")
    listing = metadata_config.newBuilder().enable(with_metadata).build()
    views = java_class(spark, "org.apache.hudi.common.table.view.FileSystemViewManager")
    view = views.createInMemoryFileSystemView(context, meta_client, listing)
    try:
        view.loadAllPartitions()
        latest = view.getLatestBaseFiles().collect(java_class(spark, "java.util.stream.Collectors").toList())
        return [
            (str(base.getStoragePath().getParent()), str(base.getFileId()), int(base.getFileSize())) for base in latest
        ]
    finally:
        view.close()
