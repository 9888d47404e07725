"""Pure summary of a File Processor execution: each table's outcome from processing_tracker."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from odp.compat import named_after_batch
from odp.contracts.batches import (
    FAILED,
    MAX_ERROR_CHARS,
    MAX_SUMMARY_BYTES,
    BatchResult,
    PlanLocation,
)
from odp.contracts.datasets_trigger import changed_tables
from odp.tracker import RunStatus, TableRun, TableState
from odp.tracker.items import run_fields

# The TableRun fields a summary line carries.
SUMMARY_COUNTS = ("files", "rows", "inserts", "updates", "deletes", "seconds", "commit_instant")


@dataclass(frozen=True)
class TableOutcome:
    """One table's line in the summary: its run for this batch, or why it has none.

    ``status`` is the run's (completed / refresh_error), else ``batch_failed`` (the Glue run failed
    before this table's outcome was recorded) or ``not_run`` (the Glue run succeeded without
    recording this table, e.g. another run held its lease).
    """

    table_id: str
    batch_id: str
    status: RunStatus
    run: TableRun | None = None
    error: str | None = None

    @property
    def failed(self) -> bool:
        return self.status.failed

    @property
    def quarantined_files(self) -> tuple[str, ...]:
        """Files this run set aside (python -m odp file release after a fix)."""
        return self.run.quarantined_files if self.run is not None else ()

    def row(self) -> dict[str, Any]:
        """The summary line (JSON): the run's counts, zero when there is no run."""
        line = {"table_id": self.table_id, "batch_id": self.batch_id, "status": self.status.value}
        return (
            line
            | run_fields(self.run, SUMMARY_COUNTS)
            | {"error": self.error, "quarantined_files": self.quarantined_files}
        )


def ran_in_batch(state: TableState, batch_id: str) -> bool:
    """Whether the table's last run belongs to this batch.

    The run's ``batch_id`` (stored ``last_batch_id``) says so when the job recorded it (acquire(batch_id=...));
    otherwise the run id tells: the File Processor names its runs ``<batch_id>-<12 hex digits>``.
    """
    run = state.last_run
    if run is None:
        return False
    if run.batch_id is not None:
        return run.batch_id == batch_id
    return named_after_batch(run.run_id, batch_id)


def table_outcome(table_id: str, batch: BatchResult, state: TableState) -> TableOutcome:
    """One table's outcome: what its run for this batch recorded, else what the batch's status implies.

    A table whose run recorded completed succeeded even if its batch failed (another table failed
    the job); one whose batch failed without a completed run for this batch counts as failed.
    """
    run = state.finished_run()
    if run is not None and ran_in_batch(state, batch.batch_id):
        error = (run.error or "unknown error")[:MAX_ERROR_CHARS] if run.status.failed else None
        return TableOutcome(table_id=table_id, batch_id=batch.batch_id, status=run.status, run=run, error=error)
    if batch.status == FAILED:
        error = batch.error or "the Glue run failed"
        return TableOutcome(table_id, batch.batch_id, RunStatus.BATCH_FAILED, error=error)
    return TableOutcome(table_id, batch.batch_id, RunStatus.NOT_RUN)


def summarise(batches: Sequence[BatchResult], states: Mapping[str, TableState]) -> dict[str, Any]:
    """The whole summary of an execution: every table's row, failed tables first.

    ``failed_tables``, ``failed_batches`` and ``quarantined_files`` (files set aside by this execution's runs, each
    listed on its table's row) count everything.
    """
    outcomes = [
        table_outcome(table_id, batch, states.get(table_id, TableState(table_id=table_id)))
        for batch in batches
        for table_id in batch.table_ids
    ]
    ordered = [o for o in outcomes if o.failed] + [o for o in outcomes if not o.failed]
    return {
        "tables": [outcome.row() for outcome in ordered],
        "failed_tables": sum(1 for o in outcomes if o.failed),
        "failed_batches": sum(1 for batch in batches if batch.status == FAILED),
        "quarantined_files": sum(len(o.quarantined_files) for o in outcomes),
    }


def bounded_summary(whole: dict[str, Any], location: PlanLocation) -> dict[str, Any]:
    """The Summarise state's output, far below Step Functions' 256 KiB whatever the number of tables: the rows of
    ``whole`` (failed first) up to MAX_SUMMARY_BYTES of JSON, ``omitted_tables`` for the rest, where the whole
    summary is, and the changed tables for the datasets state machine (every planned table; ``["*"]``, every
    dataset, past odp.contracts.datasets_trigger's MAX_CHANGED_TABLES)."""
    rows: list[dict[str, Any]] = []
    size = 0
    for row in whole["tables"]:
        size += len(json.dumps(row)) + 2
        if rows and size > MAX_SUMMARY_BYTES:
            break
        rows.append(row)
    table_ids = [row["table_id"] for row in whole["tables"]]
    return {
        **{name: whole[name] for name in ("failed_tables", "failed_batches", "quarantined_files")},
        "tables": rows,
        "omitted_tables": len(whole["tables"]) - len(rows),
        "summary": {"bucket": location.bucket, "key": location.summary_key},
        "changed_tables": changed_tables(table_ids),
    }
