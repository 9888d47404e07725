"""``python -m bench fleet-model``: the planner over a simulated day; its committed results are what it gives."""

from __future__ import annotations

import json
import random
import statistics
from pathlib import Path

import pytest

from bench import fleet_model
from bench.fleet_model import (
    ACTIVITY,
    CALIBRATIONS,
    CLASSES,
    Calibration,
    Setting,
    Table,
    before_issue_47,
    commit_times,
    percentile,
    row,
    run_commits,
    simulate,
)
from odp.planning import PlannedRun, PlanTargets, RunShape

ROW_FIELDS = {
    "tables",
    "setting",
    "calibration",
    "execution_minutes_p50",
    "staleness_minutes_p50",
    "staleness_minutes_p95",
    "runs_per_day",
    "dpu_hours_per_day",
    "dollars_per_day",
}
TYPICAL = Calibration("typical", 1.25, 18.0)


def test_a_runs_tables_commit_one_by_one_the_first_alone_then_sharing_the_run() -> None:
    """Works 10, 2, 4, 6 from 100, two at once: the first alone commits at 110; 2 and 4 share the run at half speed
    each (the 2 commits after 4 s, at 114; the 4 has 2 left), then the 4 and the 6 share (the 4 commits after 4 s, at
    118; the 6 has 4 left), and the 6 ends alone at 122: 100 plus the sum of the work."""
    started: list[tuple[int, float]] = []

    def work_of(index: int, at: float) -> float:
        started.append((index, at))
        return [10.0, 2.0, 4.0, 6.0][index]

    assert commit_times(100.0, 4, 2, work_of) == [110.0, 114.0, 118.0, 122.0]
    assert started == [(0, 100.0), (1, 110.0), (2, 110.0), (3, 114.0)]  # each reads its files when it starts
    assert commit_times(0.0, 3, 1, lambda index, at: 1.0) == [1.0, 2.0, 3.0]  # one at a time
    assert commit_times(0.0, 0, 4, lambda index, at: 1.0) == []


def test_a_run_applies_the_files_landed_before_its_table_starts_and_leaves_the_later_ones() -> None:
    """A run started at 0 (30 s of start-up, 18 s of warm-up): its first table starts at 30 and commits at 48 plus
    its work; the second starts then and takes the file that landed at 30 (in file_tracker 10 s later), not the one
    landing after it started."""
    targets = PlanTargets(target_run_seconds=240, max_tables_per_run=100, base_workers=2, max_workers=10)
    setting = Setting("s", 10, targets, 40, table_concurrency=5)
    small, hot = CLASSES[0], ACTIVITY[0]
    first = Table("a", small, hot, next_landing=1e9, pending=[-100.0])
    second = Table("b", small, hot, next_landing=30.0, pending=[-50.0])
    run = PlannedRun(("a", "b"), 2, 0.0, 0.0, RunShape.PACKED, "")
    rng = random.Random(1)

    commits = run_commits(run, [first, second], 0.0, setting=setting, calibration=TYPICAL, rng=rng)

    work = small.work_seconds * TYPICAL.work_factor / fleet_model.WARM_WORK_SHARE
    assert commits[0] == pytest.approx(30 + 18 + work)
    assert second.pending == [-50.0, 30.0]  # in file_tracker at 40, before the table started at 48 + work
    assert second.next_landing + fleet_model.DETECTION_SECONDS > commits[0]  # the next: left for a later run
    assert commits[1] == pytest.approx(commits[0] + work + small.file_bytes / fleet_model.CHANGE_BYTES_PER_SECOND)


def test_a_table_alone_in_its_run_divides_its_work_across_the_workers_above_the_base() -> None:
    targets = PlanTargets(target_run_seconds=240, max_tables_per_run=100, base_workers=2, max_workers=10)
    setting = Setting("s", 10, targets, 40)
    big = Table("big", CLASSES[-1], ACTIVITY[0], next_landing=1e9, pending=[0.0])
    run = PlannedRun(("big",), 4, 0.0, 0.0, RunShape.OWN_RUN, "")

    (commit,) = run_commits(run, [big], 0.0, setting=setting, calibration=TYPICAL, rng=random.Random(1))

    work = CLASSES[-1].work_seconds * TYPICAL.work_factor / fleet_model.WARM_WORK_SHARE
    assert commit == pytest.approx(30 + 18 + work * 2 / 4)
    assert big.last_run_seconds == pytest.approx(work)  # the planner's history: its work on a base run


def test_an_execution_longer_than_the_interval_skips_ticks_as_the_overlap_guard_does() -> None:
    one_at_a_time = Setting("slow", 10, PlanTargets(1800, 1, 2, 2), 1)
    day = simulate(300, one_at_a_time, TYPICAL)

    assert day.skipped_ticks > 0
    assert day.ticks == 144
    assert len(day.executions) == day.ticks - day.skipped_ticks
    assert min(day.executions) > 10  # every execution runs past the next tick
    assert day.dpu_seconds >= day.runs * 60 * 2  # one minute at least, 2 workers


