"""The Batch Manager on moto: plan and summarise, as the state machine calls them."""

from __future__ import annotations

import importlib
import io
import json
import re
from typing import Any

import boto3
import pytest

from lambdas.batch_manager import handler as batch_manager_handler
from lambdas.batch_manager.events import InvalidRequestError
from lambdas.batch_manager.manager import BatchManager, UnknownCadenceError
from lambdas.batch_manager.plans import PlanStore
from lambdas.runtime import new_metrics
from odp.config.loader import OdpConfig
from odp.contracts.batches import Batch, InvalidBatchResultError, PlanLocation, results_prefix
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.tracker import ProcessingTracker, RunStatus, TableRun
from odp.tracker.items import JobRunRef
from tests.support.aws import Clock
from tests.support.batch_manager import pending_file, put_all
from tests.support.lambdas import LambdaContext, emf_blobs

CADENCE = "every_10_minutes"
T = "taxi_trips_dms.taxi_trips.table_{}".format


def plan(manager: BatchManager, execution: str = "exec-1") -> dict[str, Any]:
    """The plan answer, with the batches it wrote to S3 (what the Map reads) in place of their count."""
    answer = batch_manager_handler.handle(
        {"action": "plan", "cadence": CADENCE, "execution_name": execution}, None, manager
    )
    stored = manager.plans.read_plan(PlanLocation.model_validate(answer["location"])) if answer["batches"] else []
    assert answer["batches"] == len(stored)
    assert answer["tables"] == sum(len(batch.table_ids) for batch in stored)
    return {**answer, "batches": [batch.to_payload() for batch in stored]}


def set_batch_size(tracker_tables: dict[str, Any], size: int) -> None:
    tracker_tables["batch_config"].update_item(
        Key={"cadence": CADENCE}, UpdateExpression="SET batch_size = :s", ExpressionAttributeValues={":s": size}
    )


@pytest.fixture
def pending(
    tracker_tables: dict[str, Any], config_loaded: OdpConfig, processing: ProcessingTracker, clock: Clock
) -> None:
    """Pending work of every_10_minutes: five tables, one leased, one whose lease expired; plus noise."""
    put_all(
        tracker_tables["file_tracker"],
        [
            pending_file(T(1), "a.parquet", "2024-05-01T10:00:00.000Z", 100),
            pending_file(T(1), "b.parquet", "2024-05-01T11:00:00.000Z", 100),
            pending_file(T(2), "a.parquet", "2024-05-01T09:00:00.000Z", 50),
            pending_file(T(3), "a.parquet", "2024-05-01T11:30:00.000Z", 10),
            pending_file(T(4), "a.parquet", "2024-05-01T08:00:00.000Z", 1000),  # leased: skipped, still counted
            pending_file(T(5), "a.parquet", "2024-05-01T10:30:00.000Z", 1),  # lease expired: planned
            pending_file(
                "inventory_debezium.inventory.products", "a.json", "2024-05-01T07:00:00.000Z"
            ),  # other cadence
            {**pending_file("crm.public.customers", "a.parquet", "2024-05-01T06:00:00.000Z"), "status": "unregistered"},
        ],
    )
    # The unregistered file must not be pending: drop the index attribute as FileTracker.register would.
    tracker_tables["file_tracker"].update_item(
        Key={
            "table_id": "crm.public.customers",
            "file_id": pending_file("crm.public.customers", "a.parquet", "x")["file_id"],
        },
        UpdateExpression="REMOVE pending_table_id",
    )
    processing.acquire(T(4), "glue-run-other", lease_seconds=900)
    processing.acquire(T(5), "glue-run-dead", lease_seconds=60)
    clock.advance(120)  # now 12:02; T(5)'s lease expired at 12:01


