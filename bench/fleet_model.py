"""``python -m bench fleet-model``: the project's own planner (odp/planning.py) over a simulated day of a cadence.

For 100, 1,000 and 5,000 tables, each cadence setting and each calibration, the model lands files table by table,
fires the schedule every interval (an execution still running makes the tick a skip, as the state machine's overlap
guard does), plans each execution with :func:`odp.planning.plan_runs` from what the trackers would hold (pending
files and bytes, each table's last run), runs the plan's runs ``max_concurrency`` at a time, and bills each run per
second with a one-minute minimum. A run writes its tables as the job does (:func:`commit_times`): the first alone,
then ``table_concurrency`` at once in the plan's order, each reading its landed files when it starts (a file that
landed after the tick is applied if its table has not started yet). It reports per setting: execution minutes,
staleness (a file's landing to the commit of its table that applies it) p50 / p95, runs, DPU-hours and dollars a
day. A warm setting (``mode: warm``, :func:`simulate_warm`) is one long-lived run per share of the tables that ticks
every interval and is billed all day. Every assumption is a named constant below with its source; docs/decisions/026,
049 and 051 discuss them.

The model is not a measurement: it is as good as its calibration, which comes from the local benchmarks on 2 cores
(``low``: the warm fleet benchmark's per-table costs and change files, ``typical`` and ``high``: 1.25x and 1.55x the
costs with a slower warm-up), and takes a base Glue run of 2 G.1X workers to write tables as fast as the 2-core
laptop does.
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import random
import statistics
import sys
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from odp.config.loader import load_config
from odp.config.models import Cadence, CadenceMode, GlueWorkerType
from odp.contracts.file_processor import DEFAULT_TABLE_CONCURRENCY
from odp.planning import CHANGE_BYTES_PER_SECOND, RUN_START_SECONDS, PlannedRun, PlanTargets, TableWork, plan_runs
from odp.warm import STOP_MARGIN_SECONDS

RESULTS = Path(__file__).parent / "results" / "fleet-model.json"
CONFIG = Path(__file__).parent.parent / "config"
SHIPPED_CADENCE = "every_10_minutes"
FLEETS = (100, 1_000, 5_000)
SEED = 47

# Glue's price in most regions (eu-west-1, us-east-1): $0.44 a DPU-hour, billed per second, one minute at least
# (https://aws.amazon.com/glue/pricing/); a G.1X worker is 1 DPU.
DOLLARS_PER_DPU_HOUR = 0.44
MINIMUM_BILLED_SECONDS = 60
DPU_PER_WORKER = {GlueWorkerType.G_1X.value: 1.0, GlueWorkerType.G_2X.value: 2.0}
# The Batch Manager's plan and summary around the Map: a few seconds each (Lambda, warm).
EXECUTION_OVERHEAD_SECONDS = 10.0
# A day measured after two hours from an empty start (every table's history filled), then two hours for the day's
# last files to commit.
WARM_UP_SECONDS = 2 * 3600
DAY_SECONDS = 24 * 3600
TAIL_SECONDS = 2 * 3600
# A landed file reaches file_tracker through S3's event, EventBridge, SQS (a 5-second batching window,
# infrastructure/ingest/file_manager.py) and the File Manager: an estimate of that path, not a measurement. A file
# is planned and read from then on; its staleness counts from its landing.
DETECTION_SECONDS = 10.0


@dataclass(frozen=True)
class SizeClass:
    """Tables of one size: their share of a fleet, the bytes of one landed change file, and a table's work when it
    has one file, in seconds of a warm run writing 4 tables at once (``low`` calibration)."""

    name: str
    share: float
    file_bytes: int
    work_seconds: float


# bench/results/i47-fleet-warm.json (docs/decisions/049; the run of 2026-12-02: 050's second addendum): the fleet
# benchmark's 28 tables of 10,000 rows, 8 of 200,000, 3 of 2,000,000 and 1 of 10,000,000 (the classes' shares) in
# one warm JVM, three repeats. A class's work: the median over the repeats' tables of ``table_costs.fixed_seconds``
# (a table's time with 4 tables written at once) divided by 4; its file: the median over the CDC waves' tables of
# ``change_bytes / landed_files``. Work and files come from the same run; a file beyond a table's first adds its
# bytes at CHANGE_BYTES_PER_SECOND. The work is the seconds of the machine the run had (its JSON's ``machine``).
CLASSES = (
    SizeClass("10k rows", 0.700, 9_457, 0.848),
    SizeClass("200k rows", 0.200, 42_835, 1.551),
    SizeClass("2M rows", 0.075, 404_006, 2.272),
    SizeClass("10M rows", 0.025, 257_845, 3.481),
)

# The classes are measured in a warm JVM; a scheduled run's own JVM costs a table more, besides its first table's
# warm-up (Calibration.warm_up_seconds). The one measurement of the same code both ways: the median 10,000-row
# table's ``table_costs.fixed_seconds`` was 7.23 s in one JVM across the waves (i47-fleet-warm-1-of-3.json, git show
# b341eb2:bench/results/i47-fleet-warm-1-of-3.json) against 7.57 s with a JVM a wave (i27-fleet-10m.json): a small
# table's time is Hudi's commit, not the JIT (docs/decisions/012, 013).
WARM_WORK_SHARE = 0.96


@dataclass(frozen=True)
class Activity:
    """How often a table lands a change file: a Poisson process with this mean interval."""

    name: str
    share: float
    mean_minutes: float


# An assumption, not a measurement: OLTP change is skewed, a minority of tables take most of it. DMS writes a file
# per table only when it has changes (CdcMaxBatchInterval, 60 s by default, batches them): about a third of a fleet's
# tables land a file in any 10 minutes.
ACTIVITY = (
    Activity("hot", 0.30, 5),
    Activity("warm", 0.40, 60),
    Activity("cold", 0.30, 360),
)


@dataclass(frozen=True)
class Calibration:
    name: str
    work_factor: float  # times the classes' work_seconds
    warm_up_seconds: float  # a run's first table: JVM class loading and JIT (docs/decisions/013: 13 to 23 s)
    start_seconds: float = RUN_START_SECONDS


CALIBRATIONS = (
    Calibration("low", 1.0, 13.0),
    Calibration("typical", 1.25, 18.0),  # i27-fixed-cost-28-jit: 2.24 s a small table against the fleet's 1.8 s
    Calibration("high", 1.55, 23.0),  # issue 47: a warm small table at up to 2.8 s
)


@dataclass(frozen=True)
class Setting:
    """A cadence setting: the schedule interval, the plan targets, runs at once, the worker type and the tables a run
    writes at once; a warm cadence's runs (``warm_runs``: 1 as built; more is a proposal the model sizes, each run a
    fixed share of the tables) and their lifetime (``job_timeout_minutes``)."""

    name: str
    interval_minutes: int
    targets: PlanTargets
    max_concurrency: int
    worker_type: str = GlueWorkerType.G_1X.value
    table_concurrency: int = DEFAULT_TABLE_CONCURRENCY
    mode: CadenceMode = CadenceMode.SCHEDULED
    warm_runs: int = 1
    job_timeout_minutes: int = 720

    @classmethod
    def of(cls, name: str, cadence: Cadence) -> Setting:
        if cadence.interval_minutes is None:
            raise ValueError(f"{name}: a cron cadence has no fixed interval to model")
        return cls(
            name,
            cadence.interval_minutes,
            cadence.plan_targets,
            cadence.max_concurrency,
            cadence.worker_type,
            cadence.table_concurrency,
            mode=cadence.mode,
            job_timeout_minutes=cadence.job_timeout_minutes,
        )


def before_issue_47() -> Setting:
    """every_10_minutes as shipped before issue 47: 5 tables a run on 10 workers, 4 runs at a time, batched by count
    (a target no run reaches), the run's 5 tables written at once."""
    targets = PlanTargets(target_run_seconds=30 * 60, max_tables_per_run=5, base_workers=10, max_workers=10)
    return Setting("before_issue_47", 10, targets, 4, table_concurrency=5)


