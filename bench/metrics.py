"""What a wave did to one table's folder, and what it would have cost on S3: pure functions over snapshots.

- ``table_io``: bytes written by kind (``data``: base files, ``log``: Hudi log files, ``metadata``:
  everything under ``.hoodie/`` and the partition markers, ``_SUCCESS``), files written, deleted and
  touched (pre-existing file groups that got a new version or lost a file). Hadoop's local ``.crc``
  side files are not counted (S3 has none).
- ``write_amplification``: bytes written / bytes of the changed rows (the landed files holding them).
- ``s3_requests``: the requests the wave would make on S3: PUTs (S3A: one per file, a multipart
  upload above 128 MiB in 64 MiB parts plus initiate and complete), DELETEs from the files removed,
  GET / HEAD and LIST from Hadoop's FileSystem statistics (readOps, largeReadOps, writeOps), when the
  file system counts them (``bench.fs_stats``; Hadoop's local file system counts bytes but no operations).
- ``fixed_and_marginal``: least-squares fit of seconds = fixed + per_change x changes.
"""

from __future__ import annotations

import math
import os
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

DATA, LOG, METADATA = "data", "log", "metadata"
KINDS = (DATA, LOG, METADATA)
MULTIPART_THRESHOLD = 128 * 1024 * 1024  # fs.s3a.multipart.threshold default
MULTIPART_PART = 64 * 1024 * 1024  # fs.s3a.multipart.size default
Snapshot = dict[str, tuple[int, float]]
TIMELINE = ".hoodie/timeline/"  # table version 8 (Hudi 1.x's default); archived instants in its history/ folder
TIMELINE_V6 = ".hoodie/"  # table version 6 (what ODP writes): instant files beside hoodie.properties
INSTANT_FILE = re.compile(r"\d{14,17}[._]")  # <instant time>.<action>[.<state>], or a completion-time name


def kind(relative: str) -> str | None:
    """The kind of a file by its path inside a table folder; ``None`` for Hadoop's local ``.crc`` files."""
    name = relative.rsplit("/", 1)[-1]
    if name.endswith(".crc"):
        return None
    if relative.startswith(".hoodie/") or "/.hoodie/" in relative or name.startswith(".hoodie_partition_metadata"):
        return METADATA
    if ".log." in name:
        return LOG
    if name.endswith(".parquet") or name.endswith(".orc") or name.endswith(".hfile"):
        return DATA
    return METADATA


def file_group(relative: str) -> str:
    """The file group a data or log file belongs to: folder + Hudi file id (a plain file: its own path).

    Hudi base files are ``<fileId>_<writeToken>_<instant>.parquet``, log files
    ``.<fileId>_<instant>.log.<version>_<writeToken>``.
    """
    folder, _, name = relative.rpartition("/")
    stem = name[1:] if name.startswith(".") and ".log." in name else name
    file_id = stem.split("_", 1)[0] if "_" in stem else stem
    return f"{folder}/{file_id}"


@dataclass
class TableIO:
    """One table folder, one wave."""

    bytes_written: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    files_written: int = 0
    files_deleted: int = 0
    files_touched: int = 0
    put_requests: int = 0
    data_files_after: int = 0  # data and log files in the folder after the wave (all versions kept)
    timeline_files_after: int = 0  # instant files of the active timeline after the wave (.hoodie/timeline/)

    @property
    def total_bytes_written(self) -> int:
        return sum(self.bytes_written.values())

    def add(self, other: TableIO) -> None:
        for name in KINDS:
            self.bytes_written[name] += other.bytes_written[name]
        self.files_written += other.files_written
        self.files_deleted += other.files_deleted
        self.files_touched += other.files_touched
        self.put_requests += other.put_requests
        self.data_files_after += other.data_files_after
        self.timeline_files_after += other.timeline_files_after

    def summary(self) -> dict[str, Any]:
        return {**asdict(self), "bytes_written_total": self.total_bytes_written}


def under(snapshot: Snapshot, root: Path) -> dict[str, tuple[int, float]]:
    """The snapshot's files below ``root``, keyed by their path relative to it (``/``-separated)."""
    prefix = str(root).rstrip(os.sep) + os.sep
    return {
        path[len(prefix) :].replace(os.sep, "/"): state for path, state in snapshot.items() if path.startswith(prefix)
    }


def is_active_instant(relative: str) -> bool:
    """A file of the active timeline, not a ``.crc``: directly in ``.hoodie/timeline/`` (table version 8; archived
    instants are in its ``history/`` folder), or an instant file directly in ``.hoodie/`` (table version 6;
    archived instants are in ``.hoodie/archived/``)."""
    if kind(relative) is None:
        return False
    for folder in (TIMELINE, TIMELINE_V6):
        name = relative[len(folder) :]
        if relative.startswith(folder) and "/" not in name:
            return folder == TIMELINE or INSTANT_FILE.match(name) is not None
    return False


def put_requests(size: int) -> int:
    """PUT-class requests to upload one object of ``size`` bytes with S3A's defaults."""
    if size <= MULTIPART_THRESHOLD:
        return 1
    return math.ceil(size / MULTIPART_PART) + 2  # initiate, parts, complete


