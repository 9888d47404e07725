"""The sandbox's own pieces, without Spark: S3 events, saved state, the source model, checksums, CLI."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import boto3
import pytest

from odp.config.loader import OdpConfig
from odp.naming import TrackerTableNames
from odp.operations.backend import StagedObject
from odp.tracker.schema import create_tables
from sandbox import state_store
from sandbox.cli import main
from sandbox.demo_data import DELETE, INSERT, UPDATE, Change, ChangeFile, DemoGenerator, SourceTable
from sandbox.spark_on_demand import SparkOnDemand, session_of
from sandbox.staging import BucketMap, list_objects, new_objects, object_created_event, sqs_batches
from sandbox.validation import canonical, checksum
from tests.support.kill_harness import sandbox_run_argv

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def test_staging_objects_carry_the_md5_etag_and_only_new_versions_are_new(tmp_path: Path) -> None:
    (tmp_path / "src/s/t").mkdir(parents=True)
    (tmp_path / "src/s/t/a.json").write_bytes(b'{"a": 1}\n')
    (tmp_path / "src/s/t/b.json").write_bytes(b'{"b": 2}\n')
    objects = list_objects(tmp_path, "staging")
    assert [o.key for o in objects] == ["src/s/t/a.json", "src/s/t/b.json"]
    assert objects[0].etag == hashlib.md5(b'{"a": 1}\n').hexdigest()
    assert objects[0].size == 9
    announced = {"src/s/t/a.json": objects[0].etag, "src/s/t/b.json": "an-older-etag"}
    assert [o.key for o in new_objects(objects, announced)] == ["src/s/t/b.json"]


def test_events_have_the_eventbridge_form_with_the_key_url_encoded_as_s3_does(samples_dir: Path) -> None:
    sample = json.loads((samples_dir / "lambda-events/s3EventBridgeNotificationObjectCreatedEvent.json").read_text())
    obj = StagedObject(bucket="staging", key="inventory_debezium/inventory/products/dbserver1.inventory.products+0+0000000000.json",
                       size=10, etag="abc")  # fmt: skip
    event = object_created_event(obj, sequencer=255, region="eu-west-1", now=NOW)
    assert set(event) == set(sample)
    assert set(event["detail"]) == set(sample["detail"])
    assert set(event["detail"]["object"]) == set(sample["detail"]["object"])
    assert event["detail-type"] == "Object Created"
    assert event["detail"]["object"]["key"] == (
        "inventory_debezium/inventory/products/dbserver1.inventory.products%2B0%2B0000000000.json"
    )
    assert event["detail"]["object"]["etag"] == "abc"
    assert event["detail"]["object"]["sequencer"] == "0000000000000000FF"


def test_sqs_batches_hold_at_most_ten_messages_with_the_event_as_body() -> None:
    events = [{"n": i} for i in range(23)]
    batches = list(sqs_batches(events, queue_arn="arn:aws:sqs:eu-west-1:123456789012:q", region="eu-west-1"))
    assert [len(b["Records"]) for b in batches] == [10, 10, 3]
    record = batches[2]["Records"][2]
    assert json.loads(record["body"]) == {"n": 22}
    assert record["eventSource"] == "aws:sqs"
    assert record["md5OfBody"] == hashlib.md5(record["body"].encode()).hexdigest()


def test_buckets_map_to_folders_with_hadoop_file_uris(tmp_path: Path) -> None:
    buckets = BucketMap({"staging": tmp_path / "staging"})
    uri = buckets.resolve("s3://staging/a/b/c+0+1.json")
    assert uri == f"file://{(tmp_path / 'staging').resolve().as_posix()}/a/b/c+0+1.json"
    assert buckets.resolve("file:///already/local") == "file:///already/local"
    with pytest.raises(KeyError, match="'elsewhere' is not a sandbox bucket"):
        buckets.resolve("s3://elsewhere/key")


def test_tracker_state_round_trips_through_the_lake_folder(aws: None, tmp_path: Path) -> None:
    client = boto3.client("dynamodb")
    names = TrackerTableNames.for_environment("sandbox")
    create_tables(client, names)
    item = {"table_id": {"S": "a.b.c"}, "file_id": {"S": "f1"}, "size": {"N": "12"}, "tags": {"SS": ["x", "y"]}}
    client.put_item(TableName=names.file_tracker, Item=item)
    state_store.dump_tables(client, [names.file_tracker], tmp_path)
    client.delete_table(TableName=names.file_tracker)
    create_tables(client, names)
    assert state_store.restore_tables(client, [names.file_tracker], tmp_path) == 1
    assert state_store.scan_typed(client, names.file_tracker) == [item]
    state_store.save_announced(tmp_path, {"k": "e"})
    assert state_store.load_announced(tmp_path) == {"k": "e"}


def test_a_corrupt_state_file_names_itself(tmp_path: Path) -> None:
    path = state_store.state_dir(tmp_path) / state_store.ANNOUNCED_FILE
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.raises(state_store.StateFileError, match=r"announced_objects\.json is not valid JSON"):
        state_store.load_announced(tmp_path)


def test_the_model_replays_landed_changes_in_ordering_order(config: OdpConfig) -> None:
    table = SourceTable(config=config.table("taxi_trips_dms.taxi_trips.table_5"))
    row = {"pk_id": 1, "tip_amount": 1.0}
    newer = {"pk_id": 1, "tip_amount": 3.0}
    late = ChangeFile("t", "late", [Change(UPDATE, (1,), {"pk_id": 1, "tip_amount": 2.0}, 3)], landed_round=2)
    table.files = [
        ChangeFile("t", "load", [Change(INSERT, (1,), row, 1), Change(INSERT, (2,), {"pk_id": 2}, 2)], 0),
        ChangeFile("t", "cdc", [Change(UPDATE, (1,), newer, 4), Change(DELETE, (2,), {"pk_id": 2}, 5)], 1),
        late,
        ChangeFile("t", "copy", late.changes, landed_round=2, copy_of="late"),
    ]
    assert table.expected_rows(0) == [row, {"pk_id": 2}]
    assert table.expected_rows(1) == [newer]
    assert table.expected_rows(2) == [newer]  # the late update is older than the landed one


def test_historical_tables_expect_one_row_per_distinct_landed_change(config: OdpConfig) -> None:
    table = SourceTable(config=config.table("taxi_trips_dms.taxi_trips.table_16"))
    first = ChangeFile("t", "a", [Change(INSERT, (1,), {"pk_id": 1}, 1), Change(DELETE, (1,), {"pk_id": 1}, 2)], 0)
    table.files = [first, ChangeFile("t", "b", first.changes, 0, copy_of="a")]
    assert table.expected_rows(0) == [{"pk_id": 1}, {"pk_id": 1}]


def test_the_generator_is_deterministic_and_writes_every_format(config: OdpConfig, tmp_path: Path) -> None:
    ids = ("taxi_trips_dms.taxi_trips.table_5", "inventory_debezium.inventory.products", "orders_dynamodb.app.orders")
    first = DemoGenerator(config, tmp_path / "a", table_ids=ids)
    second = DemoGenerator(config, tmp_path / "b", table_ids=ids)
    for round_number in range(4):
        assert [f.key for f in first.generate_round(round_number)] == [
            f.key for f in second.generate_round(round_number)
        ]
    keys = sorted(p.relative_to(tmp_path / "a").as_posix() for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert keys == sorted(p.relative_to(tmp_path / "b").as_posix() for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert "taxi_trips_dms/taxi_trips/table_5/LOAD00000001.parquet" in keys
    for key in keys:
        assert (tmp_path / "a" / key).read_bytes() == (tmp_path / "b" / key).read_bytes(), key
    products = [json.loads(line) for line in (tmp_path / "a" / keys[0]).read_text().splitlines()]
    assert {event["op"] for event in products} == {"r"}


def test_canonical_values_agree_between_the_model_and_spark_forms() -> None:
    assert canonical(datetime(2026, 1, 1, 0, 5, tzinfo=UTC)) == "2026-01-01 00:05:00.000000"
    assert canonical(Decimal("12.30")) == canonical(Decimal("12.3")) == "12.3"
    assert canonical('{"zip":"D1","city":"Cork"}') == canonical('{"city": "Cork", "zip": "D1"}')
    assert canonical(True) == "true"
    assert canonical(None) != canonical("None")
    assert canonical(1.5) == "1.5"


def test_checksums_ignore_row_order_and_see_one_changed_value() -> None:
    rows = [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]
    assert checksum(rows, ["a", "b"]) == checksum(list(reversed(rows)), ["a", "b"])
    count, total = checksum(rows, ["a", "b"])
    assert count == 2
    assert checksum([{"a": 1, "b": "x"}, {"a": 2, "b": "z"}], ["a", "b"])[1] != total


def test_run_refuses_a_missing_staging_folder_and_an_unknown_cadence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--staging", str(tmp_path / "nope"), "--lake", str(tmp_path / "lake")]) == 2
    assert "staging folder" in capsys.readouterr().err
    (tmp_path / "staging").mkdir()
    args = ["run", "--staging", str(tmp_path / "staging"), "--lake", str(tmp_path / "lake"), "--cadence", "weekly"]
    assert main(args) == 2
    assert "unknown cadence 'weekly'" in capsys.readouterr().err


def test_spark_on_demand_starts_its_session_once_whatever_the_threads() -> None:
    started: list[str] = []
    gate = threading.Barrier(4)

    def start() -> object:
        started.append(threading.current_thread().name)
        return object()

    on_demand = SparkOnDemand(start)
    assert not on_demand.started

    def ask(_: int) -> object:
        gate.wait()  # the four threads ask at once
        return session_of(on_demand)

    with ThreadPoolExecutor(4) as pool:
        sessions = list(pool.map(ask, range(4)))
    assert len(started) == 1
    assert len({id(session) for session in sessions}) == 1
    assert on_demand.started
    plain = object()  # a session given as it is, not on demand
    assert session_of(plain) is plain


def test_a_run_with_nothing_to_process_starts_no_jvm(tmp_path: Path, repo_root: Path) -> None:
    """``python -m sandbox run`` over an empty staging folder, in a child whose Hudi bundle is missing: starting Spark
    would fail the run (HudiBundleMissingError), so a run that passes started none."""
    (tmp_path / "staging").mkdir()
    argv = sandbox_run_argv(repo_root / "config", tmp_path / "staging", tmp_path / "lake")
    env = {**os.environ, "ODP_HUDI_BUNDLE_JAR": str(tmp_path / "no-bundle.jar")}
    done = subprocess.run(argv, cwd=repo_root, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((tmp_path / "lake" / "report.json").read_text(encoding="utf-8"))
    assert report["ok"]
    assert report["executions"]  # every cadence's state machine ran, and started no Glue job
    assert all(execution["glue_runs"] == 0 for execution in report["executions"]), report["executions"]
