"""Pure planning and summary functions."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from lambdas.batch_manager.planner import make_batches
from odp.cadence_plan import order_tables, pending_totals, table_work
from odp.contracts.batches import Batch, InvalidBatchResultError, parse_batch_results
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.planning import PlannedRun, RunShape
from odp.tracker import PendingSummary, RunStatus, TableRun, TableState


def summary(table_id: str, files: int, oldest: str | None, size: int = 10) -> PendingSummary:
    return PendingSummary(table_id=table_id, files=files, bytes=size, oldest_landed_at=oldest)


def test_order_puts_the_oldest_pending_file_first_and_leaves_out_leased_and_empty_tables() -> None:
    summaries = [
        summary("b", 1, "2024-05-01T10:00:00.000Z"),
        summary("a", 1, "2024-05-01T10:00:00.000Z"),
        summary("c", 3, "2024-05-01T09:59:59.999Z"),
        summary("leased", 9, "2024-05-01T08:00:00.000Z"),
        summary("empty", 0, None),
    ]
    assert order_tables(summaries, {"leased"}) == ["c", "a", "b"]


def test_each_planned_run_is_one_batch_with_its_workers_estimate_and_reason() -> None:
    runs = [
        PlannedRun(("big",), 6, 500.0, 298.4, RunShape.OWN_RUN, "own run: ..."),
        PlannedRun(("a", "b"), 2, 4.6, 52.6, RunShape.PACKED, "2 table(s) ..."),
    ]
    batches = make_batches(runs, "exec", "G.1X")
    assert [b.batch_id for b in batches] == ["exec-1", "exec-2"]
    assert [(b.table_ids, b.number_of_workers, b.estimated_seconds) for b in batches] == [
        (("big",), 6, 298),
        (("a", "b"), 2, 53),
    ]
    assert [b.reason for b in batches] == ["own run: ...", "2 table(s) ..."]
    assert {b.worker_type for b in batches} == {"G.1X"}
    assert [b.arguments["--odp_job_dpus"] for b in batches] == ["6.0", "2.0"]  # each run's DPU-seconds are its own


def test_a_tables_work_counts_its_last_completed_run_only() -> None:
    def state(status: RunStatus, seconds: float) -> TableState:
        run = TableRun(table_id="x", run_id="r", started_at="2024-05-01T10:00:00.000Z", status=status, seconds=seconds)
        return TableState(table_id="x", last_run=run)

    summaries = [summary("done", 1, "t"), summary("failed", 1, "t"), summary("new", 1, "t")]
    states = {"done": state(RunStatus.COMPLETED, 80.0), "failed": state(RunStatus.REFRESH_ERROR, 900.0)}
    work = table_work(summaries, states)
    assert [(w.table_id, w.files, w.bytes, w.last_run_seconds) for w in work] == [
        ("done", 1, 10, 80.0),
        ("failed", 1, 10, None),  # a failed run's duration says nothing of the table's size
        ("new", 1, 10, None),
    ]


def test_a_batch_carries_the_job_arguments_the_job_parses() -> None:
    payload = Batch(batch_id="exec-1", table_ids=("dms.public.a", "dms.public.b")).to_payload()
    # the Map item the ASL reads: the arguments for glue:startJobRun, the workers and why
    assert sorted(payload) == [
        "arguments",
        "batch_id",
        "estimated_seconds",
        "number_of_workers",
        "reason",
        "table_ids",
        "worker_type",
    ]
    assert (payload["batch_id"], payload["table_ids"]) == ("exec-1", ["dms.public.a", "dms.public.b"])
    assert payload["arguments"] == {
        "--odp_table_ids": '["dms.public.a", "dms.public.b"]',
        "--odp_batch_id": "exec-1",
        "--odp_job_dpus": "2.0",  # the run's own: 2 G.1X workers (over the job's DefaultArguments)
    }
    assert json.loads(payload["arguments"][FileProcessorJobArgs.option("table_ids")]) == payload["table_ids"]


def test_pending_totals_include_every_table_with_files() -> None:
    now = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
    totals = pending_totals(
        [
            summary("a", 2, "2024-05-01T11:00:00.500Z", 100),
            summary("b", 1, "2024-05-01T09:00:00.000Z", 5),
            summary("c", 0, None, 0),
        ],
        now,
    )
    assert totals.to_payload() == {"tables": 2, "files": 3, "bytes": 105, "oldest_age_seconds": 10800}
    assert pending_totals([], now).to_payload() == {"tables": 0, "files": 0, "bytes": 0, "oldest_age_seconds": 0}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"batch_id": "x"}, "must be a list"),
        ([{"table_ids": [], "status": "FAILED"}], r"batch_results\[0\] has no batch_id"),
        ([{"batch_id": "x", "table_ids": "a", "status": "FAILED"}], "table_ids must be a list"),
        ([{"batch_id": "x", "table_ids": ["a"], "status": "RUNNING"}], "status must be SUCCEEDED or FAILED"),
        ([{"batch_id": "x", "table_ids": ["a"]}], "status must be SUCCEEDED or FAILED, got None"),
        ([{"batch_id": "x", "table_ids": ["a"], "status": "FAILED"}, "x"], r"batch_results\[1\] is not an object"),
        ([{"batch_id": "", "table_ids": ["a"], "status": "FAILED"}], r"batch_results\[0\] has no batch_id"),
        ([{"batch_id": "x", "table_ids": [1], "status": "FAILED"}], "table_ids must be a list"),
    ],
)
def test_batch_results_are_validated(raw: object, message: str) -> None:
    with pytest.raises(InvalidBatchResultError, match=message):
        parse_batch_results(raw)


def test_a_batch_result_keeps_the_catchs_error_short() -> None:
    [failed, succeeded] = parse_batch_results(
        [
            {"batch_id": "e-1", "table_ids": ["a"], "status": "FAILED", "error": {"Error": "E", "Cause": "x" * 2000}},
            {"batch_id": "e-2", "table_ids": [], "status": "SUCCEEDED", "job_run_id": "jr_1"},
        ]
    )
    assert (failed.table_ids, failed.error) == (("a",), "E: " + "x" * 997)
    assert (succeeded.error, succeeded.job_run_id) == (None, "jr_1")