def test_plan_batches_the_oldest_tables_first_and_skips_leased_ones(
    manager: BatchManager, tracker_tables: dict[str, Any], pending: None
) -> None:
    set_batch_size(tracker_tables, 2)
    result = plan(manager, "exec-42")
    assert [batch["table_ids"] for batch in result["batches"]] == [[T(2), T(1)], [T(5), T(3)]]
    assert [batch["batch_id"] for batch in result["batches"]] == ["exec-42-1", "exec-42-2"]
    first = result["batches"][0]["arguments"]
    assert json.loads(first[FileProcessorJobArgs.option("table_ids")]) == [T(2), T(1)]
    assert first[FileProcessorJobArgs.option("batch_id")] == "exec-42-1"
    # leased T(4) is pending work too: the freshness metric must see a stuck table
    assert result["pending"] == {"tables": 5, "files": 6, "bytes": 1261, "oldest_age_seconds": 4 * 3600 + 120}
    json.dumps(result)  # the state machine receives it as JSON


def test_a_held_table_is_left_out_until_its_hold_is_released(
    manager: BatchManager, processing: ProcessingTracker, pending: None
) -> None:
    processing.acquire(T(2), "glue-run-a", lease_seconds=60)
    failed = TableRun(
        table_id=T(2),
        run_id="glue-run-a",
        started_at="2024-05-01T12:02:00.000Z",
        status=RunStatus.REFRESH_ERROR,
        error="TableConfigError: the table's configuration does not fit",
        failed_runs=5,
        held=True,
    )
    processing.finish(failed, "glue-run-a")
    result = plan(manager)
    assert [batch["table_ids"] for batch in result["batches"]] == [[T(1), T(5), T(3)]]
    assert result["pending"]["tables"] == 5  # its files still count: the freshness metric sees a held table
    assert processing.release_hold(T(2)) is True  # python -m odp retry
    assert [batch["table_ids"] for batch in plan(manager)["batches"]] == [[T(2), T(1), T(5), T(3)]]


def test_plan_uses_the_configured_batch_size(manager: BatchManager, pending: None) -> None:
    result = plan(manager)
    assert [batch["table_ids"] for batch in result["batches"]] == [[T(2), T(1), T(5), T(3)]]  # batch_size 5


def test_nothing_pending_gives_an_empty_plan(manager: BatchManager, config_loaded: OdpConfig) -> None:
    answer = batch_manager_handler.handle({"action": "plan", "cadence": CADENCE, "execution_name": "e"}, None, manager)
    assert (answer["batches"], answer["tables"]) == (0, 0)
    assert answer["pending"] == {"tables": 0, "files": 0, "bytes": 0, "oldest_age_seconds": 0}
    assert "Contents" not in boto3.client("s3").list_objects_v2(Bucket=manager.plans.bucket)  # no plan written


def test_the_plan_is_in_s3_and_the_answer_says_where_and_how_large(
    manager: BatchManager, tracker_tables: dict[str, Any], pending: None
) -> None:
    set_batch_size(tracker_tables, 1)
    answer = batch_manager_handler.handle(
        {"action": "plan", "cadence": CADENCE, "execution_name": "exec-7"}, None, manager
    )
    folder = f"plans/{CADENCE}/exec-7"
    assert answer["location"] == {
        "bucket": manager.plans.bucket,
        "key": f"{folder}/batches.json",
        "summary_key": f"{folder}/summary.json",
    }
    assert (answer["batches"], answer["tables"]) == (4, 4)
    body = boto3.client("s3").get_object(Bucket=manager.plans.bucket, Key=f"{folder}/batches.json")["Body"].read()
    items = json.loads(body)  # the Distributed Map's ItemReader reads a JSON array: one item per batch
    assert [item["table_ids"] for item in items] == [[T(2)], [T(1)], [T(5)], [T(3)]]
    assert set(items[0]) == {
        "batch_id",
        "table_ids",
        "arguments",
        "worker_type",
        "number_of_workers",
        "estimated_seconds",
        "reason",
    }


