"""The plan of a File Processor table run, without Spark: landed files and commits in, what to do out."""

from __future__ import annotations

import pytest

from etl.errors import TableConfigError
from etl.file_processor.table_plan import TablePlan, plan_table_run, source_files
from etl.hudi.timeline import CommitSummary
from odp.config.models import TableMode
from odp.tracker import FileKind, TrackedFile
from tests.support.lake import table_config

CURRENT = table_config("orders")
HISTORICAL = table_config("events", mode=TableMode.HISTORICAL)


def landed(key: str, etag: str = "", *, kind: FileKind = FileKind.CDC, replay: bool | None = None) -> TrackedFile:
    return TrackedFile(
        table_id="src.app.t",
        file_id=f"id-{key}",
        bucket="staging",
        key=key,
        size=1,
        etag=etag or f'"etag-{key}"',
        landed_at="2026-01-01T00:00:00.000Z",
        file_kind=kind,
        replay=replay,
    )


def commit(instant: str, *file_ids: str, run_id: str | None = "run-0", index: str | None = "record") -> CommitSummary:
    return CommitSummary(instant, "commit", file_ids, run_id, 1, 0, 0, index=index)


def test_a_new_table_applies_every_landed_file_in_key_order() -> None:
    b, a = landed("k/2"), landed("k/1")
    assert plan_table_run(CURRENT, [b, a], [], {}) == TablePlan(reconcile=(), apply=(a, b), duplicates=())


def test_files_a_completed_commit_consumed_are_reconciled_by_instant_and_not_applied_again() -> None:
    one, two, three, four = landed("k/1"), landed("k/2"), landed("k/3"), landed("k/4")
    commits = [commit("20260102", "id-k/3"), commit("20260101", "id-k/1", "id-k/2"), commit("20260103")]
    plan = plan_table_run(CURRENT, [four, three, two, one], commits, {})
    assert plan.reconcile == (("20260101", (two, one)), ("20260102", (three,)))
    assert plan.apply == (four,)
    assert plan.duplicates == ()
    assert plan.reconciled == 3


def test_every_landed_file_done_already_plans_no_commit() -> None:
    one = landed("k/1")
    plan = plan_table_run(CURRENT, [one], [commit("20260101", "id-k/1")], {})
    assert plan == TablePlan(reconcile=(("20260101", (one,)),), apply=(), duplicates=())


def test_a_historical_table_skips_content_it_holds_already() -> None:
    old = landed("old/1", '"aaa"')
    copy, fresh, replayed = landed("k/1", '"aaa"'), landed("k/2", '"bbb"'), landed("k/3", '"aaa"', replay=True)
    plan = plan_table_run(HISTORICAL, [replayed, fresh, copy], [], {"aaa": old})
    assert plan.apply == (fresh, replayed)
    assert plan.duplicates == ((copy, old),)


def test_a_historical_file_with_the_content_of_a_file_reconciled_now_is_a_duplicate_of_that_commit() -> None:
    done, copy = landed("k/1", '"aaa"'), landed("k/2", '"aaa"')
    plan = plan_table_run(HISTORICAL, [copy, done], [commit("20260101", "id-k/1")], {})
    assert plan.reconcile == (("20260101", (done,)),)
    assert plan.apply == ()
    [(duplicate, original)] = plan.duplicates
    assert (duplicate, original.key, original.commit_instant) == (copy, "k/1", "20260101")


def test_a_current_table_applies_the_same_content_again() -> None:
    copy = landed("k/1", '"aaa"')
    plan = plan_table_run(CURRENT, [copy], [], {"aaa": landed("old/1", '"aaa"')})
    assert plan == TablePlan(reconcile=(), apply=(copy,), duplicates=())


def test_a_table_written_with_another_index_is_refused_before_anything_is_planned() -> None:
    bucketed = table_config("orders", index_buckets=4)
    with pytest.raises(TableConfigError, match=r"asks for the bucket:4 index .* written with the record index"):
        plan_table_run(bucketed, [landed("k/1")], [commit("20260101", "id-k/0", index="record")], {})
    # a compaction (no run id) records no index: the last ODP commit's counts
    plan = plan_table_run(bucketed, [], [commit("1", "id-k/0", index="bucket:4"), commit("2", run_id=None)], {})
    assert plan == TablePlan(reconcile=(), apply=(), duplicates=())


def test_source_files_number_the_plans_files_in_key_order() -> None:
    full, cdc = landed("k/1", kind=FileKind.FULL_LOAD), landed("k/2")
    sources = source_files([cdc, full], lambda uri: uri.replace("s3://staging/", "/lake/"))
    assert [(s.uri, s.key, s.order, s.is_full_load, s.file_id) for s in sources] == [
        ("/lake/k/1", "k/1", 0, True, "id-k/1"),
        ("/lake/k/2", "k/2", 1, False, "id-k/2"),
    ]


def test_a_file_set_aside_leaves_the_rest_in_order_and_is_quarantined_with_its_reason() -> None:
    one, two, three = landed("k/1"), landed("k/2"), landed("k/3")
    plan = plan_table_run(CURRENT, [three, two, one], [], {})
    after = plan.set_aside(two, "ChangeFileError: k/2: row 3: unknown Op 'Z'")
    assert after.apply == (one, three)
    assert after.quarantine == ((two, "ChangeFileError: k/2: row 3: unknown Op 'Z'"),)
    again = after.set_aside(three, "ChangeFileError: k/3: unreadable Parquet: not a Parquet file")
    assert again.apply == (one,)
    assert [f.key for f, _ in again.quarantine] == ["k/2", "k/3"]  # in the order found
    assert (again.reconcile, again.duplicates) == (plan.reconcile, plan.duplicates)
    assert again.set_aside(one, "x").apply == ()
    with pytest.raises(ValueError, match="k/2 is not among the files this run applies"):
        again.set_aside(two, "twice")


def test_a_historical_copy_of_a_file_set_aside_is_quarantined_with_it_not_skipped_as_applied() -> None:
    old = landed("old/1", '"ccc"')
    bad, copy, fresh, held = (
        landed("k/1", '"aaa"'),
        landed("k/2", '"aaa"'),
        landed("k/3", '"bbb"'),
        landed("k/4", '"ccc"'),
    )
    plan = plan_table_run(HISTORICAL, [held, fresh, copy, bad], [], {"ccc": old})
    assert plan.duplicates == ((copy, bad), (held, old))
    after = plan.set_aside(bad, "ChangeFileError: k/1: row 1: null key id")
    assert after.apply == (fresh,)
    assert after.duplicates == ((held, old),)  # a copy of applied content stays a duplicate
    assert after.quarantine == (
        (bad, "ChangeFileError: k/1: row 1: null key id"),
        (copy, "same content (ETag aaa) as k/1, quarantined by this run: ChangeFileError: k/1: row 1: null key id"),
    )
