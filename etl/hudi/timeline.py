"""Reads of a Hudi table's timeline through the JVM (the same calls work on Glue and locally): the one
public wrapper; nothing outside this module builds a meta client.

A run of a table reads its state once (:func:`read_table_state`: one existence check, one meta client: its
``hoodie.properties``, completed commits with their metadata, schema and size) and passes that
:class:`HudiTableState` down instead of reading the table again at each step.

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
from pyspark.sql import types as T

from etl.hudi.options import FILE_IDS_METADATA, INDEX_METADATA, MERGE_ON_READ_SMALL_FILE_BYTES, RUN_ID_METADATA
from etl.hudi.schema import data_schema
from etl.hudi.target import RECORD_INDEX
from etl.jvm import filesystem_path, java_class

TIMELINE_UTILS = "org.apache.hudi.common.table.timeline.TimelineUtils"
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
    # the base files the commit rewrote for updates and deletes that MERGE_ON_READ would have logged instead
    # (:func:`rewritten_for_changes`): their stored rows (the unchanged ones included, the inserts not), bytes and
    # number
    rows_rewritten: int = 0
    files_rewritten: int = 0
    bytes_rewritten: int = 0
    # it left files for the cleaner (:func:`supersedes_files`): a new version of a base file it did not create, or
    # file groups it replaced
    supersedes: bool = False


def table_exists(spark: SparkSession, base_path: str) -> bool:
    """Whether a Hudi table has been created at base_path (its hoodie.properties exists)."""
    filesystem, path = filesystem_path(spark, f"{base_path.rstrip('/')}/.hoodie/hoodie.properties")
    return bool(filesystem.exists(path))


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
    storage_conf = java_class(spark, "org.apache.hudi.storage.hadoop.HadoopStorageConfiguration")
    conf = storage_conf(spark.sparkContext._jsc.hadoopConfiguration())
    meta_client = java_class(spark, "org.apache.hudi.common.table.HoodieTableMetaClient")
    return meta_client.builder().setConf(conf).setBasePath(base_path).build()


def _completed_timeline(spark: SparkSession, base_path: str) -> Any:
    return _meta_client(spark, base_path).getActiveTimeline().getCommitsTimeline().filterCompletedInstants()


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
    metadata = java_class(spark, TIMELINE_UTILS).getCommitMetadata(last.get(), timeline)
    return {str(key): str(value) for key, value in dict(metadata.getExtraMetadata()).items()}


def completed_commits(spark: SparkSession, base_path: str, *, after: str | None = None) -> list[CommitSummary]:
    """Completed commits of the active timeline (commit, deltacommit, replacecommit), oldest first.

    ``after``: only the commits requested after this instant. A run reads the whole timeline once (to
    reconcile, :func:`read_table_state`) and, after its write, only what its write added: each commit's
    metadata is read once.
    """
    if not table_exists(spark, base_path):
        return []
    timeline = _completed_timeline(spark, base_path)
    if after is not None:
        timeline = timeline.findInstantsAfter(after)
    return [summary for summary, _ in _summaries(spark, timeline)]


def _summaries(spark: SparkSession, timeline: Any) -> list[tuple[CommitSummary, dict[str, Any]]]:
    """Each completed instant of ``timeline`` with its commit metadata as JSON (read once), oldest first.

    Four gateway calls a commit (the metadata, its JSON, the instant's time and action); everything else is read
    from the JSON in Python (:func:`commit_summary`). Reading each write statistic through the gateway cost about
    17 ms a commit locally, and the active timeline holds 20 to 30 commits (Hudi's archival bounds). A commit's JSON
    of more than 8 KB (one that writes many partitions) crosses the gateway without waiting only from a thread whose
    connection is without delay (:func:`etl.jvm.gateway_without_delay`; 40 ms a commit otherwise: docs/decisions/046
    and 047).
    """
    utils = java_class(spark, TIMELINE_UTILS)
    summaries = []
    for instant in timeline.getInstants():
        metadata = json.loads(str(utils.getCommitMetadata(instant, timeline).toJsonString()))
        summary = commit_summary(str(instant.requestedTime()), str(instant.getAction()), metadata)
        summaries.append((summary, metadata))
    return summaries


def _write_stats(metadata: dict[str, Any]) -> list[dict[str, Any]]:
    return [stat for stats in (metadata.get("partitionToWriteStats") or {}).values() for stat in stats or ()]


def commit_summary(instant: str, action: str, metadata: dict[str, Any]) -> CommitSummary:
    """Pure: one commit's summary from its metadata as Hudi serialises it (``HoodieCommitMetadata.toJsonString``).

    The counts are Hudi's own: inserts as ``fetchTotalInsertRecordsWritten`` (write statistics with a previous
    commit), updates as ``fetchTotalUpdateRecordsWritten``, deletes the sum of ``numDeletes``; the rows, files and
    bytes rewritten for updates and deletes from the statistics of Parquet files (:func:`rewritten_for_changes`).
    """
    stats = _write_stats(metadata)
    extra = metadata.get("extraMetadata") or {}
    raw_ids = extra.get(FILE_IDS_METADATA)
    rewritten = [r for r in map(rewritten_for_changes, stats) if r is not None]
    return CommitSummary(
        instant=instant,
        action=action,
        file_ids=tuple(json.loads(raw_ids)) if raw_ids else (),
        run_id=extra.get(RUN_ID_METADATA) or None,
        index=extra.get(INDEX_METADATA) or None,
        inserts=sum(int(stat.get("numInserts") or 0) for stat in stats if stat.get("prevCommit") is not None),
        updates=sum(int(stat.get("numUpdateWrites") or 0) for stat in stats),
        deletes=sum(int(stat.get("numDeletes") or 0) for stat in stats),
        rows_rewritten=sum(rows for rows, _ in rewritten),
        files_rewritten=len(rewritten),
        bytes_rewritten=sum(size for _, size in rewritten),
        supersedes=supersedes_files(metadata, stats),
    )


def supersedes_files(metadata: dict[str, Any], stats: list[dict[str, Any]]) -> bool:
    """Pure: whether a commit left files that Hudi's cleaner deletes once they are older than the retained commits.

    That is a new version of an existing file group's base file (a Parquet write statistic with a ``prevCommit``: the
    earlier version becomes an old file slice), or file groups replaced (``partitionToReplaceFileIds``, an
    ``insert_overwrite``). A commit that only created file groups (inserts into new files) leaves nothing to clean.
    Log files are not counted: an appended log block supersedes nothing until a compaction writes a new base file.
    """
    if any(file_ids for file_ids in (metadata.get("partitionToReplaceFileIds") or {}).values()):
        return True
    return any(
        str(stat.get("path") or "").endswith(".parquet") and stat.get("prevCommit") not in (None, "null")
        for stat in stats
    )


def rewritten_for_changes(stat: dict[str, Any]) -> tuple[int, int] | None:
    """Pure: (stored rows, their bytes) of a base file that a COPY_ON_WRITE commit rewrote for updates and deletes
    which MERGE_ON_READ would have logged instead; None for any other write statistic.

    Such a file is a new version of a file group (``prevCommit``) that either took no insert, or took inserts but
    also updates or deletes and holds at least :data:`etl.hudi.options.MERGE_ON_READ_SMALL_FILE_BYTES` of stored
    rows: COPY_ON_WRITE gives inserts to any file under 100 MB, MERGE_ON_READ only to one under that limit, so such
    a group would log its updates and deletes and its inserts would go to a small group (the fleet's 200,000-row
    dimensions: one 7.4 MB group, rewritten by every commit under COPY_ON_WRITE, logged under MERGE_ON_READ). The
    stored rows are Hudi's ``numWrites`` less ``numInserts``, and their bytes that share of the file's.
    """
    if not str(stat.get("path") or "").endswith(".parquet") or stat.get("prevCommit") in (None, "null"):
        return None
    rows, size = int(stat.get("numWrites") or 0), int(stat.get("fileSizeInBytes") or 0)
    inserts = int(stat.get("numInserts") or 0)
    if not inserts:
        return rows, size
    if not int(stat.get("numUpdateWrites") or 0) + int(stat.get("numDeletes") or 0) or rows <= inserts:
        return None
    stored_bytes = size * (rows - inserts) // rows
    return (rows - inserts, stored_bytes) if stored_bytes >= MERGE_ON_READ_SMALL_FILE_BYTES else None


@dataclass(frozen=True)
class HudiTableState:
    """What a run knows of a table before it writes, read once (:func:`read_table_state`) and passed down.

    ``exists``: ``hoodie.properties`` is there. ``uncommitted``: it exists but no instant of its active
    timeline ever completed (a killed first commit: :func:`discard_uncommitted_table`). ``commits``: the
    completed commits of the active timeline, oldest first. ``encoded_partitions``: the stored partition
    layout (``hoodie.datasource.write.partitionpath.urlencode`` as Hudi recorded it in ``hoodie.properties`` when it
    created the table, absent = false; Hudi does not check a later write's setting against it: every write passes
    it back, :mod:`etl.hudi.partition_paths`; None: no table). ``schema``: the table's schema as Spark's Hudi
    reader gives it, meta columns included (None: no table or no commit yet). ``rows`` / ``file_groups`` /
    ``bytes``: the table's size from the write statistics of the active timeline (each file group's latest base
    file; MERGE_ON_READ log blocks not counted; file groups last written in archived commits are not seen, so
    after archival a lower bound). ``table_version``: Hudi's table version from ``hoodie.properties``
    (:mod:`etl.hudi.table_version`). Fields are only ever added.
    """

    base_path: str
    exists: bool = False
    uncommitted: bool = False
    commits: tuple[CommitSummary, ...] = ()
    encoded_partitions: bool | None = None
    schema: T.StructType | None = None
    rows: int = 0
    file_groups: int = 0
    bytes: int = 0
    table_version: int | None = None  # hoodie.table.version (etl.hudi.table_version); None: no table

    @property
    def index(self) -> str | None:
        """The index of the table's last ODP commit (:func:`stored_index`)."""
        return stored_index(list(self.commits))

    @property
    def data_schema(self) -> T.StructType | None:
        """The data schema (Hudi meta columns left out, ``_hoodie_is_deleted`` kept): what writes align to."""
        return data_schema(self.schema) if self.schema is not None else None


