"""The scale-test helpers answer exactly as plain moto does, and refuse writes while active."""

from __future__ import annotations

from typing import Any

import pytest
from boto3.dynamodb.conditions import Attr, Key

from odp.dynamodb import table_items
from odp.naming import TrackerTableNames
from tests.support.moto_reads import partition_reads, seed_items
from tests.support.paths import AWS_REGION


def queries(table: Any) -> list[list[dict[str, Any]]]:
    """Index and base-table queries with pages, filters, projections and both directions; index scans in pages."""
    results = []
    for table_id in ("a", "b", "missing"):
        for forward in (True, False):
            items = table_items(
                table,
                "query",
                IndexName="pending_by_table",
                KeyConditionExpression=Key("pending_table_id").eq(table_id),
                ScanIndexForward=forward,
                Limit=3,
                ProjectionExpression="file_id, landed_at",
            )
            results.append(list(items))
        results.append(
            table.query(
                KeyConditionExpression=Key("table_id").eq(table_id) & Key("file_id").begins_with("f1"),
                FilterExpression=Attr("size").gt(3),
            )["Items"]
        )
    for _ in range(2):  # the second scan reads the list the first one sorted
        scan = table_items(
            table, "scan", IndexName="pending_by_table", Limit=4, ProjectionExpression="file_id, landed_at"
        )
        results.append(list(scan))
    return results


def test_partition_reads_answer_like_moto(tracker_tables: dict[str, Any], tracker_names: TrackerTableNames) -> None:
    items = [
        {"table_id": t, "file_id": f"f{n:02d}", "landed_at": f"2024-05-01T10:{(n * 7) % 60:02d}:00.000Z", "size": n}
        | ({"pending_table_id": t} if n % 4 else {})
        for t in ("a", "b", "c")
        for n in range(20)
    ]
    assert seed_items(tracker_names.file_tracker, AWS_REGION, items) == 60
    table = tracker_tables["file_tracker"]
    plain = queries(table)
    with partition_reads():
        fast = queries(table)
    assert fast == plain
    assert len(plain[0]) == 15  # the index holds only items with the sparse attribute


def test_partition_reads_refuse_writes(tracker_tables: dict[str, Any]) -> None:
    with partition_reads(), pytest.raises(Exception, match="read-only step"):
        tracker_tables["file_tracker"].put_item(Item={"table_id": "a", "file_id": "f"})
    tracker_tables["file_tracker"].put_item(Item={"table_id": "a", "file_id": "f"})  # restored afterwards
