"""The event-time horizon, without Spark: the pure check, and the JSON parsers (files and stream) that apply it.

Every expected message is written out by hand. Before the horizon existed, each refused record here was
parsed and stored (its ordering then won against every later change of its key).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from etl.readers.event_horizon import event_time_problem, horizon_of, millis_problem
from etl.readers.records import RecordError, debezium_change, dynamodb_change, parse_content
from etl.streaming.records import Route, StreamRecord, route_record
from tests.support.stream_records import change

RUN_START = datetime(2026, 11, 25, 15, 0, 0, tzinfo=UTC)
HORIZON = horizon_of(RUN_START)  # the default: one day, no floor
LATER = " is later than the horizon 2026-11-26 15:00:00 (run start + event_time_tolerance 1d)"
YEAR_9999_MS = 253402300799000  # 9999-12-31 23:59:59 UTC


def test_the_horizon_is_the_run_start_plus_the_tolerance_and_the_floor_is_optional() -> None:
    assert (HORIZON.latest, HORIZON.tolerance, HORIZON.floor) == (datetime(2026, 11, 26, 15, 0, tzinfo=UTC), "1d", None)
    six_hours = horizon_of(datetime(2026, 11, 25, 15, 0), "6h", "2020-01-01T00:00:00+01:00")  # naive = UTC
    assert six_hours.latest == datetime(2026, 11, 25, 21, 0, tzinfo=UTC)
    assert six_hours.floor == datetime(2019, 12, 31, 23, 0, tzinfo=UTC)


def test_a_time_past_the_horizon_is_refused_and_the_horizon_itself_is_accepted() -> None:
    assert event_time_problem(datetime(9999, 12, 31, 23, 59, 59), HORIZON) == "event time 9999-12-31 23:59:59" + LATER
    assert event_time_problem(datetime(2026, 11, 26, 15, 0, 0, tzinfo=UTC), HORIZON) is None
    assert event_time_problem(datetime(2026, 11, 26, 15, 0, 1, tzinfo=UTC), HORIZON) == (
        "event time 2026-11-26 15:00:01" + LATER
    )
    assert event_time_problem(datetime(1970, 1, 1), HORIZON) is None  # no floor by default: the past is fine


def test_a_time_before_the_floor_is_refused() -> None:
    floored = horizon_of(RUN_START, "1d", "2020-01-01")
    assert event_time_problem(datetime(2019, 12, 31, 23, 59, 59), floored) == (
        "event time 2019-12-31 23:59:59 is earlier than event_time_floor 2020-01-01 00:00:00"
    )
    assert event_time_problem(datetime(2020, 1, 1), floored) is None


def test_milliseconds_of_any_size_are_checked() -> None:
    assert millis_problem(YEAR_9999_MS, HORIZON) == "event time 9999-12-31 23:59:59" + LATER
    assert millis_problem(999999999999999, HORIZON) == (
        "event time beyond 9999-12-31 23:59:59 (999999999999999 ms)" + LATER
    )
    assert millis_problem(1731924555370, HORIZON) is None  # 2024-11-18: the published samples' time


def test_a_debezium_envelope_in_year_9999_is_refused_naming_the_field_and_value() -> None:
    envelope = {"op": "u", "after": {"id": 1}, "source": {"ts_ms": YEAR_9999_MS, "lsn": 5}}
    assert debezium_change(envelope, 0, ("id",)).ordering.startswith("253402300799000|")  # no horizon: any time
    with pytest.raises(RecordError) as raised:
        debezium_change(envelope, 0, ("id",), horizon=HORIZON)
    assert str(raised.value) == "source.ts_ms 253402300799000: event time 9999-12-31 23:59:59" + LATER


def test_a_flattened_debezium_record_past_the_horizon_is_refused() -> None:
    flattened = {"id": 1, "__op": "u", "__source_ts_ms": str(YEAR_9999_MS)}
    with pytest.raises(RecordError) as raised:
        debezium_change(flattened, 0, ("id",), "flattened", HORIZON)
    assert str(raised.value) == "__source_ts_ms 253402300799000: event time 9999-12-31 23:59:59" + LATER


def test_a_debezium_file_fails_at_the_row_past_the_horizon() -> None:
    good = {"op": "c", "after": {"id": 1}, "source": {"ts_ms": 1731924555370}}
    bad = {"op": "u", "after": {"id": 1}, "source": {"ts_ms": YEAR_9999_MS}}
    text = "\n".join(json.dumps(document) for document in (good, bad)).encode()
    changes = list(parse_content(text, "debezium", ("id",), horizon=HORIZON))
    assert [c.error for c in changes] == [
        None,
        "row 2: source.ts_ms 253402300799000: event time 9999-12-31 23:59:59" + LATER,
    ]


def test_a_dynamodb_record_past_the_horizon_or_before_the_floor_is_refused() -> None:
    future = {
        "eventName": "MODIFY",
        "dynamodb": {"ApproximateCreationDateTime": YEAR_9999_MS, "NewImage": {"id": {"S": "k"}}},
    }
    with pytest.raises(RecordError) as raised:
        dynamodb_change(future, 0, ("id",), horizon=HORIZON)
    assert str(raised.value) == "ApproximateCreationDateTime 253402300799000: event time 9999-12-31 23:59:59" + LATER
    past = {"eventName": "MODIFY", "dynamodb": {"ApproximateCreationDateTime": 1000, "NewImage": {"id": {"S": "k"}}}}
    assert dynamodb_change(past, 0, ("id",), horizon=HORIZON).ordering.startswith("000000001000000|")
    with pytest.raises(RecordError) as raised:  # 1000 without a precision: seconds (the Lambda streams form)
        dynamodb_change(past, 0, ("id",), horizon=horizon_of(RUN_START, floor="2000-01-01"))
    assert str(raised.value) == (
        "ApproximateCreationDateTime 1000: event time 1970-01-01 00:16:40 is earlier than event_time_floor "
        "2000-01-01 00:00:00"
    )


def test_a_stream_record_past_the_horizon_is_a_bad_record_with_the_same_message() -> None:
    routes = {"orders": Route("shop.app.orders", ("id",), HORIZON)}
    document = change("MODIFY", "orders", {"id": "o1"}, ms=0)
    document["dynamodb"]["ApproximateCreationDateTime"] = YEAR_9999_MS
    routed = route_record(StreamRecord(json.dumps(document), "1", "shardId-000000000000"), routes)
    assert routed.table_id == "shop.app.orders"
    assert routed.error == "ApproximateCreationDateTime 253402300799000: event time 9999-12-31 23:59:59" + LATER
    document["dynamodb"]["ApproximateCreationDateTime"] = 1731924555370
    assert route_record(StreamRecord(json.dumps(document), "1", "shardId-000000000000"), routes).error is None
