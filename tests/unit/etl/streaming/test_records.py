"""Routing and parsing of stream records, without Spark: every outcome written out by hand."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from etl.streaming.records import Route, StreamRecord, route_record
from tests.support.stream_records import change, kinesis_sample, with_precision

ROUTES = {"orders": Route("shop.app.orders", ("id",)), "customers": Route("shop.app.customers", ("id",))}
SEQ = "49657828409187701520019995242508390119953358325192589314"


def record(document: object) -> StreamRecord:
    return StreamRecord(json.dumps(document), SEQ, "shardId-000000000000")


def items_route(sample: dict) -> dict[str, Route]:
    """The published Kinesis sample's DynamoDB table, streamed to app.events.items."""
    return {sample["tableName"]: Route("app.events.items", ("id",))}


def test_an_insert_is_routed_by_table_name_and_ordered_by_time_then_kinesis_sequence() -> None:
    routed = route_record(record(change("INSERT", "orders", {"id": "o1", "amount": 5}, ms=370)), ROUTES)
    assert routed.error is None
    assert routed.table_id == "shop.app.orders"
    assert routed.op == "I"
    assert routed.values == {"id": "o1", "amount": "5"}
    assert routed.ordering == "001731924555370|" + "0" * 8 + SEQ
    assert routed.event_id == "orders-o1-INSERT-1731924555370"


def test_modify_and_remove_become_update_and_delete() -> None:
    modify = route_record(record(change("MODIFY", "customers", {"id": "c1", "name": "Ann"}, ms=1)), ROUTES)
    remove = route_record(record(change("REMOVE", "customers", {"id": "c1", "name": "Ann"}, ms=2)), ROUTES)
    assert (modify.table_id, modify.op, remove.op, remove.values["id"]) == ("shop.app.customers", "U", "D", "c1")


def test_a_dynamodb_streams_record_is_routed_by_its_event_source_arn() -> None:
    document = change("INSERT", "ignored", {"id": "o2"}, ms=3)
    del document["tableName"]
    document["eventSourceARN"] = "arn:aws:dynamodb:eu-west-1:111111111111:table/orders/stream/2026-01-01T00:00:00.000"
    assert route_record(record(document), ROUTES).table_id == "shop.app.orders"


def test_bad_records_become_errors_with_the_reason() -> None:
    not_json = route_record(StreamRecord("{not json", SEQ, "s"), ROUTES)
    unknown = route_record(record(change("INSERT", "invoices", {"id": "i1"}, ms=1)), ROUTES)
    null_key = route_record(record(change("INSERT", "orders", {"id": None}, ms=1)), ROUTES)
    bad_event = route_record(record({**change("INSERT", "orders", {"id": "o"}, ms=1), "eventName": "TTL"}), ROUTES)
    assert not_json.error == "data does not parse as JSON: Expecting property name enclosed in double quotes (char 1)"
    assert unknown.error == "unknown table 'invoices': not streamed here (known: customers, orders)"
    assert (null_key.table_id, null_key.error) == ("shop.app.orders", "null key column id")
    assert bad_event.error == "unknown eventName 'TTL' (expected INSERT, MODIFY or REMOVE)"
    assert route_record(StreamRecord(None, SEQ, "s"), ROUTES).error == "empty record (no data)"


def test_a_record_the_parser_raises_on_is_a_bad_record_not_a_failed_batch() -> None:
    nested = route_record(StreamRecord("[" * 100_000 + "]" * 100_000, SEQ, "s"), ROUTES)
    assert nested.error == (
        "the record cannot be parsed: RecursionError: maximum recursion depth exceeded while decoding a JSON array "
        "from a unicode string"
    )
    odd = change("INSERT", "orders", {"id": "o1"}, ms=1)
    odd["dynamodb"]["NewImage"]["lines"] = {"L": [{"N": "twelve"}]}  # a number DynamoDB would never write
    assert route_record(record(odd), ROUTES).error == (
        "the record cannot be parsed: ValueError: could not convert string to float: 'twelve'"
    )


