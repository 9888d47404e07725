"""Pure parsers of JSON change records (Debezium envelopes and flattened rows, DynamoDB stream records).

They run on the executors, one file at a time, and yield plain tuples; no Spark here, so they are
tested directly, and a streaming micro-batch can call the record-level functions (``debezium_change``,
``dynamodb_change``) on single records. A parse problem ends the file with one error record that names
the row (1-based) and why.

Event times are validated and encoded as fixed-width digits, so they compare as numbers; the
encoding of a valid value is unchanged from earlier releases (stored ``_odp_seq`` values stay comparable).
DynamoDB records declared MICROSECOND, refused before, carry their sub-millisecond digits at the head of
the position, in the same width. An event time outside the table's horizon (``horizon``:
:mod:`etl.readers.event_horizon`) is an error naming the field and its value.
"""

from __future__ import annotations

import base64
import gzip
import json
import math
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from etl.change_frame import DELETE, INSERT, UPDATE
from etl.readers.event_horizon import EventTimeHorizon, millis_problem

TS_DIGITS = 15
POSITION_DIGITS = 20
SEQUENCE_DIGITS = 40
DEBEZIUM_OPS = {"c": INSERT, "r": INSERT, "u": UPDATE, "d": DELETE}
DYNAMODB_OPS = {"INSERT": INSERT, "MODIFY": UPDATE, "REMOVE": DELETE}
# DynamoDB's Kinesis streaming destination declares the unit of ApproximateCreationDateTime per record.
PRECISION_FIELD = "ApproximateCreationDateTimePrecision"
UNITS_PER_MILLI = {"MILLISECOND": 1, "MICROSECOND": 1000}
MICROS_DIGITS = 3  # a MICROSECOND record's microseconds past the millisecond, first in its position
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


FLATTENED_DELETED = "__deleted"
FLATTENED_OP = "__op"
_DIGITS = re.compile(r"^[0-9]+$")


MAX_RECORD_CHARS = 8 * 1024 * 1024  # one JSON change record or CSV field; beyond it the file is refused


class RecordError(ValueError):
    """One record cannot be turned into a change."""


class ContentError(ValueError):
    """A file's bytes are not readable text: bad gzip data, or bytes that are not in the table's encoding."""


def decode_content(data: bytes, encoding: str = "utf-8") -> str:
    """A file's text: gzip data is recognised by its magic bytes (any extension, or none), then decoded strictly.

    Raises:
        ContentError: corrupt or truncated gzip data; bytes that are not valid in ``encoding`` (names the offset).
    """
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as error:
            raise ContentError(f"corrupt or truncated gzip data ({error})") from error
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        raise ContentError(
            f"bytes {data[error.start : error.start + 4]!r} at offset {error.start} are not valid {encoding} "
            "(set the table's encoding if the file uses another one)"
        ) from error
    return text.removeprefix("\ufeff")


@dataclass(frozen=True)
class ParsedChange:
    """One change: op, sortable ordering text, row position, values as text, inferred Spark types."""

    row: int
    op: str | None = None
    ordering: str = ""
    values: dict[str, str | None] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    keep: tuple[str, ...] = ()  # columns whose stored value stays (Debezium's unavailable-value placeholder)


def json_documents(text: str) -> Iterator[Any]:
    """Each JSON document of a file: JSON lines, or pretty-printed documents one after another.

    Raises:
        RecordError: text that is not JSON, or a document longer than :data:`MAX_RECORD_CHARS` (names the
            document number).
    """
    decoder = json.JSONDecoder()
    position, length, index = 0, len(text), 0
    while True:
        while position < length and text[position] in " \t\r\n\ufeff":
            position += 1
        if position >= length:
            return
        start = position
        try:
            document, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as error:
            raise RecordError(f"row {index + 1}: JSON does not parse: {error.msg} (char {error.pos})") from error
        if position - start > MAX_RECORD_CHARS:
            raise RecordError(f"row {index + 1}: {too_long(position - start)}")
        yield document
        index += 1


