"""The micro-batch function on real Spark + Hudi, driven by Structured Streaming over a local folder."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from etl.streaming.batch import StreamTarget, process_micro_batch
from etl.streaming.local import run_local_stream
from odp.config.models import TableMode, TableType
from odp.tracker import RunLedger, RunStatus
from sandbox.validation import read_table
from tests.support.stream_records import StreamFolder, change
from tests.support.streams import CUSTOMERS, EVENTS, ORDERS, STREAM, streamed_table


def rows(spark, target: StreamTarget, config) -> list[tuple]:
    found = read_table(spark, target.base_path(config), config)
    return sorted(tuple(str(row[name]) if row[name] is not None else None for name in row) for row in found)


def bad_records(tmp_path: Path) -> list[dict]:
    return [
        json.loads(line)
        for path in sorted((tmp_path / "errors" / STREAM / "bad_records").rglob("*.json"))
        for line in path.read_text().splitlines()
    ]


# The first batch's bad records (table, reason), sorted; a record's place is its shard and sequence number.
PLACE = "shard shardId-000000000000 sequence 4965782840918770152001999524250839011995335832519"  # + 1,000 a record
FIRST_BATCH_BAD_RECORDS = [
    (CUSTOMERS.table_id, "null key column id"),
    (
        CUSTOMERS.table_id,
        f"{PLACE}2600314, attribute _odp_op has a name ODP reserves for its own columns (_odp, _odp_*, _hoodie_*): "
        "rename it at the source",
    ),
    (
        ORDERS.table_id,
        # the readers' strict cast and message (etl.readers.typed_values), placed by shard and sequence number
        f"{PLACE}2598314, column amount: value 'lots' is not a valid decimal(12,2)",
    ),
    (
        ORDERS.table_id,
        f"{PLACE}2599314, attribute STATUS differs only in case from status, the spelling kept for the table (its "
        "columns', or most records'): Spark compares column names case-insensitively, so they cannot be two "
        "columns (rename it at the source)",
    ),
    (None, "data does not parse as JSON: Expecting value (char 0)"),
    (
        None,
        "the record cannot be parsed: RecursionError: maximum recursion depth exceeded while decoding a JSON "
        "array from a unicode string",
    ),
    (None, "unknown table 'invoices': not streamed here (known: customers, metrics, order_events, orders)"),
]


def test_routing_event_types_late_duplicate_poison_records_and_a_failed_table(
    spark, target: StreamTarget, folder: StreamFolder, tmp_path: Path, tracker_tables: dict
) -> None:
    """One stream run of three micro-batches over four tables: routing, event types, late, duplicate and poison
    records on the three typed tables; and one table's failure (``metrics``, no columns configured: its second batch
    turns a bigint into a string), which sets its records aside and blocks neither the tables after it in that batch
    nor the next batch. Each table's commit of a micro-batch is its run in the run ledger, a failed one with its
    error."""
    untyped = streamed_table("metrics", table_type=TableType.COPY_ON_WRITE, mode=TableMode.CURRENT, columns=None)
    ledger = RunLedger(tracker_tables["processing_tracker"], tracker_tables["processing_tracker_history"])
    target = replace(target, tables=(CUSTOMERS, untyped, ORDERS, EVENTS), ledger=ledger)
    duplicate = change("INSERT", "orders", {"id": "o2", "amount": 7, "status": "new"}, ms=20)
    folder.write_documents(
        [
            change("INSERT", "customers", {"id": "c1", "name": "Ann"}, ms=10),
            change("INSERT", "customers", {"id": "c2", "name": "Bob"}, ms=11),
            change("INSERT", "orders", {"id": "o1", "amount": 12.5, "status": "new"}, ms=12),
            duplicate,
            duplicate,  # delivered twice in one batch (same eventID): kept once
            change("INSERT", "order_events", {"id": "e1", "kind": "created"}, ms=13),
            change("INSERT", "invoices", {"id": "i1"}, ms=14),  # no such table on this stream
            change("INSERT", "customers", {"id": None, "name": "nobody"}, ms=15),  # null key
            change("INSERT", "orders", {"id": "o9", "amount": "lots", "status": "new"}, ms=16),  # not a decimal
            # attributes Spark takes for one column, and one of ODP's own names: refused, never renamed
            change("INSERT", "orders", {"id": "o8", "amount": 1, "status": "new", "STATUS": "NEW"}, ms=17),
            change("INSERT", "customers", {"id": "c8", "name": "Cy", "_odp_op": "D"}, ms=18),
            change("INSERT", "metrics", {"id": "m1", "value": 5}, ms=19),  # value inferred as bigint
        ],
        # not a Kinesis record; and data nested deeper than Python's JSON parser recurses (it raised on the executor)
        raw_lines=("this is not a Kinesis record", "[" * 100_000 + "]" * 100_000),
    )
    folder.write_documents(
        [
            change("MODIFY", "customers", {"id": "c1", "name": "Ann Lee"}, ms=30),
            change("REMOVE", "customers", {"id": "c2", "name": "Bob"}, ms=31),
            change("MODIFY", "metrics", {"id": "m1", "value": "five"}, ms=32),  # bigint -> string: not a widening
            change("MODIFY", "orders", {"id": "o1", "amount": 13, "status": "paid"}, ms=33),
            change("MODIFY", "order_events", {"id": "e1", "kind": "paid"}, ms=34),
        ]
    )
    folder.write_documents(
        [
            duplicate,  # the same record again in a later batch
            change("MODIFY", "customers", {"id": "c1", "name": "stale"}, ms=25),  # late: older than ms=30
            change("INSERT", "customers", {"id": "c2", "name": "Bob again?"}, ms=29),  # late: older than the REMOVE
            change("REMOVE", "orders", {"id": "o2", "amount": 7, "status": "new"}, ms=40),
        ]
    )

    outcomes = run_local_stream(spark, str(folder.root), str(tmp_path / "checkpoint"), target)

    assert [(o.records, o.bad_records, o.duplicates) for o in outcomes] == [(14, 7, 1), (5, 0, 0), (4, 0, 0)]
    done = RunStatus.COMPLETED
    assert [{t.table_id: t.status for t in o.tables} for o in outcomes] == [
        {CUSTOMERS.table_id: done, untyped.table_id: done, ORDERS.table_id: done, EVENTS.table_id: done},
        # metrics failed; orders and order_events, after it in the batch, still committed
        {CUSTOMERS.table_id: done, untyped.table_id: RunStatus.FAILED, ORDERS.table_id: done, EVENTS.table_id: done},
        {CUSTOMERS.table_id: done, ORDERS.table_id: done},
    ]
    assert rows(spark, target, CUSTOMERS) == [("c1", "Ann Lee")]
    assert rows(spark, target, ORDERS) == [("o1", "13.00", "paid")]
    assert rows(spark, target, EVENTS) == [("e1", "created"), ("e1", "paid")]
    assert sorted(path.name for path in (tmp_path / "errors" / STREAM).iterdir()) == ["bad_records", "failed_tables"]
    assert (
        sorted(
            ((r.get("_odp_table_id"), r["reason"]) for r in bad_records(tmp_path)), key=lambda r: (r[0] or "~", r[1])
        )
        == FIRST_BATCH_BAD_RECORDS
    )
    second = {t.table_id: t for t in outcomes[1].tables}
    assert second[untyped.table_id].error.startswith("SchemaEvolutionError: ")
    set_aside = [
        json.loads(line)
        for path in (tmp_path / "errors" / STREAM / "failed_tables").rglob("*.json")
        for line in path.read_text().splitlines()
    ]
    assert [(r["_odp_table_id"], json.loads(r["data"])["dynamodb"]["NewImage"]["value"]) for r in set_aside] == [
        (untyped.table_id, {"S": "five"})
    ]
    assert set_aside[0]["reason"] == second[untyped.table_id].error
    # the ledger: every micro-batch's commit of customers (two valid records each), the failed one of metrics, as
    # status reads them
    history = ledger.history(CUSTOMERS.table_id)
    assert [(run.run_id, run.status, run.rows) for run in history] == [(o.batch_tag, done, 2) for o in outcomes]
    states = {state.table_id: state for state in ledger.subjects()}
    last = {t.table_id: t for t in outcomes[2].tables}
    assert states[CUSTOMERS.table_id].finished_run().commit_instant == last[CUSTOMERS.table_id].commit_instant
    assert states[untyped.table_id].status is RunStatus.FAILED
    assert states[untyped.table_id].finished_run().error == second[untyped.table_id].error


def test_an_empty_window_writes_nothing(spark, target: StreamTarget, tmp_path: Path) -> None:
    empty = spark.createDataFrame([], "data string, sequence_number string, shard string")
    outcome = process_micro_batch(spark, empty, "stream:shop_changes:q:0", target)
    assert (outcome.records, outcome.bad_records, outcome.tables) == (0, 0, [])
    assert not (tmp_path / "raw").exists()
    assert not (tmp_path / "errors").exists()
