"""The micro-batch function on real Spark + Hudi, driven by Structured Streaming over a local folder."""

from __future__ import annotations

import json
from pathlib import Path

from etl.hudi.options import HudiProfile, WriteProfile
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
        for path in sorted((tmp_path / "errors").rglob("*.json"))
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
    (None, "unknown table 'invoices': not streamed here (known: customers, order_events, orders)"),
]


def test_routing_event_types_late_duplicate_and_poison_records(
    spark, target: StreamTarget, folder: StreamFolder, tmp_path: Path
) -> None:
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
        ],
        # not a Kinesis record; and data nested deeper than Python's JSON parser recurses (it raised on the executor)
        raw_lines=("this is not a Kinesis record", "[" * 100_000 + "]" * 100_000),
    )
    folder.write_documents(
        [
            change("MODIFY", "customers", {"id": "c1", "name": "Ann Lee"}, ms=30),
            change("REMOVE", "customers", {"id": "c2", "name": "Bob"}, ms=31),
            change("MODIFY", "orders", {"id": "o1", "amount": 13, "status": "paid"}, ms=32),
            change("MODIFY", "order_events", {"id": "e1", "kind": "paid"}, ms=33),
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

    assert [(o.records, o.bad_records, o.duplicates) for o in outcomes] == [(13, 7, 1), (4, 0, 0), (4, 0, 0)]
    assert {t.table_id: t.status for o in outcomes for t in o.tables} == {
        CUSTOMERS.table_id: RunStatus.COMPLETED,
        ORDERS.table_id: RunStatus.COMPLETED,
        EVENTS.table_id: RunStatus.COMPLETED,
    }
    assert rows(spark, target, CUSTOMERS) == [("c1", "Ann Lee")]
    assert rows(spark, target, ORDERS) == [("o1", "13.00", "paid")]
    assert rows(spark, target, EVENTS) == [("e1", "created"), ("e1", "paid")]
    assert (
        sorted(
            ((r.get("_odp_table_id"), r["reason"]) for r in bad_records(tmp_path)), key=lambda r: (r[0] or "~", r[1])
        )
        == FIRST_BATCH_BAD_RECORDS
    )


def test_one_tables_failure_sets_its_records_aside_and_never_blocks_the_others(
    spark, folder: StreamFolder, tmp_path: Path, tracker_tables: dict
) -> None:
    """Each table's commit of a micro-batch is its run in the run ledger, a failed one with its error."""
    untyped = streamed_table("metrics", table_type=TableType.COPY_ON_WRITE, mode=TableMode.CURRENT, columns=None)
    ledger = RunLedger(tracker_tables["processing_tracker"], tracker_tables["processing_tracker_history"])
    target = StreamTarget(
        stream=STREAM,
        tables=(CUSTOMERS, untyped),
        raw_root=f"file://{tmp_path / 'raw'}",
        error_root=f"file://{tmp_path / 'errors'}",
        profile=WriteProfile(HudiProfile.LOCAL),
        ledger=ledger,
    )
    folder.write_documents(
        [
            change("INSERT", "metrics", {"id": "m1", "value": 5}, ms=1),  # value inferred as bigint
            change("INSERT", "customers", {"id": "c1", "name": "Ann"}, ms=2),
        ]
    )
    folder.write_documents(
        [
            change("MODIFY", "metrics", {"id": "m1", "value": "five"}, ms=3),  # bigint -> string: not a widening
            change("MODIFY", "customers", {"id": "c1", "name": "Ann Lee"}, ms=4),
        ]
    )

    outcomes = run_local_stream(spark, str(folder.root), str(tmp_path / "checkpoint"), target)

    second = {t.table_id: t for t in outcomes[1].tables}
    assert second[CUSTOMERS.table_id].status == RunStatus.COMPLETED
    assert second[untyped.table_id].status == RunStatus.FAILED
    assert second[untyped.table_id].error.startswith("SchemaEvolutionError: ")
    assert rows(spark, target, CUSTOMERS) == [("c1", "Ann Lee")]
    set_aside = [
        json.loads(line)
        for path in (tmp_path / "errors" / STREAM / "failed_tables").rglob("*.json")
        for line in path.read_text().splitlines()
    ]
    assert [(r["_odp_table_id"], json.loads(r["data"])["dynamodb"]["NewImage"]["value"]) for r in set_aside] == [
        (untyped.table_id, {"S": "five"})
    ]
    assert set_aside[0]["reason"] == second[untyped.table_id].error
    # the ledger: both micro-batches' commits of customers, the failed one of metrics, as status reads them
    history = ledger.history(CUSTOMERS.table_id)
    assert [(run.run_id, run.status, run.rows) for run in history] == [
        (outcomes[0].batch_tag, RunStatus.COMPLETED, 1),
        (outcomes[1].batch_tag, RunStatus.COMPLETED, 1),
    ]
    states = {state.table_id: state for state in ledger.subjects()}
    assert states[CUSTOMERS.table_id].finished_run().commit_instant == second[CUSTOMERS.table_id].commit_instant
    assert states[untyped.table_id].status is RunStatus.FAILED
    assert states[untyped.table_id].finished_run().error == second[untyped.table_id].error


def test_an_empty_window_writes_nothing(spark, target: StreamTarget, tmp_path: Path) -> None:
    empty = spark.createDataFrame([], "data string, sequence_number string, shard string")
    outcome = process_micro_batch(spark, empty, "stream:shop_changes:q:0", target)
    assert (outcome.records, outcome.bad_records, outcome.tables) == (0, 0, [])
    assert not (tmp_path / "raw").exists()
    assert not (tmp_path / "errors").exists()
