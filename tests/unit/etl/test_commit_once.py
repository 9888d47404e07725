"""commit_once, the one exactly-once sequence, with the timeline reads replaced by a recorded fake (no Spark)."""

from __future__ import annotations

import json

import pytest

import etl.hudi.commit
from etl.errors import CommitNotFoundError
from etl.hudi.commit import CommitResult, CommitTag, commit_once
from etl.hudi.timeline import CommitSummary
from odp.faults import on_fault


def summary(instant: str, run_id: str | None, *file_ids: str) -> CommitSummary:
    return CommitSummary(instant, "commit", file_ids, run_id, inserts=2, updates=1, deletes=0)


class FakeTimeline:
    """The table's completed commits; a write appends ``made``. Records every read and its ``after``."""

    def __init__(self, commits: list[CommitSummary], made: CommitSummary | None) -> None:
        self.commits, self.made, self.reads = list(commits), made, []

    def completed_commits(self, spark: object, base_path: str, *, after: str | None = None) -> list[CommitSummary]:
        self.reads.append(after)
        return [c for c in self.commits if after is None or c.instant > after]

    def write(self, tag: CommitTag) -> str:
        assert self.made is not None
        self.commits.append(self.made)
        return f"wrote {json.loads(tag.metadata()['_odp_file_ids'])}"


@pytest.fixture
def timeline(monkeypatch: pytest.MonkeyPatch) -> FakeTimeline:
    fake = FakeTimeline([summary("001", "old-run", "f0"), summary("002", None)], summary("003", "run-1", "f1", "f2"))
    monkeypatch.setattr(etl.hudi.commit, "completed_commits", fake.completed_commits)
    return fake


def test_a_new_commit_is_written_found_after_the_last_instant_seen_and_announced(timeline: FakeTimeline) -> None:
    seen: list[dict[str, str]] = []
    with on_fault("streaming.after_commit", lambda **context: seen.append(context)):
        result = commit_once(
            None, "/lake/t", CommitTag("run-1", ("f2", "f1")), timeline.write, job="streaming", label="src.app.t"
        )
    assert result == CommitResult("003", 2, 1, 0, replayed=False, written="wrote ['f1', 'f2']")
    # the whole timeline once, before the write; after it only what follows the last instant seen
    assert timeline.reads == [None, "002"]
    assert seen == [{"table_id": "src.app.t", "instant": "003"}]


def test_a_batch_committed_already_is_returned_and_nothing_is_written(timeline: FakeTimeline) -> None:
    timeline.commits.append(summary("003", "run-1", "f1"))
    timeline.made = None  # a write would fail the test
    seen: list[dict[str, str]] = []
    with on_fault("streaming.after_commit", lambda **context: seen.append(context)):
        result = commit_once(None, "/lake/t", CommitTag("run-1", ("f1",)), timeline.write, job="streaming", label="t")
    assert result == CommitResult("003", 2, 1, 0, replayed=True, written=None)
    assert timeline.reads == [None]
    assert seen == []


def test_commits_the_caller_read_already_are_not_read_again(timeline: FakeTimeline) -> None:
    seen = timeline.completed_commits(None, "/lake/t")
    result = commit_once(None, "/lake/t", CommitTag("run-1", ("f1",)), timeline.write, job="etl", label="t", seen=seen)
    assert result.instant == "003"
    assert timeline.reads == [None, "002"]  # the caller's read, then the bounded find


def test_a_write_without_its_commit_is_an_error(timeline: FakeTimeline) -> None:
    timeline.made = summary("003", "another-run", "f9")
    with pytest.raises(CommitNotFoundError, match="t: the Hudi write returned but no completed commit of run run-1"):
        commit_once(None, "/lake/t", CommitTag("run-1", ("f1",)), timeline.write, job="etl", label="t")


def test_the_tag_is_the_commits_metadata() -> None:
    tag = CommitTag("run-1", ("b", "a"), extra={"_odp_consumed": "{}"})
    assert tag.metadata() == {"_odp_file_ids": '["a", "b"]', "_odp_run_id": "run-1", "_odp_consumed": "{}"}