def issue_alternative() -> Setting:
    """Issue 47's alternative: 50 tables a run, 10 at a time, on 2 workers."""
    targets = PlanTargets(target_run_seconds=30 * 60, max_tables_per_run=50, base_workers=2, max_workers=2)
    return Setting("50_tables_10_at_a_time_2_workers", 10, targets, 10)


def shorter_runs(shipped: Setting) -> Setting:
    """The shipped cadence with runs of 4 minutes and 100 tables at most (as shipped until docs/decisions/051): more
    runs, so more start-ups, for a wait a little shorter at 5,000 tables."""
    targets = replace(shipped.targets, target_run_seconds=4 * 60, max_tables_per_run=100)
    return replace(shipped, name="4_minute_runs_100_tables", targets=targets)


@dataclass
class Table:
    table_id: str
    size: SizeClass
    activity: Activity
    next_landing: float
    pending: list[float] = field(default_factory=list)  # landing times
    last_run_seconds: float | None = None


def fleet(tables: int, rng: random.Random) -> list[Table]:
    """``tables`` tables, each of a size class and an activity drawn by the shares."""
    sizes = rng.choices(CLASSES, weights=[c.share for c in CLASSES], k=tables)
    activities = rng.choices(ACTIVITY, weights=[a.share for a in ACTIVITY], k=tables)
    return [
        Table(f"t{n:05d}", size, activity, rng.expovariate(1 / (activity.mean_minutes * 60)))
        for n, (size, activity) in enumerate(zip(sizes, activities, strict=True))
    ]


