"""Pure planning: which tables run, in which order, in which batches; and the pending totals."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from pydantic import BaseModel, ConfigDict

from odp.contracts.batches import Batch
from odp.planning import PlannedRun, TableWork
from odp.tracker import PendingSummary, RunStatus, TableState
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


def make_batches(runs: Sequence[PlannedRun], execution_name: str, worker_type: str) -> list[Batch]:
    """The plan's items: one batch per planned run, ids ``<execution>-<n>`` in the runs' order."""
    return [
        Batch(
            batch_id=f"{execution_name}-{number}",
            table_ids=run.table_ids,
            worker_type=worker_type,
            number_of_workers=run.number_of_workers,
            estimated_seconds=round(run.estimated_seconds),
            reason=run.reason,
        )
        for number, run in enumerate(runs, start=1)
    ]


def table_work(summaries: Iterable[PendingSummary], states: Mapping[str, TableState]) -> list[TableWork]:
    """Each table's pending files and bytes, with the duration of its last successful run (its size shows there)."""
    works = []
    for summary in summaries:
        last = states[summary.table_id].last_run if summary.table_id in states else None
        seconds = last.seconds if last is not None and last.status is RunStatus.COMPLETED and last.seconds else None
        works.append(TableWork(summary.table_id, summary.files, summary.bytes, last_run_seconds=seconds))
    return works