def test_a_table_too_large_for_one_run_gets_its_own_with_more_workers_and_the_plan_says_why(
    manager: BatchManager, tracker_tables: dict[str, Any], processing: ProcessingTracker, pending: None
) -> None:
    """T(1)'s last run took 20 minutes on the base workers: against a 4-minute target (192 s after start-up and
    warm-up, odp/planning.py) it needs ceil(2 x 1,200 / 192) = 13 workers, capped at max_workers 8; the others share
    a run on the base workers."""
    tracker_tables["batch_config"].update_item(
        Key={"cadence": CADENCE},
        UpdateExpression="SET max_workers = :m, target_run_minutes = :t, number_of_workers = :n",
        ExpressionAttributeValues={":m": 8, ":t": 4, ":n": 2},
    )
    processing.acquire(T(1), "glue-run-earlier", lease_seconds=60)
    earlier = TableRun(
        table_id=T(1),
        run_id="glue-run-earlier",
        started_at="2024-05-01T11:00:00.000Z",
        status=RunStatus.COMPLETED,
        seconds=1200.0,
    )
    processing.finish(earlier, "glue-run-earlier")

    result = plan(manager)

    runs = [(batch["table_ids"], batch["number_of_workers"], batch["worker_type"]) for batch in result["batches"]]
    assert runs == [([T(1)], 8, "G.1X"), ([T(2), T(5), T(3)], 2, "G.1X")]
    own = result["batches"][0]
    assert own["reason"] == (
        "own run: about 1200 s of work (last run) exceeds the 240 s target at 2 workers; 8 workers (max_workers), "
        "about 348 s"
    )
    assert own["estimated_seconds"] == 348  # 48 s + 1,200 s x 2 / 8
    assert result["batches"][1]["reason"].startswith("3 table(s)")


def test_a_switched_off_cadence_plans_nothing(
    manager: BatchManager, tracker_tables: dict[str, Any], pending: None
) -> None:
    tracker_tables["batch_config"].update_item(
        Key={"cadence": CADENCE}, UpdateExpression="SET is_active = :f", ExpressionAttributeValues={":f": False}
    )
    assert plan(manager)["batches"] == []


def test_an_unknown_cadence_is_an_error_that_says_what_to_do(manager: BatchManager, config_loaded: OdpConfig) -> None:
    with pytest.raises(UnknownCadenceError, match="load the configuration"):
        batch_manager_handler.handle({"action": "plan", "cadence": "weekly", "execution_name": "e"}, None, manager)


@pytest.mark.parametrize(
    ("event", "message"),
    [
        ({"cadence": CADENCE}, "'action'"),
        ({"action": "plan", "cadence": CADENCE}, "'execution_name'"),
        ({"action": "delete", "cadence": CADENCE}, "unknown action 'delete'"),
        ({"action": "plan", "cadence": ""}, "'cadence'"),
        ({"action": "summarise", "execution_name": "e"}, "event field 'cadence' must be a non-empty string, got None"),
        ([{"action": "plan"}], "event must be an object, got list"),
    ],
)
def test_malformed_requests_are_refused(manager: BatchManager, event: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidRequestError, match=message):
        batch_manager_handler.handle(event, None, manager)


def test_plan_publishes_pending_metrics_per_cadence(
    manager: BatchManager, pending: None, capsys: pytest.CaptureFixture[str]
) -> None:
    manager.metrics = new_metrics({}, service="")
    plan(manager)
    [blob] = emf_blobs(capsys.readouterr().out)
    [directive] = blob["_aws"]["CloudWatchMetrics"]
    assert directive["Namespace"] == "ODP"
    assert directive["Dimensions"] == [["cadence"]]  # exactly what the freshness alarm names
    assert blob["cadence"] == CADENCE
    values = {m["Name"]: (blob[m["Name"]], m["Unit"]) for m in directive["Metrics"]}
    assert values == {
        "PendingFiles": ([6.0], "Count"),
        "PendingBytes": ([1261.0], "Bytes"),
        "OldestPendingFileAgeSeconds": ([14520.0], "Seconds"),
        "TablesWithPendingFiles": ([5.0], "Count"),
        "LeasedTablesSkipped": ([1.0], "Count"),
        "Batches": ([1.0], "Count"),
    }


# --- summarise -----------------------------------------------------------------------------------