def land_until(tables: Iterable[Table], until: float, rng: random.Random) -> None:
    """Each table's files that file_tracker holds at ``until``: landed :data:`DETECTION_SECONDS` before it at least."""
    for table in tables:
        while table.next_landing + DETECTION_SECONDS <= until:
            table.pending.append(table.next_landing)
            table.next_landing += rng.expovariate(1 / (table.activity.mean_minutes * 60))


def _trackers_view(ready: Iterable[Table]) -> list[TableWork]:
    """What the planner reads of ready tables (oldest pending file first): pending files and bytes, the last run."""
    return [
        TableWork(t.table_id, len(t.pending), len(t.pending) * t.size.file_bytes, last_run_seconds=t.last_run_seconds)
        for t in ready
    ]


def true_work(table: Table, files: int, calibration: Calibration) -> float:
    """What the table's run really takes (the model's truth, not the planner's estimate): its class's work in a run's
    own JVM (the warm figure over :data:`WARM_WORK_SHARE`), and its extra files' bytes at the measured change rate
    (odp/planning.py)."""
    extra_bytes = (files - 1) * table.size.file_bytes
    return table.size.work_seconds * calibration.work_factor / WARM_WORK_SHARE + extra_bytes / CHANGE_BYTES_PER_SECOND


def run_commits(
    run: PlannedRun,
    members: Sequence[Table],
    start: float,
    *,
    setting: Setting,
    calibration: Calibration,
    rng: random.Random,
) -> list[float]:
    """A scheduled run started at ``start``: Glue's start-up, then its tables (:func:`commit_times`), the first one
    warming the JVM up; a table alone in its run divides its work across the run's workers above the base. Each table
    takes the files landed until it starts and records its work (on a base run) as its last run."""
    scale = setting.targets.base_workers / run.number_of_workers if len(members) == 1 else 1.0

    def work_of(index: int, started: float) -> float:
        work = _start(members[index], started, rng, lambda written, files: true_work(written, files, calibration))
        return work * scale + (calibration.warm_up_seconds if index == 0 else 0.0)

    concurrency = min(setting.table_concurrency, len(members))
    return commit_times(start + calibration.start_seconds, len(members), concurrency, work_of)


def _start(table: Table, started: float, rng: random.Random, work: Callable[[Table, int], float]) -> float:
    """A table starts in its run at ``started``: it takes the files landed until then, and its ``work`` for them is
    recorded as its last run (what the planner reads next time). Returns that work."""
    land_until((table,), started, rng)
    table.last_run_seconds = work(table, len(table.pending))
    return table.last_run_seconds


def commit_times(ready_at: float, count: int, concurrency: int, work_of: Callable[[int, float], float]) -> list[float]:
    """Pure: when each of a run's ``count`` tables commits, as etl/file_processor/concurrency.py writes them: the
    first alone from ``ready_at``, then the others in order, at most ``concurrency`` at once, sharing the run equally
    (a table's work is its share of a run writing several at once, so the last commit is ``ready_at`` plus the sum of
    the work). ``work_of(index, started)`` is a table's work when it starts: it reads its landed files then
    (etl/file_processor/steps/plan.py)."""
    commits = [0.0] * count
    if count == 0:
        return commits
    clock = commits[0] = ready_at + work_of(0, ready_at)
    running: dict[int, float] = {}  # index -> work left
    for index in range(1, count):
        running[index] = work_of(index, clock)
        if len(running) < concurrency:
            continue
        clock = _finish_one(running, clock, commits)
    while running:
        clock = _finish_one(running, clock, commits)
    return commits


