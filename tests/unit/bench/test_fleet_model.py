"""``python -m bench fleet-model``: the planner over a simulated day; its committed results are what it gives."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from bench import fleet_model
from bench.fleet_model import (
    CALIBRATIONS,
    Calibration,
    Setting,
    before_issue_47,
    percentile,
    row,
    run_duration,
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


def test_a_runs_duration_is_start_up_warm_up_and_its_tables_work() -> None:
    targets = PlanTargets(target_run_seconds=240, max_tables_per_run=100, base_workers=2, max_workers=10)
    setting = Setting("s", 10, targets, 4)
    packed = PlannedRun(("a", "b", "c"), 2, 9.0, 57.0, RunShape.PACKED, "")
    own = PlannedRun(("big",), 4, 100.0, 98.0, RunShape.OWN_RUN, "")

    assert run_duration(packed, [2.0, 3.0, 4.0], setting, TYPICAL) == 30 + 18 + 9
    assert run_duration(own, [100.0], setting, TYPICAL) == 30 + 18 + 100 * 2 / 4  # its work across 4 workers


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


def test_fewer_start_ups_cost_a_5000_table_fleet_less_and_wait_longer_than_the_shipped_setting() -> None:
    """config/cadences.yaml's advice for about 5,000 tables: runs of 6 minutes and 200 tables pay fewer start-ups
    than the shipped 4-minute runs of 100, for a longer wait."""
    shipped = next(setting for setting in fleet_model.settings() if setting.name == "shipped")
    fewer = fleet_model.fewer_start_ups(shipped)
    before = simulate(5000, shipped, TYPICAL)
    after = simulate(5000, fewer, TYPICAL)

    assert (fewer.targets.target_run_seconds, fewer.targets.max_tables_per_run) == (360, 200)
    assert after.runs < before.runs
    assert after.dpu_seconds < before.dpu_seconds
    assert percentile(after.staleness, 0.95) > percentile(before.staleness, 0.95)


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
