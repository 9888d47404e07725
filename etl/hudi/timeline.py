"""Reads of a Hudi table's timeline through the JVM (the same calls work on Glue and locally): the one
public wrapper; nothing outside this module builds a meta client.

Used for exactly-once: which landed files a completed commit already consumed, and the instant and
write statistics of the commit a run just made; by the dataset job: a table's latest instant and what its
latest commit recorded; and for recovery: a table whose first commit never
completed (the run was killed) is discarded, so the next run creates it afresh.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from pyspark.sql import SparkSession

from etl.hudi.options import FILE_IDS_METADATA, INDEX_METADATA, RUN_ID_METADATA
from etl.hudi.target import RECORD_INDEX

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CommitSummary:
    """One completed commit: instant, action, the files, run and index it recorded, write statistics."""

    instant: str
    action: str
    file_ids: tuple[str, ...]
    run_id: str | None
    inserts: int
    updates: int
    deletes: int
    index: str | None = None  # ``_odp_index`` (HudiTarget.index); None before it was recorded


def table_exists(spark: SparkSession, base_path: str) -> bool:
    """Whether a Hudi table has been created at base_path (its hoodie.properties exists)."""
    filesystem, path = filesystem_path(spark, f"{base_path.rstrip('/')}/.hoodie/hoodie.properties")
    return bool(filesystem.exists(path))


def filesystem_path(spark: SparkSession, path: str) -> tuple[Any, Any]:
    """(Hadoop FileSystem, Hadoop Path) of ``path``: the same calls on S3 (Glue) and locally."""
    jvm = spark.sparkContext._jvm
    hadoop_path = jvm.org.apache.hadoop.fs.Path(path)
    return hadoop_path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), hadoop_path


def _has_entries(spark: SparkSession, path: str) -> bool:
    filesystem, hadoop_path = filesystem_path(spark, path)
    return bool(filesystem.exists(hadoop_path)) and len(filesystem.listStatus(hadoop_path)) > 0


def discard_uncommitted_table(spark: SparkSession, base_path: str) -> tuple[str, ...]:
    """Remove a Hudi table that was created but whose first commit never completed; returns its instants.

    A run killed during a table's first commit leaves ``hoodie.properties`` and a requested / inflight
    instant but no completed instant: no reader ever saw data there, yet reading it gives an
    ``EmptyRelation`` without columns and every later run fails. Rolling that first instant back (as
    Hudi's own rollback does: delete what the instant wrote) leaves nothing of value, so the table's
    folder goes and the next write creates the table afresh. A table with any completed instant in
    its active timeline, or with an archived timeline, is never touched (Hudi rolls back a failed
    later commit by itself). Returns ``()`` when there was nothing to discard. Call it only while
    holding the table's lease.
    """
    if not table_exists(spark, base_path):
        return ()
    meta_client = _meta_client(spark, base_path)
    active = meta_client.getActiveTimeline()
    if not active.filterCompletedInstants().empty():
        return ()
    if _has_entries(spark, str(meta_client.getArchivePath())):
        return ()  # an archived timeline means completed commits once existed: not a failed first commit
    pending = tuple(
        f"{instant.requestedTime()}.{instant.getAction()}.{instant.getState()}" for instant in active.getInstants()
    )
    filesystem, hadoop_path = filesystem_path(spark, base_path.rstrip("/"))
    filesystem.delete(hadoop_path, True)
    logger.warning(
        "%s: discarded a table whose first commit never completed (pending instants: %s); "
        "no data was ever committed there, the next write creates it afresh",
        base_path,
        ", ".join(pending) or "none",
    )
    return pending or ("none",)


def _meta_client(spark: SparkSession, base_path: str) -> Any:
    jvm = spark.sparkContext._jvm
    conf = jvm.org.apache.hudi.storage.hadoop.HadoopStorageConfiguration(spark.sparkContext._jsc.hadoopConfiguration())
    return jvm.org.apache.hudi.common.table.HoodieTableMetaClient.builder().setConf(conf).setBasePath(base_path).build()


def _completed_timeline(spark: SparkSession, base_path: str) -> Any:
    return _meta_client(spark, base_path).getActiveTimeline().getCommitsTimeline().filterCompletedInstants()


def stored_partition_encoding(spark: SparkSession, base_path: str) -> bool | None:
    """Whether the table's partition paths are URL-encoded, as Hudi recorded it in ``hoodie.properties`` when it
    created the table (``hoodie.datasource.write.partitionpath.urlencode``; absent = false); None: no table yet.
    Hudi does not check a later write's setting against it: every write passes this back
    (:mod:`etl.hudi.partition_paths`)."""
    if not table_exists(spark, base_path):
        return None
    return str(_meta_client(spark, base_path).getTableConfig().getUrlEncodePartitioning()).lower() == "true"


def latest_instant(spark: SparkSession, base_path: str) -> str | None:
    """The latest completed commit (commit, deltacommit, replacecommit) of a Hudi table; None when it has none."""
    if not table_exists(spark, base_path):
        return None
    last = _completed_timeline(spark, base_path).lastInstant()
    return str(last.get().requestedTime()) if last.isPresent() else None


def latest_commit_metadata(spark: SparkSession, base_path: str) -> dict[str, str] | None:
    """The extra metadata (``_odp_*`` keys) of the table's latest completed commit; None when it has none."""
    if not table_exists(spark, base_path):
        return None
    timeline = _completed_timeline(spark, base_path)
    last = timeline.lastInstant()
    if not last.isPresent():
        return None
    jvm = spark.sparkContext._jvm
    metadata = jvm.org.apache.hudi.common.table.timeline.TimelineUtils.getCommitMetadata(last.get(), timeline)
    return {str(key): str(value) for key, value in dict(metadata.getExtraMetadata()).items()}


def completed_commits(spark: SparkSession, base_path: str, *, after: str | None = None) -> list[CommitSummary]:
    """Completed commits of the active timeline (commit, deltacommit, replacecommit), oldest first.

    ``after``: only the commits requested after this instant. A run reads the whole timeline once (to
    reconcile) and, after its write, only what its write added: each commit's metadata is read once.
    """
    if not table_exists(spark, base_path):
        return []
    jvm = spark.sparkContext._jvm
    timeline = _completed_timeline(spark, base_path)
    if after is not None:
        timeline = timeline.findInstantsAfter(after)
    summaries = []
    for instant in timeline.getInstants():
        metadata = jvm.org.apache.hudi.common.table.timeline.TimelineUtils.getCommitMetadata(instant, timeline)
        extra = metadata.getExtraMetadata()
        raw_ids = extra.get(FILE_IDS_METADATA)
        deletes = sum(int(stat.getNumDeletes()) for stat in metadata.getWriteStats())
        summaries.append(
            CommitSummary(
                instant=str(instant.requestedTime()),
                action=str(instant.getAction()),
                file_ids=tuple(json.loads(raw_ids)) if raw_ids else (),
                run_id=extra.get(RUN_ID_METADATA) or None,
                index=extra.get(INDEX_METADATA) or None,
                inserts=int(metadata.fetchTotalInsertRecordsWritten()),
                updates=int(metadata.fetchTotalUpdateRecordsWritten()),
                deletes=deletes,
            )
        )
    return summaries


def committed_file_ids(commits: list[CommitSummary]) -> dict[str, str]:
    """file id -> instant of the commit that consumed it."""
    return {file_id: commit.instant for commit in commits for file_id in commit.file_ids}


def stored_index(commits: list[CommitSummary]) -> str | None:
    """Pure: the index of the table's last ODP commit (None: no ODP commit yet). A commit of a release that did
    not record it was written with a global index (record level, or GLOBAL_SIMPLE before it): ``record``."""
    for commit in reversed(commits):
        if commit.run_id is not None:
            return commit.index or RECORD_INDEX
    return None


def commit_of_run(commits: list[CommitSummary], run_id: str) -> CommitSummary | None:
    """The data commit a run made (compaction commits carry no run id)."""
    for commit in reversed(commits):
        if commit.run_id == run_id and commit.file_ids:
            return commit
    return None