def read_table_state(spark: SparkSession, base_path: str) -> HudiTableState:
    """The table's state in one read: one existence check and, for a table, one meta client (its properties, its
    active timeline with each completed commit's metadata, its schema from the latest commit). No Spark job."""
    if not table_exists(spark, base_path):
        return HudiTableState(base_path)
    meta_client = _meta_client(spark, base_path)
    table_config = meta_client.getTableConfig()
    version = int(table_config.getTableVersion().versionCode())
    active = meta_client.getActiveTimeline()
    encoded = str(table_config.getUrlEncodePartitioning()).lower() == "true"
    if active.filterCompletedInstants().empty():
        return HudiTableState(
            base_path, exists=True, uncommitted=True, encoded_partitions=encoded, table_version=version
        )
    summaries = _summaries(spark, active.getCommitsTimeline().filterCompletedInstants())
    commits = tuple(summary for summary, _ in summaries)
    rows, file_groups, size = _size(summaries)
    schema = _schema(spark, meta_client) if commits else None
    return HudiTableState(base_path, True, False, commits, encoded, schema, rows, file_groups, size, version)


def _size(summaries: list[tuple[CommitSummary, dict[str, Any]]]) -> tuple[int, int, int]:
    """Pure: (rows, file groups, bytes) of the latest base file of each file group the commits wrote and did not
    replace."""
    latest: dict[tuple[str, str], tuple[int, int]] = {}
    for summary, metadata in summaries:
        replaced = metadata.get("partitionToReplaceFileIds") if summary.action == "replacecommit" else None
        for partition, file_ids in (replaced or {}).items():
            for file_id in file_ids or ():
                latest.pop((str(partition), str(file_id)), None)
        for stat in _write_stats(metadata):
            if str(stat.get("path") or "").endswith(".parquet"):
                key = (str(stat.get("partitionPath")), str(stat.get("fileId")))
                latest[key] = (int(stat.get("numWrites") or 0), int(stat.get("fileSizeInBytes") or 0))
    return sum(r for r, _ in latest.values()), len(latest), sum(b for _, b in latest.values())