def too_long(characters: int) -> str:
    """The reason given for a record longer than :data:`MAX_RECORD_CHARS`."""
    return (
        f"a record of {characters:,} characters is longer than the limit of {MAX_RECORD_CHARS:,} "
        "(one change record; DynamoDB items stop at 400 KB): not change data, or a row to load another way"
    )


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


def whole_number(value: Any, what: str, digits: int) -> str:
    """A non-negative whole number (JSON int or digit text) as ``digits`` zero-padded digits.

    Raises:
        RecordError: anything else (an ISO time, a word, a negative or fractional number, too many digits).
    """
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(text, str) or not _DIGITS.match(text) or len(text) > digits:
        raise RecordError(f"{what} {value!r} is not a whole number of at most {digits} digits")
    return text.rjust(digits, "0")


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


def debezium_position(source: dict[str, Any], prefix: str = "") -> str:
    """The log position as sortable text: Postgres lsn, MySQL binlog file + pos + row, else empty.

    ``prefix`` reads the flattened form's fields (``__lsn``, ``__file``, ``__pos``, ``__row``).

    Raises:
        RecordError: a position that is not a whole number.
    """

    def field_of(name: str) -> Any:
        return source.get(f"{prefix}{name}") if prefix else source.get(name)

    if field_of("lsn") is not None:
        return whole_number(field_of("lsn"), f"{prefix}lsn", POSITION_DIGITS)
    if field_of("file") is not None or field_of("pos") is not None:
        pos = whole_number(field_of("pos") or 0, f"{prefix}pos", POSITION_DIGITS)
        row = whole_number(field_of("row") or 0, f"{prefix}row", 10)
        return f"{field_of('file') or ''}:{pos}:{row}"
    return ""


def within_horizon(millis: int, horizon: EventTimeHorizon | None, what: str, value: Any) -> None:
    """Nothing when ``horizon`` is None or the event time ``millis`` (the field ``what`` = ``value``) is inside it.

    Raises:
        RecordError: ``<what> <value>: event time ... is later than the horizon ...`` (or earlier than the floor).
    """
    problem = millis_problem(millis, horizon) if horizon is not None else None
    if problem:
        raise RecordError(f"{what} {value}: {problem}")


def debezium_ordering(ts_ms: Any, position: str, what: str, horizon: EventTimeHorizon | None = None) -> str:
    """``ts_ms`` (15 digits) then the log position: sorts by time, then position.

    Raises:
        RecordError: no time, a time that is not whole milliseconds, or one outside ``horizon``.
    """
    if ts_ms is None:
        raise RecordError(f"missing {what}: the change cannot be ordered")
    digits = whole_number(ts_ms, what, TS_DIGITS)
    within_horizon(int(digits), horizon, what, ts_ms)
    return f"{digits}|{position}"


def unavailable_columns(image: dict[str, Any], placeholder: str | None) -> tuple[str, ...]:
    """The columns of a row image whose value is Debezium's unavailable-value ``placeholder`` (an unchanged
    TOASTed Postgres column): the text itself, its UTF-8 bytes in base64 (a binary column in JSON), or a
    non-empty array of nothing else (an array column). None: no placeholder, nothing is unavailable."""
    if not placeholder:
        return ()
    marks = {placeholder, base64.b64encode(placeholder.encode("utf-8")).decode("ascii")}

    def unavailable(value: Any) -> bool:
        if isinstance(value, list):
            return bool(value) and all(isinstance(item, str) and item in marks for item in value)
        return isinstance(value, str) and value in marks

    return tuple(name for name, value in image.items() if unavailable(value))


def _image_change(
    row: int, op: str, ordering: str, image: dict[str, Any], types: dict[str, str], *, placeholder: str | None
) -> ParsedChange:
    """A parsed Debezium change: values as text; a column holding the placeholder is kept (NULL, no type seen)."""
    keep = unavailable_columns(image, placeholder)
    values = {name: None if name in keep else as_text(value) for name, value in image.items()}
    types = types or {name: kind for name, value in image.items() if name not in keep and (kind := python_type(value))}
    return ParsedChange(row=row, op=op, ordering=ordering, values=values, types=types, keep=keep)


