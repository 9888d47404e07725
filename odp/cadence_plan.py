"""One cadence's plan from the trackers: the Batch Manager's and the warm writer's one planning path.

The Batch Manager (lambdas/batch_manager) plans each execution of a scheduled cadence with :func:`plan_cadence`; the
warm writer (etl/file_processor/warm.py) plans each of its ticks with the same function, so a table is planned alike
whichever mode its cadence runs in. Reads: one paginated Scan of the pending index, one BatchGetItem per 100 pending
tables (docs/decisions/024, 026); the rest is pure.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from pydantic import BaseModel, ConfigDict

from odp.planning import PlannedRun, PlanTargets, TableWork, plan_runs
from odp.tracker import FileTracker, PendingSummary, ProcessingTracker, RunStatus, TableState
from odp.tracker.items import parse_iso


class PendingTotals(BaseModel):
    """Pending work of a cadence, leased tables included (a stuck table must show up as stale): the
    plan's ``pending`` object."""

    model_config = ConfigDict(frozen=True)

    tables: int
    files: int
    bytes: int
    oldest_age_seconds: int

    def to_payload(self) -> dict[str, int]:
        return self.model_dump()


def pending_totals(summaries: Iterable[PendingSummary], now: datetime) -> PendingTotals:
    """Sum the tables' pending files; age of the oldest pending file in whole seconds (0 if none)."""
    with_files = [summary for summary in summaries if summary.files > 0]
    landed = [summary.oldest_landed_at for summary in with_files if summary.oldest_landed_at]
    age = max(0, math.floor((now - parse_iso(min(landed))).total_seconds())) if landed else 0
    return PendingTotals(
        tables=len(with_files),
        files=sum(summary.files for summary in with_files),
        bytes=sum(summary.bytes for summary in with_files),
        oldest_age_seconds=age,
    )


def order_tables(summaries: Iterable[PendingSummary], leased: set[str]) -> list[str]:
    """Tables with pending files and no live lease, the one with the oldest pending file first.

    Ties break on table id so a plan is reproducible.
    """
    ready = [summary for summary in summaries if summary.files > 0 and summary.table_id not in leased]
    ready.sort(key=lambda summary: (summary.oldest_landed_at or "", summary.table_id))
    return [summary.table_id for summary in ready]


def table_work(summaries: Iterable[PendingSummary], states: Mapping[str, TableState]) -> list[TableWork]:
    """Each table's pending files and bytes, with the duration of its last successful run (its size shows there)."""
    works = []
    for summary in summaries:
        last = states[summary.table_id].last_run if summary.table_id in states else None
        seconds = last.seconds if last is not None and last.status is RunStatus.COMPLETED and last.seconds else None
        works.append(TableWork(summary.table_id, summary.files, summary.bytes, last_run_seconds=seconds))
    return works


@dataclass(frozen=True)
class CadencePlan:
    """What one execution (or one warm tick) of a cadence runs, and what it left out."""

    runs: list[PlannedRun]
    totals: PendingTotals
    active_tables: int
    ready_tables: int
    leased: frozenset[str]
    held: frozenset[str]


def plan_cadence(
    files: FileTracker,
    processing: ProcessingTracker,
    active_tables: Sequence[str],
    targets: PlanTargets | None,
    now: datetime,
) -> CadencePlan:
    """Runs of the active tables with pending files, oldest first, leased and held tables left out, packed by their
    estimated work toward ``targets`` (:func:`odp.planning.plan_runs`); ``targets`` ``None`` (the cadence switched
    off): no run, the pending totals still counted."""
    summaries = files.pending_summaries(active_tables) if active_tables else []
    pending = [summary for summary in summaries if summary.files > 0]
    # one read of each pending table's item: its lease, its hold and its last run's duration
    states = processing.states(summary.table_id for summary in pending) if pending else {}
    leased, held = processing.unavailable_among(states)
    ready = order_tables(pending, leased | held)
    by_table = {summary.table_id: summary for summary in pending}
    runs = plan_runs(table_work((by_table[t] for t in ready), states), targets) if targets is not None else []
    return CadencePlan(
        runs=runs,
        totals=pending_totals(pending, now),  # held and leased tables' files too: a stuck table shows as stale
        active_tables=len(summaries),
        ready_tables=len(ready),
        leased=frozenset(leased),
        held=frozenset(held),
    )
