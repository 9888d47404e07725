"""The File Manager on moto, fed SQS batches built from the published samples."""

from __future__ import annotations

import importlib
import io
import json
from pathlib import Path
from typing import Any

import boto3
import pytest
from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError

from lambdas.file_manager import handler as file_manager_handler
from lambdas.file_manager.manager import FileManager
from lambdas.runtime import new_metrics
from odp.config.items import table_config_item
from odp.config.loader import load_config
from odp.tracker import FileStatus, FileTracker, make_file_id
from tests.support.aws import CallCounter, Clock
from tests.support.lambdas import LambdaContext, emf_blobs, object_created, sqs_batch

DMS_TABLE = "taxi_trips_dms.taxi_trips.table_1"
DMS_PREFIX = "taxi_trips_dms/taxi_trips/table_1"
BUCKET = "odp-test-staging"


@pytest.fixture(scope="module")
def config_items(repo_root: Path) -> list[dict[str, Any]]:
    return [table_config_item(table) for table in load_config(repo_root / "config").tables]


@pytest.fixture
def config_loaded(tracker_tables: dict[str, Any], config_items: list[dict[str, Any]]) -> None:
    """table_config holds the repository's configuration, as the Configuration Manager writes it."""
    with tracker_tables["table_config"].batch_writer() as writer:
        for item in config_items:
            writer.put_item(Item=item)


@pytest.fixture
def files(tracker_tables: dict[str, Any], clock: Clock) -> FileTracker:
    return FileTracker(tracker_tables["file_tracker"], tracker_tables["file_tracker_history"], clock=clock)


@pytest.fixture
def manager(tracker_tables: dict[str, Any], files: FileTracker, clock: Clock, config_loaded: None) -> FileManager:
    return FileManager(files, tracker_tables["table_config"], clock=clock)


