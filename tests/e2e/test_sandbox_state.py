"""The sandbox saves a DynamoDB table to the lake folder after every write to it (no Spark)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3

from odp.naming import TrackerTableNames
from odp.tracker import FileTracker, TrackedFile
from odp.tracker.schema import create_tables
from odp.tracker.statuses import FileKind
from sandbox import state_store
from tests.support.paths import AWS_REGION


def test_written_tables_name_the_tables_a_call_writes_in_the_order_it_writes_them() -> None:
    transaction = {
        "TransactItems": [
            {"ConditionCheck": {"TableName": "history-check"}},
            {"Put": {"TableName": "history"}},
            {"Delete": {"TableName": "tracker"}},
            {"Put": {"TableName": "history"}},
        ]
    }
    assert state_store.written_tables("TransactWriteItems", transaction) == ["history", "tracker"]
    assert state_store.written_tables("BatchWriteItem", {"RequestItems": {"a": [], "b": []}}) == ["a", "b"]
    assert state_store.written_tables("UpdateItem", {"TableName": "t"}) == ["t"]
    assert state_store.written_tables("Query", {"TableName": "t"}) == []
    assert state_store.written_tables("GetItem", {"TableName": "t"}) == []


def _saved(lake: Path, table: str) -> list[dict[str, Any]]:
    return json.loads((lake / "_sandbox" / "dynamodb" / f"{table}.json").read_text())


def test_every_write_is_saved_before_the_call_returns(aws: None, tmp_path: Path) -> None:
    names = TrackerTableNames.for_environment("sandbox")
    session = boto3.session.Session(region_name=AWS_REGION)
    create_tables(session.client("dynamodb"), names)
    state_store.WriteThrough(tmp_path, names.as_dict().values()).register(session)
    resource = session.resource("dynamodb")
    files = FileTracker(resource.Table(names.file_tracker), resource.Table(names.file_tracker_history))
    tracked = TrackedFile(
        table_id="s.a.t",
        file_id="f1",
        bucket="staging",
        key="s/a/t/1.parquet",
        size=3,
        etag="e",
        landed_at="2026-01-01T00:00:00.000Z",
        file_kind=FileKind.CDC,
    )
    assert files.register(tracked)
    assert [item["file_id"] for item in _saved(tmp_path, names.file_tracker)] == [{"S": "f1"}]
    assert not (tmp_path / "_sandbox" / "dynamodb" / f"{names.file_tracker_history}.json").exists()  # only checked

    files.mark_processed([tracked], commit_instant="20260101000000000", run_id="r")
    assert _saved(tmp_path, names.file_tracker) == []
    assert [item["file_id"] for item in _saved(tmp_path, names.file_tracker_history)] == [{"S": "f1"}]
