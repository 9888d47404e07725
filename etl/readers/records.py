"""Pure parsers of JSON change records (Debezium envelopes, DynamoDB stream records).

They run on the executors, one file at a time, and yield plain tuples; no Spark here, so they are
tested directly. A parse problem ends the file with one error record that names the row and why.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from etl.change_frame import DELETE, INSERT, UPDATE

TS_DIGITS = 15
POSITION_DIGITS = 20
SEQUENCE_DIGITS = 40
DEBEZIUM_OPS = {"c": INSERT, "r": INSERT, "u": UPDATE, "d": DELETE}
DYNAMODB_OPS = {"INSERT": INSERT, "MODIFY": UPDATE, "REMOVE": DELETE}
# Debezium (Kafka Connect) schema types -> Spark SQL types.
CONNECT_TYPES = {
    "int8": "tinyint",
    "int16": "smallint",
    "int32": "int",
    "int64": "bigint",
    "float32": "float",
    "float64": "double",
    "double": "double",
    "float": "float",
    "boolean": "boolean",
    "string": "string",
}


class RecordError(ValueError):
    """One record cannot be turned into a change."""


@dataclass(frozen=True)
class ParsedChange:
    """One change: op, sortable ordering text, row position, values as text, inferred Spark types."""

    row: int
    op: str | None = None
    ordering: str = ""
    values: dict[str, str | None] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)
    error: str | None = None


def json_documents(text: str) -> Iterator[Any]:
    """Each JSON document of a file: JSON lines, or pretty-printed documents one after another.

    Raises:
        RecordError: text that is not JSON (names the document number).
    """
    decoder = json.JSONDecoder()
    position, length, index = 0, len(text), 0
    while True:
        while position < length and text[position] in " \t\r\n\ufeff":
            position += 1
        if position >= length:
            return
        try:
            document, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as error:
            raise RecordError(f"JSON does not parse at document {index}: {error.msg} (char {error.pos})") from error
        yield document
        index += 1


def as_text(value: Any) -> str | None:
    """A JSON value as the text Spark casts to the column type; objects and arrays stay JSON."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    return str(value)