def finish(processing: ProcessingTracker, table_id: str, status: RunStatus, batch_id: str, **counts: Any) -> None:
    owner = f"glue-{batch_id}"
    processing.acquire(table_id, owner, lease_seconds=900, batch_id=batch_id)
    run = TableRun(
        table_id=table_id,
        run_id=owner,
        started_at="2024-05-01T12:00:00.000Z",
        status=status,
        batch_id=batch_id,
        **counts,
    )
    processing.finish(run, owner)


def write_results(plans: PlanStore, location: PlanLocation, outputs: list[dict[str, Any]]) -> dict[str, str]:
    """What the Distributed Map's ResultWriter leaves under the results prefix (Step Functions' format): a file of
    the child executions (their output), and the manifest listing it; returns its ResultWriterDetails."""
    folder = f"{results_prefix(CADENCE)}/0123abcd"
    records = [{"Input": "{}", "Output": json.dumps(output), "Status": "SUCCEEDED"} for output in outputs]
    s3 = boto3.client("s3")
    s3.put_object(Bucket=plans.bucket, Key=f"{folder}/SUCCEEDED_0.json", Body=json.dumps(records))
    manifest = {
        "DestinationBucket": plans.bucket,
        "MapRunArn": "arn:aws:states:eu-west-1:123456789012:mapRun:sm/label:0123abcd",
        "ResultFiles": {"FAILED": [], "PENDING": [], "SUCCEEDED": [{"Key": f"{folder}/SUCCEEDED_0.json", "Size": 1}]},
    }
    s3.put_object(Bucket=plans.bucket, Key=f"{folder}/manifest.json", Body=json.dumps(manifest))
    return {"Bucket": plans.bucket, "Key": f"{folder}/manifest.json"}


def summarise_request(manager: BatchManager, outputs: list[dict[str, Any]], execution: str) -> dict[str, Any]:
    """The plan of these batches in S3, the Map's results beside it, and the Summarise request that names both."""
    location = manager.plans.location(CADENCE, execution)
    batches = [Batch(batch_id=output["batch_id"], table_ids=tuple(output["table_ids"])) for output in outputs]
    manager.plans.write_plan(location, batches)
    results = write_results(manager.plans, location, outputs)
    plan_location = location.model_dump()
    return {
        "action": "summarise",
        "cadence": CADENCE,
        "execution_name": execution,
        "plan": plan_location,
        "results": results,
    }


def summarise(manager: BatchManager, outputs: list[dict[str, Any]], execution: str = "exec") -> dict[str, Any]:
    return batch_manager_handler.handle(summarise_request(manager, outputs, execution), None, manager)


def test_summarise_reports_each_tables_run_for_this_batch(manager: BatchManager, processing: ProcessingTracker) -> None:
    finish(
        processing,
        T(1),
        RunStatus.COMPLETED,
        "exec-1",
        files=3,
        rows=30,
        inserts=10,
        updates=15,
        deletes=5,
        seconds=4.5,
        commit_instant="20240501120000111",
    )
    finish(processing, T(2), RunStatus.REFRESH_ERROR, "exec-1", files=2, error="column fare missing")
    finish(
        processing, T(3), RunStatus.COMPLETED, "exec-2", files=1, commit_instant="c3"
    )  # completed in a batch that failed later
    finish(processing, T(5), RunStatus.COMPLETED, "exec-0", files=9)  # a stale outcome from an earlier execution
    processing.acquire(T(4), "glue-exec-2", lease_seconds=900, batch_id="exec-2")  # the job died mid-table
    result = summarise(
        manager,
        [
            {"batch_id": "exec-1", "table_ids": [T(1), T(2)], "status": "SUCCEEDED", "job_run_id": "jr_1"},
            {
                "batch_id": "exec-2",
                "table_ids": [T(3), T(4), T(5)],
                "status": "FAILED",
                "error": {"Error": "States.TaskFailed", "Cause": "Glue job run failed: out of memory"},
            },
        ],
    )
    rows = {row["table_id"]: row for row in result["tables"]}
    assert rows[T(1)] == {
        "table_id": T(1),
        "batch_id": "exec-1",
        "status": "completed",
        "files": 3,
        "rows": 30,
        "inserts": 10,
        "updates": 15,
        "deletes": 5,
        "seconds": 4.5,
        "commit_instant": "20240501120000111",
        "error": None,
        "quarantined_files": (),
    }
    assert (rows[T(2)]["status"], rows[T(2)]["files"], rows[T(2)]["error"]) == (
        "refresh_error",
        2,
        "column fare missing",
    )
    assert (rows[T(3)]["status"], rows[T(3)]["commit_instant"]) == ("completed", "c3")
    assert (rows[T(4)]["status"], rows[T(4)]["error"]) == (
        "batch_failed",
        "States.TaskFailed: Glue job run failed: out of memory",
    )
    assert (rows[T(5)]["status"], rows[T(5)]["files"]) == ("batch_failed", 0)  # its earlier run does not count
    assert [row["table_id"] for row in result["tables"][:3]] == [T(2), T(4), T(5)]  # failures first
    assert (result["failed_tables"], result["failed_batches"], result["omitted_tables"]) == (3, 1, 0)
    json.dumps(result)