def _finish_one(running: dict[int, float], clock: float, commits: list[float]) -> float:
    """Advance a run to its next commit: every running table progresses at the same rate; the one with the least
    work left commits (the earliest started on a tie). Returns the new clock."""
    index, least = min(running.items(), key=lambda item: (item[1], item[0]))
    clock += least * len(running)
    for other in running:
        running[other] -= least
    del running[index]
    commits[index] = clock
    return clock


@dataclass
class DayResult:
    executions: list[float] = field(default_factory=list)  # minutes (warm: a tick's longest run)
    staleness: list[float] = field(default_factory=list)  # minutes, files landed in the measured day
    runs: int = 0
    dpu_seconds: float = 0.0
    skipped_ticks: int = 0
    ticks: int = 0
    warm_runs_max: int = 0  # warm: the runs at once


def simulate(tables: int, setting: Setting, calibration: Calibration, seed: int = SEED) -> DayResult:
    """One measured day of ``tables`` tables under ``setting`` (a warm cadence: :func:`simulate_warm`)."""
    if setting.mode is CadenceMode.WARM:
        return simulate_warm(tables, setting, calibration, seed)
    rng = random.Random(seed)  # noqa: S311 - a reproducible model, not a secret
    fleet_tables = fleet(tables, rng)
    by_id = {table.table_id: table for table in fleet_tables}
    result = DayResult()
    busy_until = 0.0
    end = WARM_UP_SECONDS + DAY_SECONDS + TAIL_SECONDS
    interval = setting.interval_minutes * 60
    dpu = DPU_PER_WORKER.get(setting.worker_type, 1.0)
    for tick in range(0, int(end), interval):
        land_until(fleet_tables, tick, rng)
        measured = WARM_UP_SECONDS <= tick < WARM_UP_SECONDS + DAY_SECONDS
        result.ticks += measured
        if busy_until > tick:
            result.skipped_ticks += measured
            continue
        ready = sorted((t for t in fleet_tables if t.pending), key=lambda t: (t.pending[0], t.table_id))
        runs = plan_runs(_trackers_view(ready), setting.targets)
        slots = [float(tick)] * setting.max_concurrency
        heapq.heapify(slots)
        finish = float(tick)
        for run in runs:
            start = heapq.heappop(slots)
            members = [by_id[table_id] for table_id in run.table_ids]
            commits = run_commits(run, members, start, setting=setting, calibration=calibration, rng=rng)
            done = max(commits)
            heapq.heappush(slots, done)
            finish = max(finish, done)
            if measured:
                result.runs += 1
                result.dpu_seconds += max(MINIMUM_BILLED_SECONDS, done - start) * run.number_of_workers * dpu
            for table, committed in zip(members, commits, strict=True):
                result.staleness.extend(
                    (committed - landed) / 60
                    for landed in table.pending
                    if WARM_UP_SECONDS <= landed < WARM_UP_SECONDS + DAY_SECONDS
                )
                table.pending.clear()
        busy_until = finish + EXECUTION_OVERHEAD_SECONDS
        if measured:
            result.executions.append((busy_until - tick) / 60)
    return result


# A warm tick's own work besides its tables: the planner's reads of the trackers (one Scan of the pending index, the
# leases of the ready tables: bench/results/planning-20000.json plans 20,000 tables in 2.4 s).
WARM_TICK_SECONDS = 2.0


@dataclass
class _WarmRun:
    """One warm run in the model: its share of the tables, billed from ``started``, ticking from ``ready_at``."""

    share: int
    started: float
    ready_at: float
    busy_until: float = 0.0
    ended: float | None = None


def warm_work(table: Table, files: int, calibration: Calibration) -> float:
    """A table's write in a warm JVM: its class's work as measured warm, and its extra files' bytes."""
    extra_bytes = (files - 1) * table.size.file_bytes
    return table.size.work_seconds * calibration.work_factor + extra_bytes / CHANGE_BYTES_PER_SECOND


def share_of(table: Table, runs: int) -> int:
    """Which of ``runs`` warm runs writes the table: a stable hash of its id (one run: all)."""
    return zlib.crc32(table.table_id.encode()) % runs


