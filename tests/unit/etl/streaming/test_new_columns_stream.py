"""new_columns on the stream: the files' rule for DynamoDB records (etl.readers.new_columns), per table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from etl.hudi.options import HudiProfile, WriteProfile
from etl.streaming.batch import StreamTarget
from etl.streaming.local import run_local_stream
from odp.config.models import NewColumns
from sandbox.validation import read_table
from tests.support.stream_records import StreamFolder, change
from tests.support.streams import CUSTOMERS, EVENTS, ORDERS, STREAM


@pytest.mark.spark
def test_attributes_outside_columns_added_refused_or_ignored_per_table(
    spark, folder: StreamFolder, tmp_path: Path
) -> None:
    customers = CUSTOMERS.model_copy(update={"new_columns": NewColumns.REFUSE})
    events = EVENTS.model_copy(update={"new_columns": NewColumns.IGNORE})
    target = StreamTarget(
        stream=STREAM,
        tables=(customers, ORDERS, events),  # orders: add, the default
        raw_root=f"file://{tmp_path / 'raw'}",
        error_root=f"file://{tmp_path / 'errors'}",
        profile=WriteProfile(HudiProfile.LOCAL),
    )
    folder.write_documents(
        [
            change("INSERT", "customers", {"id": "c1", "name": "Ann"}, ms=1),
            change("INSERT", "customers", {"id": "c2", "name": "Bob", "email": "b@x"}, ms=2),
            change("INSERT", "orders", {"id": "o1", "amount": 5, "status": "new", "note": "gift"}, ms=3),
            change("INSERT", "order_events", {"id": "e1", "kind": "created", "extra": 1}, ms=4),
        ]
    )
    [outcome] = run_local_stream(spark, str(folder.root), str(tmp_path / "checkpoint"), target)
    assert outcome.bad_records == 1
    [bad] = [
        json.loads(line) for path in (tmp_path / "errors").rglob("*.json") for line in path.read_text().splitlines()
    ]
    assert bad["_odp_table_id"] == customers.table_id
    assert bad["reason"].startswith("shard shardId-000000000000 sequence ")
    assert bad["reason"].endswith(
        ", attribute email is not in the table's columns (new_columns: refuse): declare it in columns, or set "
        "new_columns to add or ignore"
    )
    assert [row["id"] for row in read_table(spark, target.base_path(customers), customers)] == ["c1"]
    orders = spark.read.format("hudi").load(target.base_path(ORDERS)).select("id", "note").collect()
    assert [tuple(row) for row in orders] == [("o1", "gift")]
    stored_events = spark.read.format("hudi").load(target.base_path(events)).columns
    assert "extra" not in stored_events
    results = {t.table_id: t for t in outcome.tables}
    assert (results[events.table_id].ignored_columns, results[events.table_id].ignored_values) == (("extra",), 1)
    assert outcome.ignored_values == 1