def test_a_run_named_after_its_batch_counts_without_a_recorded_batch_id(
    manager: BatchManager, processing: ProcessingTracker
) -> None:
    # The File Processor names its runs <batch_id>-<12 hex>; a run that did not record batch_id still matches.
    for table_id, run_id, status in [
        (T(1), "exec-1-0123456789ab", RunStatus.COMPLETED),
        (T(2), "exec-12-0123456789ab", RunStatus.COMPLETED),  # batch exec-12, not exec-1
        (T(3), "exec-1-0123456789ab", RunStatus.REFRESH_ERROR),
    ]:
        processing.acquire(table_id, run_id, lease_seconds=900, run_id=run_id)
        run = TableRun(
            table_id=table_id,
            run_id=run_id,
            started_at="2024-05-01T12:00:00.000Z",
            status=status,
            files=4,
            error="boom",
        )
        processing.finish(run, run_id)
    result = summarise(manager, [{"batch_id": "exec-1", "table_ids": [T(1), T(2), T(3)], "status": "FAILED"}])
    rows = {row["table_id"]: (row["status"], row["files"]) for row in result["tables"]}
    assert rows == {T(1): ("completed", 4), T(2): ("batch_failed", 0), T(3): ("refresh_error", 4)}
    assert result["failed_tables"] == 2


def test_a_table_the_job_did_not_record_in_a_successful_batch_is_not_run(
    manager: BatchManager, processing: ProcessingTracker
) -> None:
    result = summarise(manager, [{"batch_id": "exec-1", "table_ids": [T(1)], "status": "SUCCEEDED"}])
    assert [(row["status"], row["error"]) for row in result["tables"]] == [("not_run", None)]
    assert (result["failed_tables"], result["failed_batches"]) == (0, 0)


def test_summarise_names_quarantined_files_and_publishes_their_count(
    manager: BatchManager, processing: ProcessingTracker, capsys: pytest.CaptureFixture[str]
) -> None:
    keys = ("src/app/t/2.csv", "src/app/t/3.csv")
    finish(processing, T(1), RunStatus.REFRESH_ERROR, "exec-1", files=0, error="bad", quarantined_files=keys)
    finish(processing, T(2), RunStatus.COMPLETED, "exec-1", files=1)
    manager.metrics = new_metrics({}, service="")
    result = summarise(manager, [{"batch_id": "exec-1", "table_ids": [T(1), T(2)], "status": "FAILED"}])
    rows = {row["table_id"]: row for row in result["tables"]}
    assert rows[T(1)]["quarantined_files"] == keys
    assert rows[T(2)]["quarantined_files"] == ()
    assert result["quarantined_files"] == 2
    [blob] = emf_blobs(capsys.readouterr().out)
    [directive] = blob["_aws"]["CloudWatchMetrics"]
    assert directive["Dimensions"] == [["cadence"]]  # what the quarantine alarm names
    assert blob["QuarantinedFiles"] == [2.0]
    # a later run that quarantines nothing clears the table's list
    finish(processing, T(1), RunStatus.COMPLETED, "exec-2", files=1)
    again = summarise(manager, [{"batch_id": "exec-2", "table_ids": [T(1)], "status": "SUCCEEDED"}])
    assert (again["tables"][0]["quarantined_files"], again["quarantined_files"]) == ((), 0)


