"""Pure planning: which tables run, in which order, in which batches; and the pending totals."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import datetime

from pydantic import BaseModel, ConfigDict

from odp.contracts.batches import Batch
from odp.tracker import PendingSummary
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


def make_batches(table_ids: Sequence[str], batch_size: int, execution_name: str) -> list[Batch]:
    """Consecutive groups of at most ``batch_size`` tables: ceil(n / batch_size) batches, ids ``<execution>-<n>``.

    Raises:
        ValueError: batch_size is below 1.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    return [
        Batch(batch_id=f"{execution_name}-{number}", table_ids=tuple(table_ids[start : start + batch_size]))
        for number, start in enumerate(range(0, len(table_ids), batch_size), start=1)
    ]
