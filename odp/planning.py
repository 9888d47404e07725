"""Work-aware planning (pure): which tables share a run, how many workers a run gets, and why.

The Batch Manager (lambdas/batch_manager) plans every execution with :func:`plan_runs`; ``python -m bench
fleet-model`` runs the same function over a simulated day; ``python -m odp.config validate`` warns with
:func:`capacity_warning` when a cadence cannot keep up with its tables. docs/decisions/026 gives the model and where
each constant comes from.

A table's work is an estimate in seconds on the cadence's base run (``number_of_workers``): a fixed cost per table
plus its pending bytes at a change rate, or its last run's duration when that is longer (a large table's size shows
there). Tables whose work fits share a run, up to the cadence's target run time and its ``batch_size``; a table that
alone exceeds the target gets its own run with more workers (up to ``max_workers``), as many as bring it near the
target, assuming its work divides across workers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

# A Glue run's start-up (provisioning and script start) before the first table: 30 s is the estimate issue 47 uses
# (Glue 5.x documents faster starts, but not a figure); a run's first table also warms the JVM (13 to 23 s measured
# locally, docs/decisions/013), which the fixed cost of the first table stands for.
RUN_START_SECONDS = 30.0
FIRST_TABLE_WARM_UP_SECONDS = 18.0
# A small table with a file, warm, in a run writing 4 tables at once: 1.85 to 2.8 s of the run on 2 cores
# (bench/results/i27-fixed-cost-112.json, i27-fixed-cost-28-jit.json; docs/decisions/012). Every work figure here is
# such a share of a run (the cores are busy with the tables written beside it), so a run's work is their sum.
TABLE_SECONDS = 2.3
# Change bytes (Parquet or JSON as landed) a base run applies per second beyond the fixed cost, on 2 cores
# (bench/results/i27-fleet-10m.json): its full load took 965 s for 600 MB (0.62 MB/s); its CDC waves' fit is 0.57 ms
# a change row with 4 tables at once, at about 57 landed bytes a row (0.4 MB/s).
CHANGE_BYTES_PER_SECOND = 500_000.0
# A run's table ids travel twice in its Map item (the batch's ``table_ids`` and, as JSON, its Glue ``Arguments``:
# odp/contracts/batches.py), which Step Functions takes up to 256 KiB as a child execution's input, and once in
# glue:startJobRun's Arguments, which Glue takes up to 260 KB
# (https://docs.aws.amazon.com/glue/latest/dg/aws-glue-programming-etl-glue-arguments.html). A run stops at this many
# bytes of table ids, a quarter of the smaller limit: 200 ids of up to 324 bytes fit (a table id may have 767).
MAX_RUN_TABLE_ID_BYTES = 64 * 1024


class RunShape(StrEnum):
    """Why a run holds what it holds."""

    PACKED = "packed"  # tables sharing a run, up to the target run time
    FULL = "full"  # tables sharing a run, stopped at batch_size tables or MAX_RUN_TABLE_ID_BYTES of their ids
    OWN_RUN = "own_run"  # one table whose work alone exceeds the target, with more workers


@dataclass(frozen=True)
class PlanTargets:
    """A cadence's planning settings (config/cadences.yaml, :class:`odp.config.models.Cadence`)."""

    target_run_seconds: float
    max_tables_per_run: int
    base_workers: int
    max_workers: int

    @classmethod
    def of(cls, settings: CadenceSizing) -> PlanTargets:
        """From a cadence's settings as configured or stored (``max_workers`` unset: ``number_of_workers``)."""
        return cls(
            target_run_seconds=settings.target_run_minutes * 60,
            max_tables_per_run=settings.batch_size,
            base_workers=settings.number_of_workers,
            max_workers=settings.max_workers or settings.number_of_workers,
        )


class CadenceSizing(Protocol):
    """What planning reads of a cadence: :class:`odp.config.models.Cadence`, or its batch_config item."""

    @property
    def batch_size(self) -> int: ...
    @property
    def number_of_workers(self) -> int: ...
    @property
    def max_workers(self) -> int | None: ...
    @property
    def target_run_minutes(self) -> float: ...


@dataclass(frozen=True)
class TableWork:
    """One ready table: its pending files and bytes (file_tracker) and its last run's duration, if any."""

    table_id: str
    files: int
    bytes: int
    last_run_seconds: float | None = None


@dataclass(frozen=True)
class Estimate:
    seconds: float
    basis: str  # "pending bytes" or "last run"


def estimate(work: TableWork) -> Estimate:
    """Seconds of work on a base run: the fixed cost plus the pending bytes at the change rate, or the last run's
    duration when that is longer (the table's own size and shape show in it)."""
    by_bytes = TABLE_SECONDS + work.bytes / CHANGE_BYTES_PER_SECOND
    if work.last_run_seconds is not None and work.last_run_seconds > by_bytes:
        return Estimate(work.last_run_seconds, "last run")
    return Estimate(by_bytes, "pending bytes")


@dataclass(frozen=True)
class PlannedRun:
    """One job run of a plan: its tables (oldest pending file first), its workers and why it is shaped so."""

    table_ids: tuple[str, ...]
    number_of_workers: int
    work_seconds: float  # the tables' estimated work on a base run
    estimated_seconds: float  # start-up and warm-up included, at this run's workers and table concurrency
    shape: RunShape
    reason: str


def run_seconds(work_seconds: float, *, tables: int, workers: int, targets: PlanTargets) -> float:
    """A run's estimated duration: start-up, the first table's warm-up, then the tables' work (one table alone:
    its work divided across the workers above the base)."""
    scaled = work_seconds * targets.base_workers / workers if tables == 1 else work_seconds
    return RUN_START_SECONDS + FIRST_TABLE_WARM_UP_SECONDS + scaled


