"""Commit once: the one exactly-once sequence of every job that writes a Hudi table.

1. already committed? A completed data commit carrying this run's id (a File Processor run id, a
   micro-batch tag) means an earlier attempt committed and crashed before its bookkeeping: it is
   returned, nothing is written;
2. the write (the caller's, e.g. the File Processor's tombstone-aware write), with the commit's
   metadata (the run id and the ids it consumed) to put in the commit;
3. the commit it made, found among the commits after the last instant seen before the write only
   (never the whole timeline a second time);
4. the fault point ``<job>.after_commit`` (odp.faults): committed, nothing else recorded yet.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from pyspark.sql import SparkSession

from etl.errors import CommitNotFoundError
from etl.hudi.options import FILE_IDS_METADATA, RUN_ID_METADATA
from etl.hudi.timeline import CommitSummary, commit_of_run, completed_commits
from odp.faults import fault_point

Written = TypeVar("Written")


@dataclass(frozen=True)
class CommitTag:
    """What a commit records about itself: the run (or batch) that made it and the ids it consumed (landed
    file ids, stream shard positions, source commits), plus any further ``_odp_`` metadata."""

    run_id: str
    consumed: tuple[str, ...]
    extra: Mapping[str, str] = field(default_factory=dict)

    def metadata(self) -> dict[str, str]:
        """The commit's extra metadata (``_odp_file_ids`` sorted, ``_odp_run_id``, then ``extra``)."""
        return {FILE_IDS_METADATA: json.dumps(sorted(self.consumed)), RUN_ID_METADATA: self.run_id, **self.extra}


@dataclass(frozen=True)
class CommitResult(Generic[Written]):
    """The commit of a run: its instant and write statistics. ``replayed``: an earlier attempt made it (nothing
    was written now, ``written`` is None); else ``written`` is what the caller's write returned."""

    instant: str
    inserts: int
    updates: int
    deletes: int
    replayed: bool = False
    written: Written | None = None


def _result(commit: CommitSummary, *, replayed: bool, written: Written | None = None) -> CommitResult[Written]:
    return CommitResult(commit.instant, commit.inserts, commit.updates, commit.deletes, replayed, written)


def commit_once(
    spark: SparkSession,
    base_path: str,
    tag: CommitTag,
    write: Callable[[CommitTag], Written],
    *,
    job: str,
    label: str,
    seen: Sequence[CommitSummary] | None = None,
) -> CommitResult[Written]:
    """Commit ``tag`` to the table at ``base_path`` exactly once through ``write`` (which puts
    ``tag.metadata()`` in its commit). ``job``: the fault point's area (``etl``, ``streaming``, ``datasets``);
    ``label``: the table in messages and the fault point's ``table_id``. ``seen``: the table's completed
    commits when the caller read them already (then the timeline is not read before the write).

    Raises:
        CommitNotFoundError: the write returned but no completed commit carries ``tag.run_id``.
        whatever ``write`` raises.
    """
    commits = list(seen) if seen is not None else completed_commits(spark, base_path)
    earlier = commit_of_run(commits, tag.run_id)
    if earlier is not None:
        return _result(earlier, replayed=True)
    written = write(tag)
    last_seen = commits[-1].instant if commits else None
    commit = commit_of_run(completed_commits(spark, base_path, after=last_seen), tag.run_id)
    if commit is None:
        raise CommitNotFoundError(f"{label}: the Hudi write returned but no completed commit of run {tag.run_id}")
    fault_point(f"{job}.after_commit", table_id=label, instant=commit.instant)
    return _result(commit, replayed=False, written=written)
