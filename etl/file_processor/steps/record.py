"""Step ``record``: the files the commit applied leave file_tracker for its history (with the commit's instant),
duplicates of content the table holds go with them unapplied, and the run's record is made."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from etl.file_processor.run_context import TableRunContext, Then
from odp.faults import fault_point
from odp.tracker import FileStatus, RunStatus, TrackedFile

logger = logging.getLogger(__name__)


def record_applied(run: TableRunContext) -> Then:
    """Sets ``run`` (the completed TableRun, not yet finished on processing_tracker)."""
    plan, scope, applied = run.planned(), run.scope, run.applied
    run.keeper.check()
    if plan.apply:
        run.files.mark_processed(
            plan.apply, commit_instant=applied.instant, run_id=scope.run_id, retention=scope.retention
        )
        fault_point("etl.after_mark_processed")
    _skip_duplicates(run, plan.duplicates, applied.instant)
    run.run = scope.table_run(
        run.table_id,
        run.started_at,
        RunStatus.COMPLETED,
        **applied.outcome(),
        seconds=time.monotonic() - run.started,
        base_path=run.base_path,
        reconciled=plan.reconciled,
        discarded=run.discarded,
        duplicate_files=len(plan.duplicates),
        quarantined_files=tuple(run.set_aside),
    )
    return Then.NEXT


def _skip_duplicates(
    run: TableRunContext, duplicates: Sequence[tuple[TrackedFile, TrackedFile]], this_commit: str | None
) -> None:
    """Move files whose content the table already holds to history, unapplied, each with its reason."""
    for duplicate, original in duplicates:
        instant = original.commit_instant or this_commit or ""
        reason = (
            f"same content (ETag {duplicate.content_tag}) as {original.key}, already applied to this historical "
            f"table by commit {instant}; set replay=true on its file_tracker item to apply it anyway"
        )
        logger.warning("%s: %s not applied: %s", run.table_id, duplicate.key, reason)
        run.files.mark_processed(
            [duplicate],
            commit_instant=instant,
            run_id=run.scope.run_id,
            retention=run.scope.retention,
            status=FileStatus.DUPLICATE_CONTENT,
            skip_reason=reason,
        )
