"""Pure routing and parsing of the records on a stream: one Kinesis record -> one routed change or one error.

A record's data is one DynamoDB change record as DynamoDB's Kinesis streaming destination writes it
(``tableName``, ``eventName``, ``dynamodb.{ApproximateCreationDateTime, Keys, NewImage, OldImage}``).
It is routed to the configured table whose DynamoDB table name it carries (``tableName``, or the table
segment of a DynamoDB Streams ``eventSourceARN``) and parsed by the batch path's
:func:`etl.readers.records.dynamodb_change`. No Spark here: these run on the executors and are tested directly.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from etl.readers.event_horizon import EventTimeHorizon
from etl.readers.records import RecordError, dynamodb_change

# The columns every stream source is normalised to before a micro-batch (see etl.streaming.sources).
DATA, SEQUENCE_NUMBER, SHARD = "data", "sequence_number", "shard"
# Kinesis sequence numbers are decimal strings of up to 128 digits (56 in practice). Padded to one width
# they sort as numbers inside the change's ordering text (the tie-breaker for changes in the same millisecond).
# A MICROSECOND record's position starts with its 3 sub-millisecond digits: its sequence number gets 61.
KINESIS_SEQUENCE_DIGITS = 64


@dataclass(frozen=True)
class Route:
    """Where the records of one DynamoDB table go: the configured table, its key columns, and the event
    times it accepts (None: any; see :mod:`etl.readers.event_horizon`)."""

    table_id: str
    keys: tuple[str, ...]
    horizon: EventTimeHorizon | None = None


@dataclass(frozen=True)
class StreamRecord:
    """One Kinesis record: its data as text, its sequence number and shard."""

    data: str | None
    sequence_number: str = ""
    shard: str = ""


@dataclass(frozen=True)
class RoutedChange:
    """One record's outcome: a change of ``table_id``, or an ``error`` (then ``table_id`` may be None)."""

    table_id: str | None
    sequence_number: str
    shard: str
    event_id: str | None = None
    op: str | None = None
    ordering: str = ""
    values: dict[str, str | None] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)
    error: str | None = None


def dynamodb_table_name(document: Mapping[str, Any]) -> str | None:
    """The DynamoDB table a change record comes from: ``tableName`` (Kinesis form) or the stream ARN's table."""
    name = document.get("tableName")
    if isinstance(name, str) and name:
        return name
    arn = document.get("eventSourceARN")
    if isinstance(arn, str) and ":table/" in arn:
        return arn.split(":table/", 1)[1].split("/", 1)[0]
    return None


def _document(record: StreamRecord) -> dict[str, Any]:
    """The record's data as a JSON object.

    Raises:
        RecordError: no data, data that is not JSON, or JSON that is not an object.
    """
    if record.data is None:
        raise RecordError("empty record (no data)")
    try:
        document = json.loads(record.data)
    except json.JSONDecodeError as error:
        raise RecordError(f"data does not parse as JSON: {error.msg} (char {error.pos})") from error
    if not isinstance(document, dict):
        raise RecordError(f"expected a JSON object, got {type(document).__name__}")
    return document


def _route(document: dict[str, Any], routes: Mapping[str, Route]) -> Route:
    """The route of a change record's table.

    Raises:
        RecordError: no table name in the record, or a table no route knows.
    """
    name = dynamodb_table_name(document)
    if name is None:
        raise RecordError("no tableName or DynamoDB eventSourceARN")
    route = routes.get(name)
    if route is None:
        known = ", ".join(sorted(routes)) or "none"
        raise RecordError(f"unknown table {name!r}: not streamed here (known: {known})")
    return route


def with_kinesis_sequence(document: dict[str, Any], sequence_number: str) -> dict[str, Any]:
    """The record with the Kinesis sequence number as its SequenceNumber when it has none (the Kinesis form).

    It orders changes of one item within a millisecond (one item's changes share a shard).
    """
    body = document.get("dynamodb")
    if not isinstance(body, dict) or body.get("SequenceNumber") is not None or not sequence_number:
        return document
    return {**document, "dynamodb": {**body, "SequenceNumber": sequence_number}}


def route_record(record: StreamRecord, routes: Mapping[str, Route]) -> RoutedChange:
    """Route and parse one record; every problem becomes an error outcome naming the reason, never an exception.

    Errors: no data, data that is not JSON, a record without a table name, a table no route knows, and
    every :class:`RecordError` of the DynamoDB parser (unknown eventName, no image, a missing or null key, a
    creation time outside the route's horizon). Any other exception the parsing raises (JSON nested deeper than
    Python's parser recurses, a value the parser does not expect) is the record's too: ``the record cannot be
    parsed: RecursionError: ...``; raised on an executor it would fail the whole micro-batch, every batch after a
    restart.
    """
    where = {"sequence_number": record.sequence_number, "shard": record.shard}
    table_id = event_id = None
    try:
        document = _document(record)
        event_id = document.get("eventID") if isinstance(document.get("eventID"), str) else None
        route = _route(document, routes)
        table_id = route.table_id
        change = dynamodb_change(
            with_kinesis_sequence(document, record.sequence_number),
            0,
            route.keys,
            sequence_digits=KINESIS_SEQUENCE_DIGITS,
            horizon=route.horizon,
        )
        if change is None:
            raise RecordError("empty record")
    except RecordError as error:
        return RoutedChange(table_id, event_id=event_id, error=str(error), **where)
    except Exception as error:  # noqa: BLE001 - whatever one record raises is that record's, never the batch's
        reason = f"the record cannot be parsed: {type(error).__name__}: {str(error)[:300]}"
        return RoutedChange(table_id, event_id=event_id, error=reason, **where)
    return RoutedChange(
        table_id,
        event_id=event_id,
        op=change.op,
        ordering=change.ordering,
        values=change.values,
        types=change.types,
        **where,
    )


def route_records(records: Iterable[StreamRecord], routes: Mapping[str, Route]) -> Iterator[RoutedChange]:
    """Every record's outcome, in order."""
    for record in records:
        yield route_record(record, routes)