def test_summarise_refuses_what_is_not_the_maps_results_and_never_passes_a_batch_over(manager: BatchManager) -> None:
    location = manager.plans.location(CADENCE, "exec")
    manager.plans.write_plan(
        location, [Batch(batch_id="exec-1", table_ids=(T(1),)), Batch(batch_id="exec-2", table_ids=(T(2),))]
    )
    request = {"action": "summarise", "cadence": CADENCE, "execution_name": "exec", "plan": location.model_dump()}
    # a child output without table_ids
    results = write_results(manager.plans, location, [{"batch_id": "exec-1", "status": "SUCCEEDED"}])
    with pytest.raises(InvalidBatchResultError, match=r"batch_results\[0\] table_ids must be a list of table ids"):
        batch_manager_handler.handle({**request, "results": results}, None, manager)
    # a result of a batch the plan does not hold
    results = write_results(
        manager.plans, location, [{"batch_id": "exec-9", "table_ids": [T(9)], "status": "SUCCEEDED"}]
    )
    with pytest.raises(InvalidBatchResultError, match="name batches the plan does not hold: exec-9"):
        batch_manager_handler.handle({**request, "results": results}, None, manager)
    # a manifest that is not one
    with pytest.raises(
        InvalidBatchResultError, match=re.escape(f"s3://{manager.plans.bucket}/{location.key} is not a Map Run")
    ):
        batch_manager_handler.handle(
            {**request, "results": {"Bucket": location.bucket, "Key": location.key}}, None, manager
        )
    with pytest.raises(InvalidBatchResultError, match=r"event field results\.Key: Field required"):
        batch_manager_handler.handle({**request, "results": {"Bucket": location.bucket}}, None, manager)
    # a planned batch the results do not hold, and a Map Run that failed (no results at all): failed, named
    results = write_results(
        manager.plans, location, [{"batch_id": "exec-1", "table_ids": [T(1)], "status": "SUCCEEDED"}]
    )
    answer = batch_manager_handler.handle({**request, "results": results}, None, manager)
    assert (answer["failed_batches"], answer["tables"][0]["table_id"]) == (1, T(2))
    assert answer["tables"][0]["error"] == "the Map's results hold no result for this batch"
    failed_run = batch_manager_handler.handle({**request, "results": None}, None, manager)
    assert (failed_run["failed_batches"], failed_run["failed_tables"]) == (2, 2)


def test_the_summary_answer_stays_small_whatever_the_number_of_tables(
    manager: BatchManager, processing: ProcessingTracker
) -> None:
    """20,000 planned tables of one failed execution: the answer lists the failed tables that fit in 50 KB, counts
    everything, names where the whole summary is and hands the datasets ["*"]; the whole summary has every table."""
    tables = [f"src.app.t{n:05d}_with_a_longer_name" for n in range(20_000)]
    outputs = [
        {"batch_id": f"exec-{n}", "table_ids": tables[n * 5 : n * 5 + 5], "status": "FAILED", "error": {"Error": "X"}}
        for n in range(4_000)
    ]
    answer = summarise(manager, outputs)
    assert len(json.dumps(answer)) < 64 * 1024  # far below the 256 KiB of a state
    assert (answer["failed_tables"], answer["failed_batches"]) == (20_000, 4_000)
    assert answer["omitted_tables"] == 20_000 - len(answer["tables"]) > 0
    assert answer["changed_tables"] == ["*"]
    summary = answer["summary"]
    whole = json.loads(boto3.client("s3").get_object(Bucket=summary["bucket"], Key=summary["key"])["Body"].read())
    assert sorted(row["table_id"] for row in whole["tables"]) == tables


# --- the module-level handler --------------------------------------------------------------------