def test_the_settings_before_issue_47_cost_more_and_wait_longer_than_the_shipped_ones_at_1000_tables() -> None:
    shipped = next(setting for setting in fleet_model.settings() if setting.name == "shipped")
    before = row(1000, before_issue_47(), CALIBRATIONS[1])
    after = row(1000, shipped, CALIBRATIONS[1])

    assert set(after) >= ROW_FIELDS
    assert after["staleness_minutes_p95"] < before["staleness_minutes_p95"]
    assert after["dollars_per_day"] < before["dollars_per_day"]
    assert after["execution_minutes_p50"] < 10  # the shipped cadence keeps its 10 minutes


def test_shorter_runs_cost_a_5000_table_fleet_more_for_a_wait_no_longer_than_the_shipped_setting() -> None:
    """What the shipped 6-minute runs of 200 tables save against the 4-minute runs of 100 they replaced
    (docs/decisions/051): fewer start-ups, for a wait at most as short."""
    shipped = next(setting for setting in fleet_model.settings() if setting.name == "shipped")
    shorter = fleet_model.shorter_runs(shipped)
    before = simulate(5000, shorter, TYPICAL)
    after = simulate(5000, shipped, TYPICAL)

    assert (shorter.targets.target_run_seconds, shorter.targets.max_tables_per_run) == (240, 100)
    assert (shipped.targets.target_run_seconds, shipped.targets.max_tables_per_run) == (360, 200)
    assert after.runs < before.runs
    assert after.dpu_seconds < before.dpu_seconds
    assert percentile(after.staleness, 0.95) >= percentile(before.staleness, 0.95)


def test_a_warm_run_is_billed_for_its_whole_life_and_keeps_every_tick_of_a_small_fleet() -> None:
    """One warm run on the shipped cadence's 2 G.1X workers is billed 2 DPUs around the clock, 48 DPU-hours a day
    whatever it writes (its restarts at the end of each 12-hour lifetime follow on without overlap); 100 tables take
    a fraction of each tick, so no tick is skipped and a file waits about one interval."""
    shipped = next(setting for setting in fleet_model.settings() if setting.name == "shipped")
    warm = fleet_model.warm(shipped, 1)
    day = simulate(100, warm, TYPICAL)

    assert (warm.mode.value, warm.warm_runs, warm.job_timeout_minutes) == ("warm", 1, 720)
    assert day.dpu_seconds / 3600 == pytest.approx(24 * 2, abs=0.01)
    assert day.runs == 2  # started within the measured day: a restart every 11 h 55 min
    assert day.skipped_ticks == 0
    assert max(day.executions) < warm.interval_minutes
    assert percentile(day.staleness, 0.95) < warm.interval_minutes + 2


def test_the_committed_results_are_what_the_model_gives_for_100_and_1000_tables(repo_root: Path) -> None:
    committed = json.loads((repo_root / "bench" / "results" / "fleet-model.json").read_text())
    assert {r["tables"] for r in committed} == {100, 1000, 5000}
    assert {r["calibration"] for r in committed} == {"low", "typical", "high"}
    assert all(set(r) >= ROW_FIELDS for r in committed)
    again = fleet_model.model((100, 1000))["rows"]
    assert again == [r for r in committed if r["tables"] in (100, 1000)], "rerun python -m bench fleet-model"


def test_the_size_classes_are_the_warm_fleet_benchmarks_medians(repo_root: Path) -> None:
    """The model's per-table work and change files come from one committed run (docs/decisions/049): a class's
    median ``fixed_seconds`` over every repeat's tables, divided by the 4 tables written at once, and its median bytes
    a landed file over the CDC waves. A new run of the benchmark without new classes fails here."""
    document = json.loads((repo_root / "bench" / "results" / "i47-fleet-warm.json").read_text())
    assert document["warm_jvm"] is True
    odp_runs = [repeat["contenders"]["odp"] for repeat in document["repeats"]]
    assert len(odp_runs) == 3
    size = {"10k": "10k rows", "200k": "200k rows", "2m": "2M rows", "10m": "10M rows"}
    fixed: dict[str, list[float]] = {}
    file_bytes: dict[str, list[float]] = {}
    for odp in odp_runs:
        for table, cost in odp["table_costs"].items():
            if table != "all":
                fixed.setdefault(size[table.split("_")[-2]], []).append(cost["fixed_seconds"])
        for wave in odp["waves"][1:]:
            for table, figures in wave["tables"].items():
                if figures["landed_files"]:
                    per_file = figures["change_bytes"] / figures["landed_files"]
                    file_bytes.setdefault(size[table.split("_")[-2]], []).append(per_file)

    for size_class in fleet_model.CLASSES:
        assert size_class.work_seconds == round(statistics.median(fixed[size_class.name]) / 4, 3), size_class.name
        assert size_class.file_bytes == round(statistics.median(file_bytes[size_class.name])), size_class.name
    assert sum(size_class.share for size_class in fleet_model.CLASSES) == pytest.approx(1.0)


@pytest.mark.parametrize("argument", ["1000,x", ""])
def test_the_command_refuses_a_fleet_that_is_not_numbers(argument: str, capsys: pytest.CaptureFixture) -> None:
    code = fleet_model.main(["--tables", argument, "--out", "/nonexistent/never-written.json"])
    assert code == 2
    assert "--tables" in capsys.readouterr().err