@pytest.fixture
def events(s3_event: dict[str, Any], sqs_event: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Both published samples: the EventBridge event and the SQS event."""
    return s3_event, sqs_event


def items(table: Any) -> list[dict[str, Any]]:
    return table.scan()["Items"]


def run(manager: FileManager, sqs_sample: dict[str, Any], bodies: list[Any]) -> dict[str, Any]:
    return file_manager_handler.handle(sqs_batch(sqs_sample, bodies), None, manager)


def test_registers_dms_full_load_and_cdc_files(
    manager: FileManager, files: FileTracker, s3_event: dict[str, Any], sqs_event: dict[str, Any]
) -> None:
    load = object_created(s3_event, f"{DMS_PREFIX}/LOAD00000001.parquet", etag="e-load", time="2024-05-01T10:00:00Z")
    cdc = object_created(
        s3_event, f"{DMS_PREFIX}/2024/05/01/20240501-105959123.parquet", etag="e-cdc", time="2024-05-01T11:00:00Z"
    )
    assert run(manager, sqs_event, [load, cdc]) == {"batchItemFailures": []}

    landed = {f.file_name: f for f in files.landed_files(DMS_TABLE)}
    assert sorted(landed) == ["20240501-105959123.parquet", "LOAD00000001.parquet"]
    full = landed["LOAD00000001.parquet"]
    assert (full.file_kind.value, full.status, full.bucket, full.size) == ("full_load", FileStatus.LANDED, BUCKET, 1024)
    assert full.file_id == make_file_id(BUCKET, f"{DMS_PREFIX}/LOAD00000001.parquet", "e-load")
    assert full.landed_at == "2024-05-01T10:00:00.000Z"  # when S3 reported it, not when we processed it
    assert full.registered_at == "2024-05-01T12:00:00.000Z"
    assert full.sequencer == "006408CAD69598B05E"
    assert landed["20240501-105959123.parquet"].file_kind.value == "cdc"
    assert files.pending_summary(DMS_TABLE).oldest_landed_at == "2024-05-01T10:00:00.000Z"


def test_a_debezium_file_named_load_is_cdc(
    manager: FileManager, files: FileTracker, s3_event: dict[str, Any], sqs_event: dict[str, Any]
) -> None:
    key = "inventory_debezium/inventory/products/LOAD-products%2B0%2B0000000001.json"  # as S3 encodes it
    run(manager, sqs_event, [object_created(s3_event, key)])
    [tracked] = files.landed_files("inventory_debezium.inventory.products")
    assert tracked.file_kind.value == "cdc"  # only DMS names full loads LOAD*
    assert tracked.key == "inventory_debezium/inventory/products/LOAD-products+0+0000000001.json"


def test_duplicate_delivery_changes_nothing(
    manager: FileManager,
    tracker_tables: dict[str, Any],
    s3_event: dict[str, Any],
    sqs_event: dict[str, Any],
    clock: Clock,
) -> None:
    event = object_created(s3_event, f"{DMS_PREFIX}/20240501-110000000.parquet")
    assert run(manager, sqs_event, [event, event]) == {"batchItemFailures": []}  # twice in one batch
    before = items(tracker_tables["file_tracker"])
    clock.advance(3600)
    assert run(manager, sqs_event, [event]) == {"batchItemFailures": []}  # and redelivered an hour later
    assert items(tracker_tables["file_tracker"]) == before
    assert len(before) == 1


def test_the_same_object_reported_by_two_events_is_one_file(
    manager: FileManager, files: FileTracker, s3_event: dict[str, Any], sqs_event: dict[str, Any]
) -> None:
    key = f"{DMS_PREFIX}/20240501-110000000.parquet"
    put = object_created(s3_event, key, event_id="event-put", time="2024-05-01T11:00:00Z")
    # The same object reported again (a second notification, later, with its etag quoted as some APIs do).
    again = object_created(
        s3_event, key, event_id="event-again", time="2024-05-01T11:05:00Z", etag='"0f343b0931126a20f133d67c2b018a3b"'
    )
    run(manager, sqs_event, [put, again])
    [tracked] = files.landed_files(DMS_TABLE)
    assert tracked.event_time == "2024-05-01T11:00:00.000Z"


def test_a_new_version_of_a_key_is_a_new_file_and_order_of_delivery_does_not_matter(
    manager: FileManager, files: FileTracker, s3_event: dict[str, Any], sqs_event: dict[str, Any]
) -> None:
    key = f"{DMS_PREFIX}/20240501-110000000.parquet"
    first = object_created(s3_event, key, etag="etag-v1", time="2024-05-01T11:00:00Z", event_id="a")
    second = object_created(s3_event, key, etag="etag-v2", time="2024-05-01T11:01:00Z", event_id="b")
    other = object_created(s3_event, f"{DMS_PREFIX}/20240501-105000000.parquet", time="2024-05-01T10:50:00Z")
    run(manager, sqs_event, [second])  # the later version arrives first
    run(manager, sqs_event, [other, first])
    landed = files.landed_files(DMS_TABLE)
    assert sorted((f.etag, f.landed_at) for f in landed) == [
        ("0f343b0931126a20f133d67c2b018a3b", "2024-05-01T10:50:00.000Z"),
        ("etag-v1", "2024-05-01T11:00:00.000Z"),
        ("etag-v2", "2024-05-01T11:01:00.000Z"),
    ]
    summary = files.pending_summary(DMS_TABLE)
    assert (summary.files, summary.oldest_landed_at) == (3, "2024-05-01T10:50:00.000Z")


def test_a_poison_message_fails_only_its_record(
    manager: FileManager, files: FileTracker, s3_event: dict[str, Any], sqs_event: dict[str, Any], samples_dir: Path
) -> None:
    s3_notification = json.loads((samples_dir / "lambda-events" / "s3SqsEvent.json").read_text())["Records"][0]["body"]
    bodies = [
        object_created(s3_event, f"{DMS_PREFIX}/a.parquet", etag="a"),
        sqs_event["Records"][0]["body"],  # "Test message."
        object_created(s3_event, f"{DMS_PREFIX}/b.parquet", etag="b"),
        sqs_event["Records"][1]["body"],  # '{"message": "foo1"}'
        s3_notification,  # the S3 notification format, not EventBridge
        {**s3_event, "detail": {**s3_event["detail"], "object": {"size": 3}}},  # no key
        object_created(s3_event, f"{DMS_PREFIX}/c.parquet", etag="c"),
    ]
    response = run(manager, sqs_event, bodies)
    assert response == {"batchItemFailures": [{"itemIdentifier": f"message-{n}"} for n in (1, 3, 4, 5)]}
    assert sorted(f.file_name for f in files.landed_files(DMS_TABLE)) == ["a.parquet", "b.parquet", "c.parquet"]


def test_the_published_sqs_sample_fails_as_a_whole(manager: FileManager, sqs_event: dict[str, Any]) -> None:
    # Neither body is an S3 event: every record fails, and Powertools fails the invocation so SQS retries it.
    with pytest.raises(BatchProcessingError):
        file_manager_handler.handle(sqs_event, None, manager)


@pytest.mark.parametrize(
    "case",
    [
        (f"{DMS_PREFIX}/", 0, "folder marker"),
        (f"{DMS_PREFIX}/2024/05/01/", 0, "folder marker"),
        (f"{DMS_PREFIX}/_SUCCESS", 0, "marker file"),
        (f"{DMS_PREFIX}/part-0001.parquet.tmp", 10, "temporary file"),
        (f"{DMS_PREFIX}/empty.parquet", 0, "zero-byte"),
        (f"{DMS_PREFIX}/notes.txt", 10, "unknown suffix"),
        ("IMG_m7fzo3.jpg", 184662, "unknown suffix"),
        ("loose/file.parquet", 10, "does not follow"),
    ],
)
def test_non_data_objects_are_skipped_with_a_reason(
    manager: FileManager,
    tracker_tables: dict[str, Any],
    events: tuple[dict[str, Any], dict[str, Any]],
    caplog: pytest.LogCaptureFixture,
    case: tuple[str, int, str],
) -> None:
    key, size, reason = case
    s3_event, sqs_event = events
    assert run(manager, sqs_event, [object_created(s3_event, key, size=size)]) == {"batchItemFailures": []}
    assert items(tracker_tables["file_tracker"]) == []
    [record] = [r for r in caplog.records if r.getMessage() == "skipped a non-data object"]
    assert reason in record.skip_reason
    assert record.key == key
    assert record.levelname == "WARNING"


def test_a_file_without_an_extension_is_data_of_its_table(
    manager: FileManager, files: FileTracker, s3_event: dict[str, Any], sqs_event: dict[str, Any]
) -> None:
    # Firehose's default object name has no extension: it is read in the table's configured format.
    key = "orders_dynamodb/app/orders/2026/01/01/00/odp-orders-1-2026-01-01-00-00-00-0a1b2c3d-4e5f"
    assert run(manager, sqs_event, [object_created(s3_event, key, size=512)]) == {"batchItemFailures": []}
    [tracked] = files.landed_files("orders_dynamodb.app.orders")
    assert (tracked.key, tracked.file_kind.value, tracked.status) == (key, "cdc", FileStatus.LANDED)


def test_the_published_event_as_it_is_is_skipped(
    manager: FileManager,
    s3_event: dict[str, Any],
    sqs_event: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    manager.metrics = new_metrics({})
    response = run(manager, sqs_event, [s3_event])
    assert response == {"batchItemFailures": []}
    assert items(manager._files._tracker) == []
    [record] = [r for r in caplog.records if r.getMessage() == "skipped a non-data object"]
    assert record.skip_reason.startswith("unknown suffix on 'IMG_m7fzo3.jpg'")
    assert (record.key, record.bucket) == ("IMG_m7fzo3.jpg", "example-bucket")
    [blob] = emf_blobs(capsys.readouterr().out)
    assert blob["FilesSkipped"] == [1.0]


def test_files_of_unconfigured_tables_are_unmatched_and_of_inactive_ones_unregistered(
    manager: FileManager,
    files: FileTracker,
    tracker_tables: dict[str, Any],
    s3_event: dict[str, Any],
    sqs_event: dict[str, Any],
) -> None:
    tracker_tables["table_config"].update_item(
        Key={"table_id": "taxi_trips_dms.taxi_trips.table_2"},
        UpdateExpression="SET is_active = :false REMOVE active_cadence",
        ExpressionAttributeValues={":false": False},
    )
    unknown = object_created(s3_event, "crm/public/customers/20240501-110000000.parquet")
    inactive = object_created(s3_event, "taxi_trips_dms/taxi_trips/table_2/20240501-110000000.parquet")
    assert run(manager, sqs_event, [unknown, inactive]) == {"batchItemFailures": []}
    stored = {item["table_id"]: item for item in items(tracker_tables["file_tracker"])}
    assert {table_id: item["status"] for table_id, item in stored.items()} == {
        "crm.public.customers": "unmatched",
        "taxi_trips_dms.taxi_trips.table_2": "unregistered",
    }
    assert all("pending_table_id" not in item for item in stored.values())
    assert files.pending_summary("crm.public.customers").files == 0


def test_a_processed_file_redelivered_stays_processed(
    manager: FileManager,
    files: FileTracker,
    tracker_tables: dict[str, Any],
    s3_event: dict[str, Any],
    sqs_event: dict[str, Any],
) -> None:
    event = object_created(s3_event, f"{DMS_PREFIX}/20240501-110000000.parquet")
    run(manager, sqs_event, [event])
    landed = files.landed_files(DMS_TABLE)
    files.mark_processed(landed, commit_instant="20240501120000000", run_id="run-1")
    assert run(manager, sqs_event, [event]) == {"batchItemFailures": []}
    assert files.landed_files(DMS_TABLE) == []
    assert files.pending_summary(DMS_TABLE).files == 0
    [history] = items(tracker_tables["file_tracker_history"])
    assert (history["status"], history["commit_instant"]) == ("raw_file_processed", "20240501120000000")


def test_table_config_is_read_once_per_table_per_invocation(
    manager: FileManager, tracker_tables: dict[str, Any], s3_event: dict[str, Any], sqs_event: dict[str, Any]
) -> None:
    counter = CallCounter(tracker_tables["table_config"].meta.client)
    bodies = [object_created(s3_event, f"{DMS_PREFIX}/{n}.parquet", etag=str(n)) for n in range(4)]
    bodies.append(object_created(s3_event, "taxi_trips_dms/taxi_trips/table_2/x.parquet"))
    run(manager, sqs_event, bodies)
    assert counter.calls["GetItem"] == 2
    run(manager, sqs_event, bodies[:1])
    assert counter.calls["GetItem"] == 3  # a new invocation sees configuration changes


def test_outcomes_are_counted_as_metrics(
    manager: FileManager, s3_event: dict[str, Any], sqs_event: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    manager.metrics = new_metrics({})
    new = object_created(s3_event, f"{DMS_PREFIX}/a.parquet")
    bodies = [
        new,
        new,
        object_created(s3_event, "crm/public/customers/a.parquet"),
        object_created(s3_event, f"{DMS_PREFIX}/"),
    ]
    bodies.append("not json")
    run(manager, sqs_event, bodies)
    [blob] = emf_blobs(capsys.readouterr().out)
    assert blob["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "ODP"
    counts = {
        name: blob.get(name)
        for name in ("FilesRegistered", "DuplicateFileEvents", "FilesUnmatched", "FilesSkipped", "FailedMessages")
    }
    assert counts == {
        "FilesRegistered": [1.0],
        "DuplicateFileEvents": [1.0],
        "FilesUnmatched": [1.0],
        "FilesSkipped": [1.0],
        "FailedMessages": [1.0],
    }


def test_importing_the_handler_creates_no_client(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("an AWS client was created at import time")

    monkeypatch.setattr(boto3, "client", refuse)
    monkeypatch.setattr(boto3, "resource", refuse)
    monkeypatch.setattr(boto3.session.Session, "client", refuse)
    monkeypatch.setattr(boto3.session.Session, "resource", refuse)
    importlib.reload(file_manager_handler)


@pytest.mark.usefixtures("lambda_env", "config_loaded")
def test_the_handler_builds_its_manager_from_the_environment_at_first_call(
    tracker_tables: dict[str, Any],
    events: tuple[dict[str, Any], dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    s3_event, sqs_event = events
    file_manager_handler.default_manager.cache_clear()
    event = sqs_batch(sqs_event, [object_created(s3_event, f"{DMS_PREFIX}/a.parquet")])
    assert file_manager_handler.handler(event, LambdaContext()) == {"batchItemFailures": []}
    assert file_manager_handler.handler(event, LambdaContext()) == {"batchItemFailures": []}
    assert file_manager_handler.default_manager() is file_manager_handler.default_manager()  # built once per process
    [item] = items(tracker_tables["file_tracker"])
    assert item["table_id"] == DMS_TABLE
    blobs = emf_blobs(capsys.readouterr().out)
    assert [blob.get("FilesRegistered") for blob in blobs] == [[1.0], None]
    assert [blob.get("DuplicateFileEvents") for blob in blobs] == [None, [1.0]]
    assert blobs[0]["service"] == "odp-test"


def test_a_missing_table_variable_names_itself(
    monkeypatch: pytest.MonkeyPatch, aws: None, sqs_event: dict[str, Any]
) -> None:
    file_manager_handler.default_manager.cache_clear()
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    for name in ("ODP_TABLE_FILE_TRACKER", "ODP_TABLE_TABLE_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(Exception, match="ODP_TABLE_FILE_TRACKER"):
        file_manager_handler.handler(sqs_event, LambdaContext())


def test_a_failed_message_is_logged_as_an_error_with_its_message_id(
    manager: FileManager, events: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    s3_event, sqs_event = events
    stream = io.StringIO()
    handler = file_manager_handler.logger.registered_handler
    previous = handler.setStream(stream)
    try:
        run(manager, sqs_event, [object_created(s3_event, f"{DMS_PREFIX}/a.parquet"), "not json"])
    finally:
        handler.setStream(previous)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    [error] = [line for line in lines if line["level"] == "ERROR"]
    assert (error["correlation_id"], error["exception_name"]) == ("message-1", "MalformedEventError")
    assert (
        error["exception"].splitlines()[-1]
        == "lambdas.file_manager.events.MalformedEventError: message body is not JSON: 'not json'"
    )
    [registered] = [line for line in lines if line["message"] == "file registered"]
    assert (registered["correlation_id"], registered["table_id"]) == ("message-0", DMS_TABLE)


def test_a_record_that_fails_after_parsing_is_logged_with_its_message_id(
    manager: FileManager, events: tuple[dict[str, Any], dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    s3_event, sqs_event = events

    def refuse(event: Any) -> Any:
        raise RuntimeError(f"DynamoDB refused {event.key}")

    monkeypatch.setattr(manager, "register", refuse)
    stream = io.StringIO()
    handler = file_manager_handler.logger.registered_handler
    previous = handler.setStream(stream)
    try:
        with pytest.raises(BatchProcessingError):  # the only record failed: the whole batch is retried
            run(manager, sqs_event, [object_created(s3_event, f"{DMS_PREFIX}/a.parquet")])
    finally:
        handler.setStream(previous)
    [error] = [json.loads(line) for line in stream.getvalue().splitlines() if '"ERROR"' in line]
    assert (error["correlation_id"], error["exception_name"]) == ("message-0", "RuntimeError")
    assert error["exception"].splitlines()[-1] == f"RuntimeError: DynamoDB refused {DMS_PREFIX}/a.parquet"