def table_io(before: Snapshot, after: Snapshot, root: Path) -> TableIO:
    """What changed in the table folder ``root`` between two snapshots (``bench.measure.snapshot``)."""
    old, new = under(before, root), under(after, root)
    out = TableIO()
    changed_groups: set[str] = set()
    for path, state in new.items():
        file_kind = kind(path)
        if file_kind is None or old.get(path) == state:
            continue
        out.bytes_written[file_kind] += state[0]
        out.files_written += 1
        out.put_requests += put_requests(state[0])
        if file_kind in (DATA, LOG):
            changed_groups.add(file_group(path))
    for path in old.keys() - new.keys():
        file_kind = kind(path)
        if file_kind is None:
            continue
        out.files_deleted += 1
        if file_kind in (DATA, LOG):
            changed_groups.add(file_group(path))
    existing_groups = {file_group(path) for path in old if kind(path) in (DATA, LOG)}
    out.files_touched = len(changed_groups & existing_groups)
    out.data_files_after = sum(1 for path in new if kind(path) in (DATA, LOG))
    out.timeline_files_after = sum(1 for path in new if is_active_instant(path))
    return out


def write_amplification(bytes_written: int, change_bytes: int) -> float | None:
    """Bytes written per byte of changed rows (None when nothing changed)."""
    return round(bytes_written / change_bytes, 2) if change_bytes > 0 else None


def s3_requests(io: TableIO, hadoop: dict[str, dict[str, int]] | None) -> dict[str, Any]:
    """The wave's S3 requests: PUT and DELETE from the files, GET / LIST from Hadoop's operation counts.

    ``hadoop``: FileSystem statistics per scheme (``bench.fs_stats.hadoop_statistics``). Where the file
    system counted no operation at all (the local one), GET and LIST are ``None`` and ``note`` says why.
    """
    out: dict[str, Any] = {"put": io.put_requests, "delete": io.files_deleted}
    ops = {"read_ops": 0, "large_read_ops": 0, "write_ops": 0}
    for stats in (hadoop or {}).values():
        for name in ops:
            ops[name] += int(stats.get(name, 0))
    if any(ops.values()):
        out["get_or_head"] = ops["read_ops"] - ops["large_read_ops"]
        out["list"] = ops["large_read_ops"]
        out["hadoop_write_ops"] = ops["write_ops"]
        out["source"] = "Hadoop FileSystem statistics"
    else:
        out["get_or_head"] = None
        out["list"] = None
        out["note"] = "the file system counted no operations (Hadoop's local file system counts bytes only)"
    return out


def table_bytes_read(hadoop: dict[str, dict[str, int]] | None, staging_bytes: int) -> int | None:
    """Bytes the wave read from the table folders: Hadoop's bytes read less the landed files' bytes (read
    at least once); ``None`` without statistics."""
    if not hadoop:
        return None
    read = sum(int(stats.get("bytes_read", 0)) for stats in hadoop.values())
    return max(0, read - staging_bytes)


def fixed_and_marginal(points: list[tuple[int, float]]) -> dict[str, Any]:
    """Least squares of seconds = fixed + per_change x changes over ``(changes, seconds)`` points.

    With one distinct change count the fit has no slope: ``per_change_seconds`` is ``None`` and
    ``fixed_seconds`` is the mean.
    """
    if not points:
        return {"points": 0, "fixed_seconds": None, "per_change_seconds": None}
    count = len(points)
    mean_x = sum(x for x, _ in points) / count
    mean_y = sum(y for _, y in points) / count
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    if spread == 0:
        return {"points": count, "fixed_seconds": round(mean_y, 3), "per_change_seconds": None}
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / spread
    return {
        "points": count,
        "fixed_seconds": round(mean_y - slope * mean_x, 3),
        "per_change_seconds": round(slope, 7),
    }


def table_group(table: str) -> str:
    """Pure: a fleet table's group, its name without the trailing number (``fact_10k_01`` -> ``fact_10k``)."""
    head, _, tail = table.rpartition("_")
    return head if head and tail.isdigit() else table


def step_seconds_by_group(runs: Sequence[tuple[str, Mapping[str, float]]]) -> dict[str, Any]:
    """Pure: where ODP's table runs spent their time, per table group (:func:`table_group`): the runs counted and the
    median seconds of each step and write phase (``TableRun.step_seconds``) over them, in the order the runs name
    them. ``runs``: (table, step seconds) of each table run."""
    grouped: dict[str, list[Mapping[str, float]]] = {}
    for table, seconds in runs:
        grouped.setdefault(table_group(table), []).append(seconds)
    out: dict[str, Any] = {}
    for group, measured in sorted(grouped.items()):
        names = list(dict.fromkeys(name for seconds in measured for name in seconds))
        out[group] = {
            "runs": len(measured),
            "median_seconds": {
                name: round(statistics.median(s[name] for s in measured if name in s), 3) for name in names
            },
        }
    return out