def test_importing_the_handler_creates_no_client(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("an AWS client was created at import time")

    for owner in (boto3, boto3.session.Session):
        monkeypatch.setattr(owner, "client", refuse)
        monkeypatch.setattr(owner, "resource", refuse)
    importlib.reload(batch_manager_handler)


@pytest.mark.usefixtures("lambda_env", "pending", "plans")
def test_the_handler_plans_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    batch_manager_handler.default_manager.cache_clear()
    answer = batch_manager_handler.handler(
        {"action": "plan", "cadence": CADENCE, "execution_name": "exec-9"}, LambdaContext()
    )
    manager = batch_manager_handler.default_manager()
    result = {"batches": [b.to_payload() for b in manager.plans.read_plan(PlanLocation(**answer["location"]))]}
    # The real clock: T(4)'s lease (taken at the fixed clock's 12:00 in 2024) has long expired.
    assert [batch["table_ids"] for batch in result["batches"]] == [[T(4), T(2), T(1), T(5), T(3)]]
    [blob] = emf_blobs(capsys.readouterr().out)
    assert blob["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["cadence"]]
    assert "service" not in blob
    manager = batch_manager_handler.default_manager()
    outputs = [{"batch_id": "exec-9-1", "table_ids": [T(4)], "status": "FAILED"}]
    summary = batch_manager_handler.handler(summarise_request(manager, outputs, "exec-9"), LambdaContext())
    assert summary["failed_tables"] == 1


@pytest.mark.usefixtures("lambda_env", "pending", "plans")
def test_a_lease_held_by_a_live_emr_serverless_run_is_not_planned_again(tracker_tables: dict[str, Any]) -> None:
    """The Batch Manager asks the engine that runs the lease's holder: Glue knows no EMR Serverless run and
    would call it gone, so a table an EMR run is still writing would be planned into a second run."""
    emr = boto3.client("emr-serverless")
    application = emr.create_application(name="odp", releaseLabel="emr-7.5.0", type="SPARK")["applicationId"]
    run = emr.start_job_run(applicationId=application, executionRoleArn="arn:aws:iam::123456789012:role/x")
    live = ProcessingTracker(tracker_tables["processing_tracker"], tracker_tables["processing_tracker_history"])
    live.acquire(
        T(2), "emr-run", lease_seconds=900, job_run=JobRunRef(f"emr-serverless/{application}", run["jobRunId"])
    )
    batch_manager_handler.default_manager.cache_clear()
    answer = batch_manager_handler.handler(
        {"action": "plan", "cadence": CADENCE, "execution_name": "exec-9"}, LambdaContext()
    )
    manager = batch_manager_handler.default_manager()
    result = {"batches": [b.to_payload() for b in manager.plans.read_plan(PlanLocation(**answer["location"]))]}
    assert T(2) not in [table for batch in result["batches"] for table in batch["table_ids"]]


@pytest.mark.usefixtures("lambda_env", "pending", "plans")
def test_the_handlers_log_lines_carry_the_invocation_and_the_execution_as_correlation_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    batch_manager_handler.default_manager.cache_clear()
    stream = io.StringIO()
    log_handler = batch_manager_handler.logger.registered_handler
    previous = log_handler.setStream(stream)
    try:
        batch_manager_handler.handler(
            {"action": "plan", "cadence": CADENCE, "execution_name": "exec-9"}, LambdaContext(aws_request_id="r-1")
        )
        outputs = [{"batch_id": "exec-9-1", "table_ids": [T(4)], "status": "FAILED"}]
        request = summarise_request(batch_manager_handler.default_manager(), outputs, "exec-9")
        batch_manager_handler.handler(request, LambdaContext(aws_request_id="r-2"))
    finally:
        log_handler.setStream(previous)
    lines = {line["message"]: line for line in map(json.loads, stream.getvalue().splitlines())}
    planned, summarised = lines["planned"], lines["summarised"]
    assert (planned["function_request_id"], planned["correlation_id"], planned["action"]) == ("r-1", "exec-9", "plan")
    assert (summarised["function_request_id"], summarised["correlation_id"]) == ("r-2", "exec-9")