def test_the_published_kinesis_sample_routes(samples_dir: Path) -> None:
    event = json.loads((samples_dir / "dynamodb-kinesis" / "dynamodb-stream.json").read_text())
    name = "PowertoolsEventsStack-DynamoDBTable59784FC0-8NKAMTERTAXY"
    routes = {name: Route("app.events.items", ("id",))}
    outcomes = [
        route_record(
            StreamRecord(
                base64.b64decode(r["kinesis"]["data"]).decode(),
                r["kinesis"]["sequenceNumber"],
                r["eventID"].split(":")[0],
            ),
            routes,
        )
        for r in event["Records"]
    ]
    assert [(o.table_id, o.op, o.values["id"], o.error) for o in outcomes] == [
        ("app.events.items", "I", "record-1qit2y819gi", None),
        ("app.events.items", "I", "record-fvxn3q4q5jw", None),
    ]
    # Same millisecond: the Kinesis sequence number orders them.
    assert outcomes[0].ordering < outcomes[1].ordering


def test_a_microsecond_record_is_ordered_by_its_microseconds_then_the_kinesis_sequence(samples_dir: Path) -> None:
    """DynamoDB's default precision on the stream: the batch path's conversion; the 3 sub-millisecond digits
    head the position, then the Kinesis sequence in 64 - 3 = 61 digits (the ordering keeps its width)."""
    sample = kinesis_sample(samples_dir)[0]
    routes = items_route(sample)
    micros = with_precision(sample, "MICROSECOND", 1772352000000999)
    routed = route_record(record(micros), routes)
    assert (routed.error, routed.ordering) == (None, "001772352000000|999" + "0" * 5 + SEQ)
    unknown = route_record(record(with_precision(sample, "NANOSECOND", 1)), routes)
    assert (unknown.table_id, unknown.error) == (
        "app.events.items",
        "ApproximateCreationDateTimePrecision 'NANOSECOND' is not one of MILLISECOND, MICROSECOND: "
        "the record's time cannot be read",
    )


def test_two_changes_in_one_millisecond_sort_by_event_time_not_by_kinesis_sequence(samples_dir: Path) -> None:
    """Kinesis Data Streams for DynamoDB may deliver one item's changes out of order: the later change (900
    microseconds) carries the smaller Kinesis sequence number, and still sorts after the earlier one."""
    sample = kinesis_sample(samples_dir)[0]
    routes = items_route(sample)
    late = StreamRecord(json.dumps(with_precision(sample, "MICROSECOND", 1772352000000900)), SEQ, "shard-0")
    later_sequence = str(int(SEQ) + 1)
    early = StreamRecord(json.dumps(with_precision(sample, "MICROSECOND", 1772352000000100)), later_sequence, "shard-0")
    delivered = [route_record(one, routes).ordering for one in (late, early)]
    assert delivered == [
        "001772352000000|900" + "0" * 5 + SEQ,
        "001772352000000|100" + "0" * 5 + later_sequence,
    ]
    assert sorted(delivered) == delivered[::-1]


def test_a_millisecond_record_on_the_stream_is_ordered_byte_for_byte_as_before(samples_dir: Path) -> None:
    sample = kinesis_sample(samples_dir)[0]
    routes = items_route(sample)
    routed = route_record(record(with_precision(sample, "MILLISECOND", 1772352000000)), routes)
    assert routed.ordering == "001772352000000|00000000" + "49657828409187701520019995242508390119953358325192589314"


def test_a_kinesis_sequence_too_long_for_a_microsecond_position_is_a_bad_record(samples_dir: Path) -> None:
    """62 digits fit the 64-digit position of a MILLISECOND record, not the 61 a MICROSECOND record leaves."""
    sample = kinesis_sample(samples_dir)[0]
    routes = items_route(sample)
    long_sequence = "9" * 62
    millis = route_record(StreamRecord(json.dumps(sample), long_sequence, "shard-0"), routes)
    assert (millis.error, millis.ordering) == (None, "001731924555370|00" + long_sequence)
    micros = with_precision(sample, "MICROSECOND", 1772352000000999)
    refused = route_record(StreamRecord(json.dumps(micros), long_sequence, "shard-0"), routes)
    assert (refused.table_id, refused.error) == (
        "app.events.items",
        f"SequenceNumber '{long_sequence}' is not a whole number of at most 61 digits "
        "(a MICROSECOND record's position starts with its 3 sub-millisecond digits)",
    )