def _budget(targets: PlanTargets) -> float:
    """Seconds of a run left for work after start-up and warm-up (at least one table's fixed cost)."""
    return max(TABLE_SECONDS, targets.target_run_seconds - RUN_START_SECONDS - FIRST_TABLE_WARM_UP_SECONDS)


def _own_run(work: TableWork, seconds: Estimate, targets: PlanTargets) -> PlannedRun:
    wanted = math.ceil(targets.base_workers * seconds.seconds / _budget(targets))
    workers = max(targets.base_workers, min(targets.max_workers, wanted))
    expected = run_seconds(seconds.seconds, tables=1, workers=workers, targets=targets)
    capped = " (max_workers)" if wanted > targets.max_workers else ""
    return PlannedRun(
        table_ids=(work.table_id,),
        number_of_workers=workers,
        work_seconds=seconds.seconds,
        estimated_seconds=expected,
        shape=RunShape.OWN_RUN,
        reason=(
            f"own run: about {seconds.seconds:.0f} s of work ({seconds.basis}) exceeds the "
            f"{targets.target_run_seconds:.0f} s target at {targets.base_workers} workers; {workers} workers{capped}, "
            f"about {expected:.0f} s"
        ),
    )


def _packed_run(tables: list[tuple[TableWork, Estimate]], targets: PlanTargets, *, full: str | None) -> PlannedRun:
    """``full``: the bound that closed the run before its target (batch_size, the ids' bytes), or None."""
    work = sum(seconds.seconds for _, seconds in tables)
    expected = run_seconds(work, tables=len(tables), workers=targets.base_workers, targets=targets)
    limit = full or f"the {targets.target_run_seconds:.0f} s target"
    return PlannedRun(
        table_ids=tuple(table.table_id for table, _ in tables),
        number_of_workers=targets.base_workers,
        work_seconds=work,
        estimated_seconds=expected,
        shape=RunShape.FULL if full else RunShape.PACKED,
        reason=f"{len(tables)} table(s), about {work:.0f} s of work: about {expected:.0f} s, up to {limit}",
    )


def id_bytes(table_id: str) -> int:
    """Pure: what a table id adds to a run's ids (its UTF-8 bytes, its quotes and a comma)."""
    return len(table_id.encode()) + 3


def plan_runs(ready: Sequence[TableWork], targets: PlanTargets) -> list[PlannedRun]:
    """The runs of one execution, in the order of ``ready`` (oldest pending file first): consecutive tables share a
    run while its estimate stays within the target and it holds at most ``max_tables_per_run`` tables and
    :data:`MAX_RUN_TABLE_ID_BYTES` of their ids; a table whose work alone exceeds the target gets its own run with more
    workers.

    Raises:
        ValueError: a target is out of range (a run of no table, fewer workers than 2, bounds reversed).
    """
    if targets.max_tables_per_run < 1 or targets.target_run_seconds <= 0:
        raise ValueError(f"a run needs at least one table and a positive target: {targets}")
    if not 2 <= targets.base_workers <= targets.max_workers:
        raise ValueError(f"workers must be 2 <= number_of_workers <= max_workers: {targets}")
    budget = _budget(targets)
    by_count = f"batch_size {targets.max_tables_per_run}"
    by_bytes = f"{MAX_RUN_TABLE_ID_BYTES:,} bytes of table ids"
    runs: list[PlannedRun] = []
    open_run: list[tuple[TableWork, Estimate]] = []
    open_work, open_bytes = 0.0, 0
    for work in ready:
        seconds = estimate(work)
        if seconds.seconds > budget:
            runs.append(_own_run(work, seconds, targets))
            continue
        size = id_bytes(work.table_id)
        if open_run and (open_work + seconds.seconds > budget or open_bytes + size > MAX_RUN_TABLE_ID_BYTES):
            over_bytes = open_work + seconds.seconds <= budget
            runs.append(_packed_run(open_run, targets, full=by_bytes if over_bytes else None))
            open_run, open_work, open_bytes = [], 0.0, 0
        open_run.append((work, seconds))
        open_work += seconds.seconds
        open_bytes += size
        if len(open_run) == targets.max_tables_per_run:
            runs.append(_packed_run(open_run, targets, full=by_count))
            open_run, open_work, open_bytes = [], 0.0, 0
    if open_run:
        runs.append(_packed_run(open_run, targets, full=None))
    return runs


def capacity_warning(
    cadence: str, *, tables: int, interval_minutes: int | None, targets: PlanTargets, max_concurrency: int
) -> str | None:
    """Why ``cadence`` cannot keep up when every one of its ``tables`` has a small change each interval, or ``None``.

    The floor of an execution: every table at the fixed cost, packed as :func:`plan_runs` packs them, the runs
    ``max_concurrency`` at a time. A cron cadence (no interval) is not checked.
    """
    if interval_minutes is None or tables == 0:
        return None
    runs = plan_runs([TableWork(f"t{n}", 1, 0) for n in range(tables)], targets)
    waves = math.ceil(len(runs) / max_concurrency)
    minutes = waves * max(run.estimated_seconds for run in runs) / 60
    if minutes <= interval_minutes:
        return None
    return (
        f"cadence {cadence}: {tables} tables with a change each take at least {len(runs)} runs "
        f"({targets.max_tables_per_run} tables a run at most), {max_concurrency} at a time: about {minutes:.0f} "
        f"minutes an execution, longer than its {interval_minutes}-minute interval; raise batch_size, "
        "max_concurrency or target_run_minutes, or move tables to another cadence"
    )