def _warm_tick(
    run: _WarmRun, tick: float, tables: list[Table], *, setting: Setting, calibration: Calibration, rng: random.Random
) -> list[tuple[float, float]]:
    """One run's tick, as etl/file_processor/warm.py runs it: its ready tables planned into runs by the cadence's
    targets, the runs one after another, each writing its tables as a scheduled run does (:func:`commit_times`,
    without start-up or warm-up, on the warm run's own workers); sets when the run is free again. Returns (landed,
    committed) of each file it applied."""
    clock = tick + WARM_TICK_SECONDS
    commits: list[tuple[float, float]] = []
    by_id = {table.table_id: table for table in tables}
    for planned in plan_runs(_trackers_view(tables), setting.targets):
        members = [by_id[table_id] for table_id in planned.table_ids]

        def work_of(index: int, started: float, members: list[Table] = members) -> float:
            return _start(members[index], started, rng, lambda written, files: warm_work(written, files, calibration))

        concurrency = min(setting.table_concurrency, len(members))
        for table, committed in zip(members, commit_times(clock, len(members), concurrency, work_of), strict=True):
            commits.extend((landed, committed) for landed in table.pending)
            table.pending.clear()
            clock = max(clock, committed)
    run.busy_until = clock
    return commits


def simulate_warm(tables: int, setting: Setting, calibration: Calibration, seed: int = SEED) -> DayResult:
    """A warm cadence's day: ``setting.warm_runs`` runs, each writing its fixed share of the tables; each ticks every
    interval once it has started and warmed up (a tick that overran skips the slots it covered), stops at the end
    of its lifetime after its tick, and the schedule starts its successor at that tick; each is billed for its
    whole life (Glue bills a run from its start to its end)."""
    rng = random.Random(seed)  # noqa: S311 - a reproducible model, not a secret
    fleet_tables = fleet(tables, rng)
    result = DayResult(warm_runs_max=setting.warm_runs)
    end = WARM_UP_SECONDS + DAY_SECONDS + TAIL_SECONDS
    interval = setting.interval_minutes * 60
    lifetime = setting.job_timeout_minutes * 60 - STOP_MARGIN_SECONDS
    runs: list[_WarmRun] = []
    current: dict[int, _WarmRun] = {}
    day_start, day_end = WARM_UP_SECONDS, WARM_UP_SECONDS + DAY_SECONDS
    for tick in range(0, int(end), interval):
        land_until(fleet_tables, tick, rng)
        measured = day_start <= tick < day_end
        result.ticks += measured
        longest, overran = 0.0, False
        for share in range(setting.warm_runs):
            run = current.get(share)
            if run is not None and run.ended is None and tick + interval > run.started + lifetime:
                run.ended = max(float(tick), run.busy_until)  # it stops after its tick
            if run is not None and run.ended is not None:
                if run.ended > tick:  # the job allows one run: the schedule's start waits for its end
                    overran = True
                    continue
                run = None
            if run is None:  # the schedule starts it: Glue's start-up, then the JVM's warm-up
                ready_at = tick + calibration.start_seconds + calibration.warm_up_seconds
                run = current[share] = _WarmRun(share, float(tick), ready_at)
                runs.append(run)
                result.runs += measured
            if run.ready_at > tick or run.busy_until > tick:
                overran |= run.busy_until > tick
                continue
            mine = sorted(
                (t for t in fleet_tables if t.pending and share_of(t, setting.warm_runs) == share),
                key=lambda t: (t.pending[0], t.table_id),
            )
            commits = _warm_tick(run, float(tick), mine, setting=setting, calibration=calibration, rng=rng)
            longest = max(longest, run.busy_until - tick)
            result.staleness.extend((done - landed) / 60 for landed, done in commits if day_start <= landed < day_end)
        if measured:
            result.skipped_ticks += overran
            if longest > 0:  # a tick no run started (each still busy) is a skipped tick, not an execution
                result.executions.append(longest / 60)
    dpu = DPU_PER_WORKER.get(setting.worker_type, 1.0) * setting.targets.base_workers
    for run in runs:
        stopped = run.ended if run.ended is not None else end
        billed = min(stopped, day_end) - max(run.started, day_start)
        if billed > 0:
            result.dpu_seconds += max(billed, MINIMUM_BILLED_SECONDS) * dpu
    return result


def percentile(values: Sequence[float], share: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(share * len(ordered)) - 1)]