def debezium_shape_of(document: dict[str, Any]) -> str:
    """``envelope`` or ``flattened`` for one record (its payload), detected from its fields."""
    if any(name.startswith("__") for name in document):
        return "flattened"
    if "op" in document:
        return "envelope"
    raise RecordError(
        "not a Debezium change event: neither an envelope (op, before, after, source) nor a flattened record "
        "(__op, __source_ts_ms, __deleted: ExtractNewRecordState with add.fields=op,source.ts_ms)"
    )


def _flattened_change(
    record: dict[str, Any],
    schema: Any,
    row: int,
    keys: tuple[str, ...],
    horizon: EventTimeHorizon | None,
    *,
    placeholder: str | None = None,
) -> ParsedChange:
    """An ExtractNewRecordState record: the row, plus ``__op``, ``__source_ts_ms``, ``__deleted``, positions."""
    deleted = str(record.get(FLATTENED_DELETED, "false")).lower()
    if deleted not in ("true", "false"):
        raise RecordError(f"__deleted {record[FLATTENED_DELETED]!r} is neither true nor false")
    raw_op = record.get(FLATTENED_OP)
    if raw_op is None and FLATTENED_DELETED not in record:
        raise RecordError("flattened record without __op or __deleted (add.fields=op, delete.handling.mode=rewrite)")
    op = DELETE if deleted == "true" else DEBEZIUM_OPS.get(str(raw_op)) if raw_op is not None else UPDATE
    if op is None:
        raise RecordError(f"unknown __op {raw_op!r} (expected c, r, u or d)")
    image = {name: value for name, value in record.items() if not name.startswith("__")}
    _check_keys(image, keys)
    ts = record.get("__source_ts_ms", record.get("__ts_ms"))
    ordering = debezium_ordering(ts, debezium_position(record, "__"), "__source_ts_ms", horizon)
    types = {}
    if isinstance(schema, dict):
        types = {
            part["field"]: CONNECT_TYPES.get(part.get("type", ""), "string")
            for part in schema.get("fields") or []
            if not str(part.get("field", "")).startswith("__")
        }
    return _image_change(row, op, ordering, image, types, placeholder=placeholder)


def debezium_change(
    document: Any,
    row: int,
    keys: tuple[str, ...],
    shape: str | None = None,
    horizon: EventTimeHorizon | None = None,
    *,
    placeholder: str | None = None,
) -> ParsedChange | None:
    """One Debezium record (with or without the schema envelope); None for a tombstone.

    ``shape`` is ``envelope``, ``flattened`` (ExtractNewRecordState) or None (detected per record).
    ``placeholder``: the connector's unavailable-value placeholder; a column holding it is kept
    (:attr:`ParsedChange.keep`, :func:`unavailable_columns`). None: no column is.

    Raises:
        RecordError: no op, an unknown op, no row image, a missing or null key, a time or position that is
            not a whole number, a time outside ``horizon``.
    """
    if document is None:
        return None
    if not isinstance(document, dict):
        raise RecordError(f"expected a JSON object, got {type(document).__name__}")
    # JsonConverter's schema envelope has exactly these two fields (a row may have a column named payload).
    wrapped = "payload" in document and set(document) <= {"schema", "payload"}
    schema = document.get("schema") if wrapped else None
    envelope = document["payload"] if wrapped else document
    if envelope is None:
        return None
    if not isinstance(envelope, dict):
        raise RecordError(f"expected a JSON object, got {type(envelope).__name__}")
    if (shape or debezium_shape_of(envelope)) == "flattened":
        return _flattened_change(envelope, schema, row, keys, horizon, placeholder=placeholder)
    if "op" not in envelope:
        raise RecordError("missing op: not a Debezium change envelope (is the table's debezium_shape right?)")
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
    ordering = debezium_ordering(ts, debezium_position(source), "source.ts_ms", horizon)
    return _image_change(row, op, ordering, image, _connect_types(schema, image_field), placeholder=placeholder)


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


