"""The plan's items: one batch per planned run (the planning itself: odp/cadence_plan.py, shared with the warm
writer)."""

from __future__ import annotations

from collections.abc import Sequence

from odp.contracts.batches import Batch
from odp.planning import PlannedRun


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
