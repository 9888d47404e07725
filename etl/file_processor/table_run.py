"""One table's run inside its error boundary: configuration, lease, the steps (etl.file_processor.steps), the
record on processing_tracker. Any failure becomes a refresh_error record (etl.file_processor.failure); the table's
files stay landed and the next table runs."""

from __future__ import annotations

import logging
import time

from etl.file_processor.failure import FailedRun, record_failure
from etl.file_processor.lease import LeaseKeeper
from etl.file_processor.quarantine import QuarantinePolicy
from etl.file_processor.run_context import JobScope, TableRunContext
from etl.file_processor.steps import run_steps
from odp.config.models import TableConfig
from odp.config.store import TableConfigStore
from odp.naming import table_base_path
from odp.tracker import RunStatus, TableRun, Trackers, iso

logger = logging.getLogger(__name__)


def run_table(scope: JobScope, table_id: str) -> TableRun:
    """One table, inside its error boundary: never raises for the table's own failures.

    Builds this thread's trackers (boto3 resources are not shared across threads).
    """
    started, started_at = time.monotonic(), iso(scope.clock())
    trackers = Trackers.build(scope.dynamodb, scope.tracker_tables, clock=scope.clock)
    policy = QuarantinePolicy(trackers.files, scope.run_id, table_id)
    config: TableConfig | None = None
    base_path: str | None = None
    try:
        config = TableConfigStore(scope.dynamodb.Table(scope.tracker_tables.table_config)).get(table_id)
        refused = _refusal(scope, trackers, config)
        if refused is not None:
            return _skipped(scope, trackers, table_id, started_at, refused)
        base_path = table_base_path(scope.raw_root, config.database, config.target_table)
        with LeaseKeeper(trackers.processing, table_id, scope.run_id, lease_seconds=scope.lease_seconds) as keeper:
            run = TableRunContext(
                scope, config, base_path, trackers.files, trackers.processing, keeper, policy, started, started_at
            )
            run_steps(run)
        if run.run is None:
            raise RuntimeError(f"{table_id}: the table run's steps made no record")  # a defect of the step list
        finished = run.run.model_copy(
            update={
                "finished_at": iso(scope.clock()),
                "dpu_seconds": scope.dpu_seconds(run.run.seconds),
                "step_seconds": {name: round(seconds, 3) for name, seconds in run.step_seconds.items()},
            }
        )
        trackers.processing.finish(finished, scope.run_id, history_retention=scope.retention)
        return finished
    except Exception as error:  # noqa: BLE001 - the per-table error boundary: record, report, move on
        failed = FailedRun(table_id, started_at, started, error, base_path, config)
        return record_failure(scope, trackers.processing, policy, failed)


def _refusal(scope: JobScope, trackers: Trackers, config: TableConfig) -> str | None:
    """Why the table does not run now (inactive, or its lease held by a live run), else None with its lease taken
    (or taken over from an ended job run: ProcessingTracker.take)."""
    if not config.is_active:
        return "inactive in table_config: its files stay landed"
    answer = trackers.processing.take(
        config.table_id,
        scope.run_id,
        lease_seconds=scope.lease_seconds,
        job_runs=scope.job_runs,
        run_id=scope.run_id,
        batch_id=scope.batch_id,
        job_run=scope.job_run,
    )
    if answer.took_over is not None:
        logger.warning("%s: %s", config.table_id, answer.took_over)
    return answer.refused


def _skipped(scope: JobScope, trackers: Trackers, table_id: str, started_at: str, message: str) -> TableRun:
    run = scope.table_run(table_id, started_at, RunStatus.SKIPPED, finished_at=iso(scope.clock()), error=message)
    trackers.processing.ledger.append_history(run, history_retention=scope.retention)
    logger.warning("%s skipped: %s", table_id, message)
    return run
