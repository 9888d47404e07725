"""A failed table run's record: its error (with the files quarantined for it), its failed runs in a row and
whether that holds the table (``max_table_attempts``), written to processing_tracker while the run still holds
the lease."""

from __future__ import annotations

import logging
import time
import traceback
from dataclasses import dataclass

from botocore.exceptions import ClientError

from etl.file_processor.quarantine import QuarantinePolicy
from etl.file_processor.run_context import JobScope
from odp.config.models import DEFAULT_MAX_TABLE_ATTEMPTS, TableConfig
from odp.tracker import LeaseLostError, ProcessingTracker, RunStatus, TableRun, iso

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class FailedRun:
    """What the error boundary knows of a run that failed: how far it got (``base_path``, ``config``: None when it
    failed before reading them)."""

    table_id: str
    started_at: str
    started: float  # monotonic
    error: Exception
    base_path: str | None = None
    config: TableConfig | None = None


def record_failure(
    scope: JobScope, processing: ProcessingTracker, policy: QuarantinePolicy, failed: FailedRun
) -> TableRun:
    """The refresh_error record of ``failed``, finished on processing_tracker (a tracker error is logged: the
    lease then expires and the files stay landed). Call it from the ``except`` block: it keeps the stack trace."""
    table_id, error, config = failed.table_id, failed.error, failed.config
    message = f"{type(error).__name__}: {error}"
    trace = traceback.format_exc()
    earlier = tuple(policy.set_aside)
    quarantined, when = policy.count_failure(error, config)
    if quarantined:
        message += f" [quarantined {when}: {', '.join(quarantined)}; the next run goes on without them]"
    if earlier:
        message += f" [quarantined earlier in this run: {', '.join(earlier)}]"
    failed_runs, bound = _failed_runs(processing, table_id, config)
    held = failed_runs >= bound
    if held:
        message += (
            f" [failed {failed_runs} runs in a row (max_table_attempts {bound}): held, the Batch Manager "
            f"plans it no more; after a fix, python -m odp retry {table_id}]"
        )
    seconds = time.monotonic() - failed.started
    logger.error("%s failed: %s", table_id, message)
    run = scope.table_run(
        table_id,
        failed.started_at,
        RunStatus.REFRESH_ERROR,
        finished_at=iso(scope.clock()),
        seconds=seconds,
        error=message[:4000],
        error_trace=trace[-30000:],
        quarantined_files=(*earlier, *quarantined),
        dpu_seconds=scope.dpu_seconds(seconds),
        failed_runs=failed_runs,
        held=held or None,
    )
    try:
        processing.finish(run, scope.run_id, history_retention=scope.retention)
    except (LeaseLostError, ClientError) as lost:
        # The run failed and its outcome cannot be stored: the lease expires, the files stay landed.
        logger.error("%s: could not record the failure: %s", table_id, lost)
    return run.model_copy(update={"error": message, "base_path": failed.base_path})


def _failed_runs(processing: ProcessingTracker, table_id: str, config: TableConfig | None) -> tuple[int, int]:
    """The table's failed runs in a row with this one, and its ``max_table_attempts`` (reached: the table is
    held). A tracker error here counts this run alone: it never hides the table's own error."""
    bound = config.max_table_attempts if config is not None else DEFAULT_MAX_TABLE_ATTEMPTS
    try:
        failed = (processing.state(table_id).failed_runs or 0) + 1
    except ClientError as failure:
        logger.error("%s: could not read its failed runs: %s", table_id, failure)
        failed = 1
    return failed, bound
