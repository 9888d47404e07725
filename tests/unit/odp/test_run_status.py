"""One run status type: which statuses are failed, and that every reader of a status uses that one meaning."""

from __future__ import annotations

import pytest

from etl.datasets.job import DatasetJobOutcome
from lambdas.batch_manager.summary import TableOutcome
from odp.tracker import RunStatus, TableRun
from odp.tracker.dataset_run import DatasetRun
from sandbox.report import TableReport, left_undone

FAILED = {RunStatus.REFRESH_ERROR, RunStatus.BATCH_FAILED, RunStatus.QUALITY_FAILED, RunStatus.FAILED}


def test_failed_is_one_set_and_refresh_error_keeps_its_stored_value() -> None:
    assert {status for status in RunStatus if status.failed} == FAILED
    assert RunStatus.REFRESH_ERROR.value == "refresh_error"  # the value processing_tracker items carry
    # a recorded end of any writer's run (the ledger): all but a File Processor run still holding its lease
    assert {status for status in RunStatus if not status.finished} == {RunStatus.UPDATING}


@pytest.mark.parametrize("status", list(RunStatus))
def test_the_summary_the_report_and_the_dataset_job_agree_on_failed(status: RunStatus) -> None:
    assert TableOutcome("t", "b", status).failed is status.failed
    assert left_undone(status) is (status.failed or status is RunStatus.SKIPPED)
    assert TableReport("t", "c", status).ok is not left_undone(status)
    run = DatasetRun(dataset="d", zone="conformed", status=status, refresh="full")
    assert (DatasetJobOutcome(runs=(run,)).failed == [run]) is status.failed


def test_report_and_summary_rows_carry_the_status_value() -> None:
    run = TableRun(table_id="t", run_id="r", started_at="s", status=RunStatus.COMPLETED, files=2)
    assert TableReport("t", "c", RunStatus.COMPLETED, run=run).row()["status"] == "completed"
    assert TableOutcome("t", "b", RunStatus.NOT_RUN).row()["status"] == "not_run"