def python_type(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "bigint"
    if isinstance(value, float):
        return "double"
    return "string"


def _pad(value: Any, digits: int) -> str:
    return str(value if value is not None else "").rjust(digits, "0")


def _check_keys(values: dict[str, Any], keys: tuple[str, ...]) -> None:
    for key in keys:
        if key not in values:
            raise RecordError(f"missing key column {key}")
        if values[key] is None:
            raise RecordError(f"null key column {key}")


# ------------------------------------------------------------------------------------------
# Debezium
# ------------------------------------------------------------------------------------------


def _connect_types(schema: dict[str, Any] | None, image_field: str) -> dict[str, str]:
    if not isinstance(schema, dict):
        return {}
    for part in schema.get("fields") or []:
        if part.get("field") == image_field:
            return {
                column["field"]: CONNECT_TYPES.get(column.get("type", ""), "string")
                for column in part.get("fields") or []
            }
    return {}


def debezium_position(source: dict[str, Any]) -> str:
    """The log position as sortable text: Postgres lsn, MySQL binlog file + pos + row, else empty."""
    if source.get("lsn") is not None:
        return _pad(source["lsn"], POSITION_DIGITS)
    if source.get("file") is not None or source.get("pos") is not None:
        return f"{source.get('file') or ''}:{_pad(source.get('pos'), POSITION_DIGITS)}:{_pad(source.get('row'), 10)}"
    return ""


def debezium_change(document: Any, row: int, keys: tuple[str, ...]) -> ParsedChange | None:
    """One Debezium record (with or without the schema envelope); None for a tombstone.

    Raises:
        RecordError: no op, an unknown op, no row image, a missing or null key.
    """
    if document is None:
        return None
    if not isinstance(document, dict):
        raise RecordError(f"expected a JSON object, got {type(document).__name__}")
    schema = document.get("schema") if "payload" in document else None
    envelope = document.get("payload", document)
    if envelope is None:
        return None
    if "op" not in envelope:
        raise RecordError("missing op (not a Debezium change event: is the unwrap transform on?)")
    op = DEBEZIUM_OPS.get(str(envelope["op"]))
    if op is None:
        raise RecordError(f"unknown op {envelope['op']!r} (expected c, r, u or d)")
    image_field = "before" if op == DELETE else "after"
    image = envelope.get(image_field)
    if not isinstance(image, dict):
        raise RecordError(f"op {envelope['op']!r} without a '{image_field}' image")
    _check_keys(image, keys)
    source = envelope.get("source") or {}
    ts = source.get("ts_ms") if source.get("ts_ms") is not None else envelope.get("ts_ms")
    ordering = f"{_pad(ts, TS_DIGITS)}|{debezium_position(source)}"
    types = _connect_types(schema, image_field) or {
        name: kind for name, value in image.items() if (kind := python_type(value))
    }
    return ParsedChange(
        row=row, op=op, ordering=ordering, values={k: as_text(v) for k, v in image.items()}, types=types
    )


# ------------------------------------------------------------------------------------------
# DynamoDB streams
# ------------------------------------------------------------------------------------------


def _number(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        return float(text)


def plain_attribute(attribute: dict[str, Any]) -> Any:  # noqa: PLR0911 - one return per DynamoDB type
    """A typed DynamoDB attribute value ({"S": ...}, {"M": {...}}) as a plain JSON value.

    Raises:
        RecordError: an attribute type DynamoDB does not have.
    """
    if not isinstance(attribute, dict) or len(attribute) != 1:
        raise RecordError(f"not a typed attribute value: {attribute!r}")
    kind, value = next(iter(attribute.items()))
    if kind in ("S", "B"):
        return value
    if kind == "N":
        return _number(value)
    if kind == "BOOL":
        return bool(value)
    if kind == "NULL":
        return None
    if kind == "M":
        return {name: plain_attribute(inner) for name, inner in value.items()}
    if kind == "L":
        return [plain_attribute(inner) for inner in value]
    if kind in ("SS", "BS"):
        return list(value)
    if kind == "NS":
        return [_number(inner) for inner in value]
    raise RecordError(f"unknown attribute type {kind!r}")


def flat_attribute(attribute: dict[str, Any]) -> tuple[str | None, str | None]:
    """Text for the column and its inferred Spark type: N stays exact text; M/L/sets become JSON."""
    kind = next(iter(attribute)) if isinstance(attribute, dict) and attribute else None
    if kind == "N":
        text = str(attribute["N"])
        return text, "bigint" if text.lstrip("-").isdigit() else "double"
    if kind in {"S", "B"}:
        return str(attribute[kind]), "string"
    plain = plain_attribute(attribute)
    return as_text(plain), ("boolean" if kind == "BOOL" else None if kind == "NULL" else "string")


def approximate_millis(value: Any) -> int:
    """ApproximateCreationDateTime in milliseconds: streams give seconds, Kinesis gives milliseconds."""
    number = float(value)
    return round(number * 1000) if number < 100_000_000_000 else int(number)


def dynamodb_change(document: Any, row: int, keys: tuple[str, ...]) -> ParsedChange | None:
    """One DynamoDB stream record (Kinesis / Firehose form or the Lambda streams form).

    Raises:
        RecordError: no eventName or an unknown one, no image, a missing or null key, a bad attribute.
    """
    if document is None:
        return None
    if not isinstance(document, dict) or not isinstance(document.get("dynamodb"), dict):
        raise RecordError("not a DynamoDB stream record (no 'dynamodb' object)")
    name = document.get("eventName")
    if name is None:
        raise RecordError("missing eventName")
    op = DYNAMODB_OPS.get(str(name))
    if op is None:
        raise RecordError(f"unknown eventName {name!r} (expected INSERT, MODIFY or REMOVE)")
    body = document["dynamodb"]
    image = body.get("OldImage") or body.get("Keys") if op == DELETE else body.get("NewImage") or body.get("Keys")
    if not isinstance(image, dict):
        raise RecordError(f"{name} record without an image or Keys")
    values: dict[str, str | None] = {}
    types: dict[str, str] = {}
    for column, attribute in image.items():
        text, kind = flat_attribute(attribute)
        values[column] = text
        if kind:
            types[column] = kind
    _check_keys(values, keys)
    created = body.get("ApproximateCreationDateTime")
    millis = _pad(approximate_millis(created), TS_DIGITS) if created is not None else ""
    ordering = f"{millis}|{_pad(body.get('SequenceNumber'), SEQUENCE_DIGITS)}"
    return ParsedChange(row=row, op=op, ordering=ordering, values=values, types=types)


def parse_file(text: str, source_format: str, keys: tuple[str, ...]) -> Iterator[ParsedChange]:
    """Every change of one file; ends with one error change at the first bad record."""
    parse = debezium_change if source_format == "debezium" else dynamodb_change
    row = -1
    try:
        for row, document in enumerate(json_documents(text)):
            change = parse(document, row, keys)
            if change is not None:
                yield change
    except RecordError as error:
        yield ParsedChange(row=max(row, 0), error=str(error))