def _schema(spark: SparkSession, meta_client: Any) -> T.StructType:
    """The table's schema as Spark's Hudi reader resolves it (from the latest commit's schema), without building a
    relation: Hudi's TableSchemaResolver and its Avro -> Spark conversion on the meta client already built."""
    avro = java_class(spark, "org.apache.hudi.common.table.TableSchemaResolver")(meta_client).getTableAvroSchema(True)
    struct = java_class(spark, "org.apache.hudi.AvroConversionUtils").convertAvroSchemaToStructType(avro)
    return T.StructType.fromJson(json.loads(struct.json()))


def cleaning_due(state: HudiTableState, *, merge_on_read: bool) -> bool:
    """Pure: whether this write lets Hudi clean (``hoodie.clean.automatic``), from the table's active timeline.

    Hudi 1.0.2 plans a clean once ``hoodie.clean.trigger.max.commits`` commits followed the last clean, and writes a
    clean instant only when the plan deletes a file. A table whose commits never supersede a file (an append-only
    table whose inserts create new file groups, such as a day-partitioned event table) therefore never gets a clean
    instant, and from its 10th commit on every commit plans a clean again, over every partition (no earlier clean to
    plan incrementally from): 1.2 s of Spark jobs at 62 partitions on 2 cores, and it grows by a partition a day
    (docs/decisions/008).

    Due unless the table is COPY_ON_WRITE and no commit of its active timeline superseded a file
    (:attr:`CommitSummary.supersedes`): then the cleaner has nothing to delete. MERGE_ON_READ always: each compaction
    leaves the older file slices, its log files, to clean. A file superseded by commit S becomes deletable once S
    is older than the 10 commits the cleaner keeps (``hoodie.clean.commits.retained``), and S stays in the active
    timeline for at least 20 commits (``hoodie.keep.min.commits``), so every run in between lets Hudi clean, as it
    does by default; files superseded by commits already archived were cleaned then. A commit of this run that
    supersedes a file leaves nothing deletable yet; the next runs see it.
    """
    if merge_on_read or not state.exists:
        return True
    return any(commit.supersedes for commit in state.commits)


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
