"""Delete tombstones of current-mode tables: a committed delete is newer data than a late, older change.

Hudi removes a deleted record, so a late change older than the delete would find no stored record and
come back as an insert. The tombstones remember, per key, the ``_odp_seq`` of the last committed delete,
beside the table (never inside its base path, never in a catalog):
``<raw_root>/<database>/_odp_tombstones/<target_table>/``. A run drops every incoming insert / update
whose ``_odp_seq`` is not newer than its key's tombstone, writes its own deletes before the table's
commit, and a full load clears them.

Storage: plain Parquet, append-only. Each run with deletes writes one folder ``log/<run_id>/`` (key columns
and ``_odp_seq``); a reader takes the newest ``_odp_seq`` per key over every folder, so a folder written
twice (a retried run id) or a leftover of a run killed mid-write changes nothing. When more than
:data:`MAX_LOG_FOLDERS` folders have gathered, the run after its table's commit folds them into one and
deletes the rest (a crash in between leaves duplicates, never a gap). A Hudi table at the same path (how
ODP stored tombstones before) is read as one more folder and folded away by the next consolidation.
One Parquet write per run instead of a second Hudi commit: no timeline, metadata table or index to
maintain for a few thousand keys.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import reduce
from typing import Any

from py4j.protocol import Py4JJavaError
from pyspark.errors.exceptions.captured import CapturedException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from etl.change_frame import DELETE, OP, SEQ
from etl.hudi.timeline import table_exists
from etl.jvm import filesystem_path
from odp.naming import TOMBSTONE_FOLDER

STALE = "_odp_stale"  # transient column: an upsert at or below its key's tombstone
_TOMBSTONE_SEQ = "_odp_tombstone_seq"
LOG_FOLDER = "log"
MAX_LOG_FOLDERS = 24  # folders read by every run before they are folded into one
# A log of at most this many bytes is read by one task when the batch is one partition (``read_tombstones``): one
# task reads 32 MiB of keys in about a second, and a small table's log is a few kilobytes.
ONE_TASK_LOG_BYTES = 32 * 1024 * 1024
CONSOLIDATED_SUFFIX = "-consolidated"
SCHEMA_MISMATCH = "CANNOT_MERGE_SCHEMAS"  # Spark's error class: the log's folders disagree on a column's type


def tombstone_rows(latest: DataFrame, keys: Sequence[str]) -> DataFrame:
    """Pure: the tombstones a batch leaves, from its last change per key: key and ``_odp_seq`` of each delete."""
    return latest.where(F.col(OP) == F.lit(DELETE)).select(*keys, SEQ)


def newest_per_key(tombstones: DataFrame, keys: Sequence[str]) -> DataFrame:
    """Pure: one row per key with its newest ``_odp_seq`` (the tombstone log may hold a key several times)."""
    return tombstones.groupBy(*keys).agg(F.max(SEQ).alias(SEQ))


def mark_stale(latest: DataFrame, tombstones: DataFrame, keys: Sequence[str]) -> DataFrame:
    """Pure: ``latest`` plus ``_odp_stale``, true for an insert / update not newer than its key's tombstone.

    ``tombstones`` holds one row per key (:func:`newest_per_key`). Deletes are never stale (a delete older
    than another delete changes nothing). ``latest`` holds one change per key, so a batch's own deletes
    can never mark its own upserts stale.
    """
    stored = tombstones.select(*keys, F.col(SEQ).alias(_TOMBSTONE_SEQ))
    stale = (F.col(OP) != F.lit(DELETE)) & F.col(_TOMBSTONE_SEQ).isNotNull() & (F.col(SEQ) <= F.col(_TOMBSTONE_SEQ))
    joined = latest.join(stored, on=list(keys), how="left")
    return joined.select(*latest.columns, stale.alias(STALE))  # the frame's column order, plus the flag


def read_tombstones(spark: SparkSession, path: str, keys: Sequence[str], *, one_task: bool = False) -> DataFrame | None:
    """The stored tombstones (key and ``_odp_seq``, one row per key), or None when the table has none.

    ``one_task``: the batch they will be joined with is one Spark partition (``TablePlan.one_task``). Then a log
    of at most :data:`ONE_TASK_LOG_BYTES` is read into one partition too, and joined by a merge join
    (``hint("merge")``): neither the newest per key nor the join needs an exchange or a broadcast, each of which
    is a Spark job of its own under adaptive query execution (the stale count is then one job, and Hudi's input
    none). A larger log, or a larger batch, is read and joined as Spark plans it. The fold
    (:func:`consolidate_tombstones`) reads with ``one_task`` too: a small log is then folded by one task.
    """
    frames = []
    legacy = table_exists(spark, path)
    if legacy:  # stored by an earlier release as a Hudi table
        frames.append(spark.read.format("hudi").load(path).select(*keys, SEQ))
    if _log_data_files(spark, path):
        frames.append(_read_log(spark, path).select(*keys, SEQ))
    if not frames:
        return None
    union = frames[0] if len(frames) == 1 else frames[0].unionByName(frames[1])
    if one_task and not legacy and _log_bytes(spark, path) <= ONE_TASK_LOG_BYTES:
        return newest_per_key(union.coalesce(1), keys).hint("merge")
    return newest_per_key(union, keys)


def _read_log(spark: SparkSession, path: str) -> DataFrame:
    """Every folder of the log as one frame: one scan under Spark's merged schema; folders whose key types differ
    (a source that widened its key, int then bigint: ``CANNOT_MERGE_SCHEMAS``) are read one by one and unioned by
    name, which widens each key to the wider type. The fold then writes the wider type (the log heals)."""
    try:
        return spark.read.option("recursiveFileLookup", "true").option("mergeSchema", "true").parquet(_log_path(path))
    except (CapturedException, Py4JJavaError) as error:
        if SCHEMA_MISMATCH not in str(error):
            raise
    folders = [spark.read.parquet(folder) for folder in _data_folders(spark, path)]
    return reduce(DataFrame.unionByName, folders)


def write_tombstones(spark: SparkSession, rows: DataFrame, path: str, *, run_id: str) -> None:
    """Append a run's tombstones as one Parquet folder ``log/<run_id>``; an empty batch writes an empty file.

    Called only for a batch that holds deletes (the caller counted them). Appends, never overwrites: a
    run id seen twice (a retried write, a replayed streaming batch) adds a duplicate, never drops a delete.
    """
    _check_tombstone_path(path)
    rows.coalesce(1).write.mode("append").parquet(f"{_log_path(path)}/{_folder_name(run_id)}")


def consolidate_tombstones(spark: SparkSession, path: str, keys: Sequence[str], *, run_id: str) -> bool:
    """Fold the log into one folder once it holds more than :data:`MAX_LOG_FOLDERS` folders, or a Hudi table
    of an earlier release is there; returns whether it did. Call it after the table's commit, under its lease.

    The folded folder is complete before anything else is deleted: a crash in between leaves duplicates,
    which readers take the newest of.
    """
    _check_tombstone_path(path)
    legacy = table_exists(spark, path)
    folders = _log_folders(spark, path)
    if not legacy and len(folders) <= MAX_LOG_FOLDERS:
        return False
    # a log of at most ONE_TASK_LOG_BYTES is folded by one task, with no exchange
    stored = read_tombstones(spark, path, keys, one_task=True)
    if stored is None:
        return False
    target = f"{_folder_name(run_id)}{CONSOLIDATED_SUFFIX}"
    stored.coalesce(1).write.mode("overwrite").parquet(f"{_log_path(path)}/{target}")
    filesystem, root = filesystem_path(spark, path)
    for status in filesystem.listStatus(root):
        if status.getPath().getName() != LOG_FOLDER:
            filesystem.delete(status.getPath(), True)  # the Hudi table of an earlier release
    for status in filesystem.listStatus(filesystem_path(spark, _log_path(path))[1]):
        if status.getPath().getName() != target:
            filesystem.delete(status.getPath(), True)
    return True


def clear_tombstones(spark: SparkSession, path: str) -> None:
    """Delete a table's tombstones (a full load is the truth: it starts the table afresh).

    Raises:
        ValueError: ``path`` is not a tombstone path (never delete anything else).
    """
    _check_tombstone_path(path)
    filesystem, hadoop_path = filesystem_path(spark, path)
    if filesystem.exists(hadoop_path):
        filesystem.delete(hadoop_path, True)


def _check_tombstone_path(path: str) -> None:
    if f"/{TOMBSTONE_FOLDER}/" not in path:
        raise ValueError(f"not a tombstone path: {path}")


def _log_path(path: str) -> str:
    return f"{path.rstrip('/')}/{LOG_FOLDER}"


def _folder_name(run_id: str) -> str:
    """A run id as one folder name: no separators, no leading ``_`` / ``.`` (Spark skips those as hidden)."""
    cleaned = "".join(c if c.isalnum() or c in "-" else "-" for c in run_id).strip("-")
    return f"run-{cleaned or 'unnamed'}"


def _log_folders(spark: SparkSession, path: str) -> list[str]:
    filesystem, log = filesystem_path(spark, _log_path(path))
    if not filesystem.exists(log):
        return []
    return [s.getPath().getName() for s in filesystem.listStatus(log) if s.isDirectory() and not _hidden(s)]


def _log_data_files(spark: SparkSession, path: str) -> bool:
    """Whether the log holds a Parquet file Spark would read (not under ``_temporary``, not hidden)."""
    return next(_data_folders(spark, path), None) is not None


def _data_folders(spark: SparkSession, path: str) -> Iterator[str]:
    """The log's folders that hold a Parquet file Spark would read, listed lazily (a killed write's leftovers hold
    none)."""
    filesystem, log = filesystem_path(spark, _log_path(path))
    if not filesystem.exists(log):
        return
    for folder in filesystem.listStatus(log):
        if not folder.isDirectory() or _hidden(folder):
            continue
        if any(f.getPath().getName().endswith(".parquet") for f in filesystem.listStatus(folder.getPath())):
            yield folder.getPath().toString()


def _log_bytes(spark: SparkSession, path: str) -> int:
    """The bytes under the log folder, every file counted (one call; an upper bound of what a reader reads)."""
    filesystem, log = filesystem_path(spark, _log_path(path))
    return int(filesystem.getContentSummary(log).getLength())


def _hidden(status: Any) -> bool:
    return status.getPath().getName().startswith(("_", "."))