def row(tables: int, setting: Setting, calibration: Calibration) -> dict[str, object]:
    day = simulate(tables, setting, calibration)
    dpu_hours = day.dpu_seconds / 3600
    return {
        "tables": tables,
        "setting": setting.name,
        "engine_mode": setting.mode.value,
        "calibration": calibration.name,
        "execution_minutes_p50": round(statistics.median(day.executions), 1) if day.executions else 0.0,
        "execution_minutes_max": round(max(day.executions, default=0.0), 1),
        "skipped_ticks": day.skipped_ticks,
        "staleness_minutes_p50": round(percentile(day.staleness, 0.50), 1),
        "staleness_minutes_p95": round(percentile(day.staleness, 0.95), 1),
        "runs_per_day": day.runs,
        "dpu_hours_per_day": round(dpu_hours, 1),
        "dollars_per_day": round(dpu_hours * DOLLARS_PER_DPU_HOUR, 2),
        **({"warm_runs_max": day.warm_runs_max} if setting.mode is CadenceMode.WARM else {}),
    }


# A warm run's Glue timeout in the model: long enough that its restarts (twice a day) cost little (docs/decisions/032).
WARM_JOB_TIMEOUT_MINUTES = 720


def warm(shipped: Setting, runs: int) -> Setting:
    """The shipped cadence in ``mode: warm``: one run as built; more runs, each a fixed share of the tables, is a
    proposal the model sizes (docs/decisions/032's addendum)."""
    name = "warm_1_run" if runs == 1 else f"warm_{runs}_runs_proposed"
    return replace(
        shipped, name=name, mode=CadenceMode.WARM, warm_runs=runs, job_timeout_minutes=WARM_JOB_TIMEOUT_MINUTES
    )


def settings(config_dir: Path = CONFIG, warm_runs: Sequence[int] = (1,)) -> list[Setting]:
    shipped = Setting.of("shipped", load_config(config_dir).cadences.cadences[SHIPPED_CADENCE])
    return [
        shipped,
        before_issue_47(),
        issue_alternative(),
        shorter_runs(shipped),
        *(warm(shipped, runs) for runs in warm_runs),
    ]


def model(
    fleets: Sequence[int] = FLEETS, config_dir: Path = CONFIG, warm_runs: Sequence[int] = (1,)
) -> dict[str, object]:
    rows = [
        row(tables, setting, calibration)
        for tables in fleets
        for setting in settings(config_dir, warm_runs)
        for calibration in CALIBRATIONS
    ]
    return {
        "kind": "fleet_model",
        "cadence": SHIPPED_CADENCE,
        "assumptions": assumptions(),
        "rows": rows,
    }


def assumptions() -> dict[str, object]:
    return {
        "dollars_per_dpu_hour": DOLLARS_PER_DPU_HOUR,
        "minimum_billed_seconds": MINIMUM_BILLED_SECONDS,
        "run_start_seconds": RUN_START_SECONDS,
        "execution_overhead_seconds": EXECUTION_OVERHEAD_SECONDS,
        "size_classes": [vars(c) for c in CLASSES],
        "activity": [vars(a) for a in ACTIVITY],
        "calibrations": [vars(c) for c in CALIBRATIONS],
        "seed": SEED,
    }


def markdown(document: dict) -> str:
    lines = [
        "| tables | setting | calibration | execution min p50 | staleness min p50 / p95 | runs a day | DPU-h a day "
        "| $ a day |",
        "|---:|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in document["rows"]:
        lines.append(
            f"| {r['tables']:,} | {r['setting']} | {r['calibration']} | {r['execution_minutes_p50']} | "
            f"{r['staleness_minutes_p50']} / {r['staleness_minutes_p95']} | {r['runs_per_day']:,} | "
            f"{r['dpu_hours_per_day']} | {r['dollars_per_day']} |"
        )
    return "\n".join(lines)


def counts(text: str) -> list[int]:
    """Pure: a comma-separated list of positive counts, or [] when it is not one."""
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        return []
    return values if values and min(values) >= 1 else []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench fleet-model", description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default=",".join(str(n) for n in FLEETS), help="fleet sizes, comma-separated")
    parser.add_argument("--out", type=Path, default=RESULTS, help="the JSON written (default %(default)s)")
    parser.add_argument("--config-dir", type=Path, default=CONFIG)
    parser.add_argument(
        "--warm-runs", default="1", help="warm settings' runs, comma-separated (1 as built; more: a proposal)"
    )
    args = parser.parse_args(argv)
    fleets, warm_runs = counts(args.tables), counts(args.warm_runs)
    if not fleets or not warm_runs:
        print(f"--tables, --warm-runs: not lists of counts: {args.tables!r}, {args.warm_runs!r}", file=sys.stderr)
        return 2
    document = model(fleets, args.config_dir, warm_runs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document["rows"], indent=1) + "\n")
    print(markdown(document))
    print(f"results: {args.out}")
    return 0
