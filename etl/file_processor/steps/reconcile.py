"""Step ``reconcile``: the landed files a completed commit already consumed (a run crashed between its commit and
its tracker update) move to history, one commit at a time, before anything is read."""

from __future__ import annotations

from etl.file_processor.run_context import TableRunContext, Then


def reconcile_consumed(run: TableRunContext) -> Then:
    for instant, files in run.planned().reconcile:
        run.keeper.check()
        run.files.mark_processed(files, commit_instant=instant, run_id=run.scope.run_id, retention=run.scope.retention)
    return Then.NEXT
