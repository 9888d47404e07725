"""odp/planning.py: runs packed by estimated work, a large table alone with more workers, the capacity warning.

Expected figures are worked by hand from the model's named constants (docs/decisions/026): a table with one small
file costs TABLE_SECONDS (2.3 s); a run starts with RUN_START_SECONDS + FIRST_TABLE_WARM_UP_SECONDS (48 s)."""

from __future__ import annotations

import json

import pytest

from odp.contracts.batches import Batch
from odp.planning import (
    CHANGE_BYTES_PER_SECOND,
    FIRST_TABLE_WARM_UP_SECONDS,
    MAX_RUN_TABLE_ID_BYTES,
    RUN_START_SECONDS,
    TABLE_SECONDS,
    PlanTargets,
    RunShape,
    TableWork,
    capacity_warning,
    estimate,
    plan_runs,
)

START = RUN_START_SECONDS + FIRST_TABLE_WARM_UP_SECONDS


def small(n: int) -> TableWork:
    return TableWork(f"t{n}", files=1, bytes=0)


def targets(**changes: object) -> PlanTargets:
    settings = {
        "target_run_seconds": 600,
        "max_tables_per_run": 500,
        "base_workers": 2,
        "max_workers": 2,
    }
    return PlanTargets(**{**settings, **changes})  # type: ignore[arg-type]


def test_the_model_constants_are_the_documented_calibration() -> None:
    # docs/decisions/026 and issue 47: Glue start 30 s, a cold first table 13 to 23 s, a warm small one 1.85 to 2.8 s
    assert (RUN_START_SECONDS, FIRST_TABLE_WARM_UP_SECONDS, TABLE_SECONDS) == (30.0, 18.0, 2.3)
    assert CHANGE_BYTES_PER_SECOND == 500_000.0  # bench/results/i27-fleet-10m.json: 0.4 to 0.62 MB/s


def test_small_tables_share_runs_up_to_the_target_run_time() -> None:
    # 60 s target: 12 s for work after the 48 s start; 5 tables are 11.5 s, a sixth would be 13.8 s
    runs = plan_runs([small(n) for n in range(12)], targets(target_run_seconds=60))

    assert [len(run.table_ids) for run in runs] == [5, 5, 2]
    assert [t for run in runs for t in run.table_ids] == [f"t{n}" for n in range(12)]  # oldest first, kept
    assert {run.shape for run in runs} == {RunShape.PACKED}
    assert runs[0].estimated_seconds == pytest.approx(48 + 11.5)
    assert runs[0].number_of_workers == 2
    assert runs[0].reason == "5 table(s), about 12 s of work: about 60 s, up to the 60 s target"


def test_batch_size_caps_the_tables_of_a_run() -> None:
    runs = plan_runs([small(n) for n in range(7)], targets(max_tables_per_run=3))

    assert [len(run.table_ids) for run in runs] == [3, 3, 1]
    assert [run.shape for run in runs] == [RunShape.FULL, RunShape.FULL, RunShape.PACKED]
    assert runs[0].reason.endswith("up to batch_size 3")


def test_a_run_stops_at_a_byte_bound_of_its_table_ids_far_below_step_functions_and_glue_limits() -> None:
    """Ids of 700 characters add 703 bytes each (quotes, comma): 93 of them are 65,379 bytes, a 94th would pass
    65,536. The run's Map item carries them twice (table_ids, the Arguments' JSON), under Step Functions' 256 KiB;
    Glue's Arguments once, under its 260 KB."""
    long_ids = [TableWork(f"src.schema.{n:03d}".ljust(700, "x"), files=1, bytes=0) for n in range(200)]
    runs = plan_runs(long_ids, targets(target_run_seconds=1200))  # work would let 500 share a run

    assert [len(run.table_ids) for run in runs] == [93, 93, 14]
    assert [run.shape for run in runs] == [RunShape.FULL, RunShape.FULL, RunShape.PACKED]
    assert runs[0].reason.endswith("up to 65,536 bytes of table ids")
    assert MAX_RUN_TABLE_ID_BYTES == 64 * 1024
    batch = Batch(batch_id="b", table_ids=runs[0].table_ids)
    # the ids twice, and a few KB besides (spaces, escaped quotes, the other fields)
    assert len(json.dumps(batch.to_payload()).encode()) < 2 * MAX_RUN_TABLE_ID_BYTES + 4_096 < 256 * 1024
    assert sum(len(key) + len(value) for key, value in batch.arguments.items()) < MAX_RUN_TABLE_ID_BYTES + 1_024


