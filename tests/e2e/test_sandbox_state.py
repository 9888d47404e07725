"""The sandbox saves a DynamoDB table to the lake folder after every write to it (no Spark)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest

from odp.naming import TrackerTableNames
from odp.tracker import FileTracker, TrackedFile
from odp.tracker.schema import create_tables
from odp.tracker.statuses import FileKind
from sandbox import state_store
from sandbox.state_store import SNAPSHOT_ATTEMPTS, moto_items
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


def test_a_saved_table_holds_what_a_scan_returns_read_without_a_scan(aws: None, tmp_path: Path) -> None:
    session = boto3.session.Session(region_name=AWS_REGION)
    scans: list[str] = []
    session.events.register(
        "before-parameter-build.dynamodb",
        lambda model, params, **_: scans.append(params["TableName"]) if model.name == "Scan" else None,
    )
    client = session.client("dynamodb")
    client.create_table(
        TableName="t",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "n", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "n", "AttributeType": "N"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    state_store.WriteThrough(tmp_path, ["t"]).register(session)
    every_type = {
        "s": {"S": "text"},
        "num": {"N": "12.50"},
        "flag": {"BOOL": False},
        "none": {"NULL": True},
        "strings": {"SS": ["a", "b"]},
        "numbers": {"NS": ["1", "2.5"]},
        "list": {"L": [{"S": "x"}, {"N": "3"}, {"M": {"deep": {"BOOL": True}}}]},
        "map": {"M": {"a": {"S": "y"}, "l": {"L": [{"NULL": True}]}, "ss": {"SS": ["z"]}}},
    }
    written = session.client("dynamodb")  # a client made after register: its writes are saved
    for pk, n in [("b", "2"), ("a", "10"), ("b", "1"), ("a", "9")]:
        written.put_item(TableName="t", Item={"pk": {"S": pk}, "n": {"N": n}, **every_type})
    written.delete_item(TableName="t", Key={"pk": {"S": "a"}, "n": {"N": "9"}})

    assert scans == []  # saving after each of the five writes read moto's table, not a Scan response
    saved = _saved(tmp_path, "t")
    assert saved == state_store.scan_api(client, "t")  # item for item, in the Scan's order
    assert [(item["pk"]["S"], item["n"]["N"]) for item in saved] == [("a", "10"), ("b", "1"), ("b", "2")]
    assert saved[0] == {"pk": {"S": "a"}, "n": {"N": "10"}, **every_type}


class _ChangingTable:
    """A moto table whose copy meets a concurrent write ``changes`` times, as a File Processor run's threads can."""

    def __init__(self, changes: int, error: str = "dictionary changed size during iteration") -> None:
        self.changes, self.error, self.copies = changes, error, 0

    def all_items(self) -> list[Any]:
        self.copies += 1
        if self.copies <= self.changes:
            raise RuntimeError(self.error)
        return [_Item()]


class _Item:
    def to_json(self) -> dict[str, Any]:
        return {"Attributes": {"table_id": {"S": "a.b.c"}}}


def test_a_save_that_meets_a_concurrent_write_copies_the_table_again() -> None:
    """python -m bench.sandbox_fleet (1,000 tables, 4 at once) failed one table's tracker write on this: the save
    after it copied the table while another thread's write changed an item."""
    table = _ChangingTable(changes=3)
    assert moto_items(table) == [{"table_id": {"S": "a.b.c"}}]
    assert table.copies == 4
    with pytest.raises(RuntimeError, match="changed size during iteration"):
        moto_items(_ChangingTable(changes=SNAPSHOT_ATTEMPTS))
    with pytest.raises(RuntimeError, match="something else"):
        moto_items(_ChangingTable(changes=1, error="something else"))  # not a concurrent change: not retried