def approximate_millis(value: Any, precision: Any = None) -> int:
    """ApproximateCreationDateTime in whole milliseconds, read in the precision the record declares.

    ``precision`` is the record's ``ApproximateCreationDateTimePrecision``: ``MILLISECOND``, or
    ``MICROSECOND`` (the default of DynamoDB's Kinesis streaming destination; floored to the millisecond).
    Without it (the Lambda streams form, older Kinesis records) the magnitude decides, as before: seconds
    (possibly fractional) below 10^11, else milliseconds.

    Raises:
        RecordError: not a non-negative number (an ISO text, a word, a boolean); a precision that is not
            MILLISECOND or MICROSECOND (names it); a time outside 15 digits of milliseconds.
    """
    return approximate_time(value, precision)[0]


def approximate_time(value: Any, precision: Any = None) -> tuple[int, int | None]:
    """ApproximateCreationDateTime as (whole milliseconds, the microseconds past them); the second is None
    unless the record declares ``MICROSECOND`` (see :func:`approximate_millis` for the milliseconds).

    Raises:
        RecordError: as :func:`approximate_millis`.
    """
    if precision is not None and (not isinstance(precision, str) or precision not in UNITS_PER_MILLI):
        raise RecordError(
            f"{PRECISION_FIELD} {precision!r} is not one of {', '.join(UNITS_PER_MILLI)}: "
            "the record's time cannot be read"
        )
    number = _time_number(value)
    if precision is not None:
        units = UNITS_PER_MILLI[precision]
        whole, rest = divmod(number, units)  # floored: a later microsecond never sorts earlier
        millis = int(whole)
        if not 0 <= millis < 10**TS_DIGITS:
            raise RecordError(f"ApproximateCreationDateTime {value!r} ({precision}) is out of range")
        return millis, (int(rest) if units > 1 else None)
    if not 0 <= number < 10**TS_DIGITS:
        raise RecordError(f"ApproximateCreationDateTime {value!r} is out of range")
    return (round(number * 1000) if number < 100_000_000_000 else int(number)), None


def _time_number(value: Any) -> int | float:
    """A JSON number or number text; whole numbers stay exact ints (microseconds exceed a float's 2^53).

    Raises:
        RecordError: not a number (an ISO text, a word, a boolean, a list), or not finite.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _DIGITS.match(value):
        return int(value)
    try:
        if isinstance(value, bool):
            raise ValueError(value)
        number = float(value)
    except (TypeError, ValueError) as error:
        why = f"ApproximateCreationDateTime {value!r} is not a number of seconds or milliseconds"
        raise RecordError(why) from error
    if not math.isfinite(number):
        raise RecordError(f"ApproximateCreationDateTime {value!r} is out of range")
    return number


def record_precision(document: dict[str, Any], body: dict[str, Any]) -> Any:
    """The record's declared ``ApproximateCreationDateTimePrecision``: in its ``dynamodb`` object, else at the
    top level; None when it declares none."""
    return body[PRECISION_FIELD] if body.get(PRECISION_FIELD) is not None else document.get(PRECISION_FIELD)


def dynamodb_position(sequence: Any, micros: int | None, digits: int) -> str:
    """The position part of a DynamoDB ordering (after the ``|``), ``digits`` wide.

    Without sub-millisecond time (``micros`` None: every record not declared ``MICROSECOND``) it is the
    SequenceNumber padded to ``digits`` (zeros when there is none), exactly as before. A ``MICROSECOND``
    record puts its 3-digit remainder first, then the SequenceNumber padded to ``digits - 3``: changes of one
    millisecond sort by event time, then by sequence number, and the ordering keeps its width.

    Raises:
        RecordError: a SequenceNumber that is not a whole number of at most its width (names it; for a
            MICROSECOND record the width is ``digits - 3``).
    """
    if micros is None:
        return _pad(None, digits) if sequence is None else whole_number(sequence, "SequenceNumber", digits)
    width = digits - MICROS_DIGITS
    if sequence is None:
        return f"{micros:0{MICROS_DIGITS}d}" + _pad(None, width)
    try:
        return f"{micros:0{MICROS_DIGITS}d}" + whole_number(sequence, "SequenceNumber", width)
    except RecordError as error:
        raise RecordError(
            f"{error} (a MICROSECOND record's position starts with its {MICROS_DIGITS} sub-millisecond digits)"
        ) from None


def dynamodb_change(
    document: Any,
    row: int,
    keys: tuple[str, ...],
    *,
    sequence_digits: int = SEQUENCE_DIGITS,
    horizon: EventTimeHorizon | None = None,
) -> ParsedChange | None:
    """One DynamoDB stream record (Kinesis / Firehose form or the Lambda streams form).

    ``sequence_digits``: the width of the ordering's position, the SequenceNumber padded (DynamoDB Streams: 40;
    the streaming path puts the longer Kinesis sequence number there and passes its own width). A MICROSECOND
    record's position is its sub-millisecond remainder, then the SequenceNumber (:func:`dynamodb_position`).

    Raises:
        RecordError: no eventName or an unknown one, no image, a missing or null key, a bad attribute, a
            creation time that is not a number or out of range, an unknown declared precision
            (:func:`approximate_millis`), a SequenceNumber that is not a whole number of at most its width
            (:func:`dynamodb_position`), a creation time outside ``horizon`` (:func:`within_horizon`).
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
    millis, micros = (None, None) if created is None else approximate_time(created, record_precision(document, body))
    if millis is not None:
        within_horizon(millis, horizon, "ApproximateCreationDateTime", created)
    position = dynamodb_position(body.get("SequenceNumber"), micros, sequence_digits)
    ordering = f"{_pad(millis, TS_DIGITS) if millis is not None else ''}|{position}"
    return ParsedChange(row=row, op=op, ordering=ordering, values=values, types=types)