def test_a_table_whose_work_exceeds_the_target_gets_its_own_run_with_more_workers() -> None:
    # 300 MB pending: 2.3 + 600 s of work at 2 workers; 300 s target leaves 252 s; ceil(2 x 602.3 / 252) = 5 workers
    big = TableWork("big", files=40, bytes=300_000_000)
    runs = plan_runs([small(1), big, small(2)], targets(target_run_seconds=300, max_workers=10))

    own = next(run for run in runs if run.shape is RunShape.OWN_RUN)
    assert own.table_ids == ("big",)
    assert own.number_of_workers == 5
    assert own.estimated_seconds == pytest.approx(48 + 602.3 * 2 / 5)
    assert own.reason == (
        "own run: about 602 s of work (pending bytes) exceeds the 300 s target at 2 workers; 5 workers, about 289 s"
    )
    # the small tables share one run; the large table's run comes first, as it was met first
    assert [run.table_ids for run in runs] == [("big",), ("t1", "t2")]


def test_the_workers_of_an_own_run_stop_at_max_workers_and_say_so() -> None:
    huge = TableWork("huge", files=400, bytes=3_000_000_000)  # 6,002.3 s: 48 workers wanted
    (run,) = plan_runs([huge], targets(target_run_seconds=300, max_workers=10))

    assert run.number_of_workers == 10
    assert "10 workers (max_workers)" in run.reason


def test_a_tables_last_run_counts_when_it_took_longer_than_its_pending_bytes_suggest() -> None:
    slow = TableWork("slow", files=1, bytes=1_000, last_run_seconds=400.0)
    fast = TableWork("fast", files=1, bytes=1_000, last_run_seconds=1.0)

    assert (estimate(slow).seconds, estimate(slow).basis) == (400.0, "last run")
    assert estimate(fast).seconds == pytest.approx(2.302)  # 2.3 s + 1,000 bytes at 0.5 MB/s
    assert estimate(fast).basis == "pending bytes"
    (run,) = plan_runs([slow], targets(target_run_seconds=300, max_workers=4))
    assert run.shape is RunShape.OWN_RUN  # 400 s > 252 s: ceil(2 x 400 / 252) = 4 workers
    assert run.number_of_workers == 4
    assert "(last run)" in run.reason


def test_a_cadence_without_larger_workers_still_runs_a_large_table_alone() -> None:
    (run,) = plan_runs([TableWork("big", 1, 600_000_000)], targets(target_run_seconds=300))
    assert (run.shape, run.number_of_workers) == (RunShape.OWN_RUN, 2)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"max_tables_per_run": 0}, "at least one table"),
        ({"target_run_seconds": 0}, "positive target"),
        ({"base_workers": 1}, "2 <= number_of_workers"),
        ({"base_workers": 4, "max_workers": 3}, "<= max_workers"),
    ],
)
def test_targets_out_of_range_are_refused(changes: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        plan_runs([small(1)], targets(**changes))


def test_no_ready_table_plans_no_run() -> None:
    assert plan_runs([], targets()) == []


def test_the_shipped_ten_minute_setting_of_the_demo_fleet_keeps_up_and_1000_tables_do_not() -> None:
    # batch_size 5, 10 workers, 4 runs at a time, 5-minute target
    shipped = PlanTargets(target_run_seconds=300, max_tables_per_run=5, base_workers=10, max_workers=10)
    assert capacity_warning("c", tables=18, interval_minutes=10, targets=shipped, max_concurrency=4) is None
    # 200 runs of 5 tables (48 + 11.5 = 59.5 s each), 4 at a time: 50 waves, about 50 minutes
    warning = capacity_warning("every_10_minutes", tables=1000, interval_minutes=10, targets=shipped, max_concurrency=4)
    assert warning == (
        "cadence every_10_minutes: 1000 tables with a change each take at least 200 runs (5 tables a run at most), "
        "4 at a time: about 50 minutes an execution, longer than its 10-minute interval; raise batch_size, "
        "max_concurrency or target_run_minutes, or move tables to another cadence"
    )
    assert capacity_warning("hourly", tables=1000, interval_minutes=None, targets=shipped, max_concurrency=4) is None