@dataclass(frozen=True)
class RecordLayout:
    """How a table's JSON change files are read: ``source_format`` (``debezium`` or ``dynamodb``), the ``keys``,
    the Debezium ``shape`` (None: detected per record), the event times accepted (``horizon``; None: any),
    Debezium's unavailable-value ``placeholder`` (None: none) and the files' ``encoding``."""

    source_format: str
    keys: tuple[str, ...]
    shape: str | None = None
    horizon: EventTimeHorizon | None = None
    placeholder: str | None = None
    encoding: str = "utf-8"


def parse_file(text: str, source_format: str, keys: tuple[str, ...], **layout: Any) -> Iterator[ParsedChange]:
    """Every change of one file read as ``RecordLayout(source_format, keys, **layout)`` (:func:`record_changes`)."""
    return record_changes(text, RecordLayout(source_format, keys, **layout))


def record_changes(text: str, layout: RecordLayout) -> Iterator[ParsedChange]:
    """Every change of one file; ends with one error change at the first bad record (``row N: reason``)."""
    keys, horizon = layout.keys, layout.horizon
    row = -1
    try:
        for row, document in enumerate(json_documents(text)):
            if layout.source_format == "debezium":
                change = debezium_change(document, row, keys, layout.shape, horizon, placeholder=layout.placeholder)
            else:
                change = dynamodb_change(document, row, keys, horizon=horizon)
            if change is not None:
                yield change
    except RecordError as error:
        where = "" if str(error).startswith("row ") else f"row {row + 1}: "  # a JSON error names its own row
        yield ParsedChange(row=max(row, 0), error=f"{where}{error}")


def decoded_changes(
    data: bytes, encoding: str, parse: Callable[[str], Iterator[ParsedChange]]
) -> Iterator[ParsedChange]:
    """``parse`` over a file's bytes (gzip or not, decoded strictly in ``encoding``); one error change when the
    bytes are not readable text. The JSON and the CSV parsers both start here."""
    try:
        text = decode_content(data, encoding)
    except ContentError as error:
        yield ParsedChange(row=0, error=str(error))
        return
    yield from parse(text)


def parse_content(data: bytes, source_format: str, keys: tuple[str, ...], **layout: Any) -> Iterator[ParsedChange]:
    """Every change of one file's bytes read as ``RecordLayout(source_format, keys, **layout)``
    (:func:`record_content_changes`)."""
    return record_content_changes(data, RecordLayout(source_format, keys, **layout))


def record_content_changes(data: bytes, layout: RecordLayout) -> Iterator[ParsedChange]:
    """Every change of one file's bytes (gzip or not, decoded in ``layout.encoding``); one error change when the
    bytes are not readable text."""
    return decoded_changes(data, layout.encoding, lambda text: record_changes(text, layout))
