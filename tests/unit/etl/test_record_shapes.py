"""Pure parsers on the real CDC shapes (no Spark): DMS CSV layouts, flattened Debezium, event times, content."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from etl.readers.csv_records import parse_csv, parse_csv_content
from etl.readers.records import (
    MAX_RECORD_CHARS,
    SEQUENCE_DIGITS,
    RecordError,
    approximate_millis,
    debezium_change,
    decode_content,
    dynamodb_change,
    parse_content,
)
from tests.support.stream_records import kinesis_sample, with_precision

NAMES = ["id", "name", "seq"]


def _csv(text: str, *, full_load: bool = False, **settings) -> list[tuple]:
    return [(c.row, c.op, c.values, c.error) for c in parse_csv(text, NAMES, is_full_load=full_load, **settings)]


def test_headerless_cdc_csv_reads_fields_in_configured_order_after_op() -> None:
    assert _csv('I,1,"a, b",7\nD,2,,8\n') == [
        (0, "I", {"id": "1", "name": "a, b", "seq": "7"}, None),
        (1, "D", {"id": "2", "name": None, "seq": "8"}, None),
    ]


def test_full_load_csv_with_and_without_op() -> None:
    assert _csv("1,a,7\n", full_load=True) == [(0, "I", {"id": "1", "name": "a", "seq": "7"}, None)]
    assert _csv("I,1,a,7\n", full_load=True) == [(0, "I", {"id": "1", "name": "a", "seq": "7"}, None)]


def test_header_row_is_detected_and_gives_the_order() -> None:
    # DMS AddColumnName=true: the header names the columns; its order wins over the configured one.
    assert _csv("Op,SEQ,ID,NAME\nU,9,1,x\n") == [(0, "U", {"seq": "9", "id": "1", "name": "x"}, None)]
    assert _csv("U,1,x,9\n", header=True) == [
        (
            0,
            None,
            {},
            "the header names columns ['u', '1', 'x', '9'], the configuration has ['id', 'name', 'seq'] (+ Op)",
        )
    ]


def test_a_header_that_does_not_match_the_configuration_names_both() -> None:
    assert _csv("Op,id,title,seq\nI,1,a,1\n", header=True) == [
        (
            0,
            None,
            {},
            "the header names columns ['op', 'id', 'title', 'seq'], the configuration has ['id', 'name', 'seq'] (+ Op)",
        )
    ]


def test_every_line_is_checked_for_its_field_count() -> None:
    # A field missing at the end of line 3: never shifted, never NULL.
    rows = _csv("I,1,a,7\nU,1,b,8\nU,1,9\nU,1,c,10\n")
    assert [r[1] for r in rows[:2]] == ["I", "U"]
    assert rows[2] == (2, None, {}, "line 3 has 3 fields, expected 4: ['op', 'id', 'name', 'seq']")
    assert len(rows) == 3
    assert _csv("1,a\n") == [
        (0, None, {}, "line 1 has 2 fields, expected 4 (Op + 3 configured columns): ['id', 'name', 'seq']")
    ]


def test_csv_null_value_and_delimiter() -> None:
    assert _csv("I|1||NULL\n", delimiter="|", null_value="NULL") == [
        (0, "I", {"id": "1", "name": "", "seq": None}, None)
    ]


def test_gzip_any_extension_and_strict_utf8() -> None:
    body = "I,1,é,7\n".encode()
    assert [c.values for c in parse_csv_content(gzip.compress(body), NAMES, is_full_load=False)] == [
        {"id": "1", "name": "é", "seq": "7"}
    ]
    latin = "I,1,é,7\n".encode("latin-1")
    assert [c.error for c in parse_csv_content(latin, NAMES, is_full_load=False)] == [
        "bytes b'\\xe9,7\\n' at offset 4 are not valid utf-8 (set the table's encoding if the file uses another one)"
    ]
    assert [c.values["name"] for c in parse_csv_content(latin, NAMES, is_full_load=False, encoding="latin-1")] == ["é"]
    truncated = gzip.compress(body * 100)[:-30]
    error = next(iter(parse_content(truncated, "debezium", ("id",)))).error
    assert error.startswith("corrupt or truncated gzip data (")
    with pytest.raises(ValueError, match="corrupt or truncated gzip data"):
        decode_content(b"\x1f\x8bnot gzip at all")


# ---------------------------------------------------------------------------------------------------------------
# Debezium flattened by ExtractNewRecordState
# ---------------------------------------------------------------------------------------------------------------


def test_flattened_postgres_record_orders_by_source_ts_then_lsn() -> None:
    record = {"id": 1, "name": "a", "__op": "u", "__source_ts_ms": 1700000000000, "__lsn": 34078720}
    change = debezium_change(record, 0, ("id",))
    assert (change.op, change.values, change.ordering) == (
        "U",
        {"id": "1", "name": "a"},
        "001700000000000|00000000000034078720",
    )


def test_flattened_mysql_record_orders_by_binlog_position() -> None:
    record = {"id": 1, "__op": "c", "__source_ts_ms": 5, "__file": "mysql-bin.000003", "__pos": 362, "__row": 1}
    assert debezium_change(record, 0, ("id",)).ordering == (
        "000000000000005|mysql-bin.000003:00000000000000000362:0000000001"
    )


def test_flattened_deletes_in_every_form() -> None:
    rewrite = {"id": 1, "name": "a", "__deleted": "true", "__source_ts_ms": 5}  # delete.handling.mode=rewrite
    both = {"id": 1, "__op": "d", "__deleted": "true", "__source_ts_ms": 5}
    op_only = {"id": 1, "__op": "d", "__source_ts_ms": 5}
    boolean = {"id": 1, "__deleted": True, "__source_ts_ms": 5}
    assert [debezium_change(r, 0, ("id",)).op for r in (rewrite, both, op_only, boolean)] == ["D"] * 4
    alive = {"id": 1, "__deleted": "false", "__source_ts_ms": 5, "__op": "c"}
    assert debezium_change(alive, 0, ("id",)).op == "I"
    assert debezium_change(None, 0, ("id",)) is None  # a Kafka tombstone (null value)


def test_flattened_with_schema_envelope_takes_types_from_the_schema() -> None:
    document = {
        "schema": {
            "type": "struct",
            "fields": [
                {"field": "id", "type": "int32"},
                {"field": "weight", "type": "float64"},
                {"field": "__op", "type": "string"},
                {"field": "__source_ts_ms", "type": "int64"},
            ],
        },
        "payload": {"id": 7, "weight": 1.5, "__op": "r", "__source_ts_ms": 10},
    }
    change = debezium_change(document, 0, ("id",))
    assert (change.op, change.types, change.values) == (
        "I",
        {"id": "int", "weight": "double"},
        {"id": "7", "weight": "1.5"},
    )


@pytest.mark.parametrize(
    ("record", "error"),
    [
        (
            {"op": "u", "after": {"id": 1}, "source": {"ts_ms": "2026-01-01T00:00:00Z"}},
            "source.ts_ms '2026-01-01T00:00:00Z' is not a whole number of at most 15 digits",
        ),
        (
            {"op": "u", "after": {"id": 1}, "source": {"ts_ms": "soon"}},
            "source.ts_ms 'soon' is not a whole number of at most 15 digits",
        ),
        (
            {"op": "u", "after": {"id": 1}, "source": {"ts_ms": -5}},
            "source.ts_ms -5 is not a whole number of at most 15 digits",
        ),
        ({"op": "u", "after": {"id": 1}, "source": {}}, "missing source.ts_ms: the change cannot be ordered"),
        (
            {"op": "u", "after": {"id": 1}, "source": {"ts_ms": 5, "lsn": "0/16B3748"}},
            "lsn '0/16B3748' is not a whole number of at most 20 digits",
        ),
        (
            {"id": 1, "__op": "u", "__source_ts_ms": 1.5},
            "__source_ts_ms 1.5 is not a whole number of at most 15 digits",
        ),
        ({"id": 1, "__op": "x", "__source_ts_ms": 1}, "unknown __op 'x' (expected c, r, u or d)"),
        ({"id": 1, "__deleted": "maybe", "__source_ts_ms": 1}, "__deleted 'maybe' is neither true nor false"),
    ],
)
def test_event_times_and_positions_that_do_not_parse_are_errors(record: dict, error: str) -> None:
    with pytest.raises(RecordError) as raised:
        debezium_change(record, 0, ("id",))
    assert str(raised.value) == error


def test_valid_times_keep_the_encoding_stored_by_earlier_releases() -> None:
    # Stored _odp_seq values were built from these exact texts: a valid value must encode the same way.
    change = debezium_change(
        {"op": "c", "after": {"id": 1}, "source": {"ts_ms": "1589361987000", "lsn": 9}}, 0, ("id",)
    )
    assert change.ordering == "001589361987000|00000000000000000009"


# ---------------------------------------------------------------------------------------------------------------
# DynamoDB times
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["2026-01-01T00:00:00Z", "soon", True, [], -1])
def test_bad_approximate_creation_time_is_a_record_error(value) -> None:
    with pytest.raises(RecordError, match=r"^ApproximateCreationDateTime .* (is not a number|out of range)"):
        approximate_millis(value)


def test_bad_dynamodb_record_time_fails_its_file_with_the_row() -> None:
    good = {"eventName": "INSERT", "dynamodb": {"ApproximateCreationDateTime": 1700000000, "Keys": {"id": {"S": "a"}}}}
    bad = {"eventName": "MODIFY", "dynamodb": {"ApproximateCreationDateTime": "yesterday", "Keys": {"id": {"S": "a"}}}}
    text = "\n".join(json.dumps(r) for r in (good, bad))
    changes = list(parse_content(text.encode(), "dynamodb", ("id",)))
    assert changes[0].ordering.startswith("001700000000000|")
    assert (
        changes[1].error == "row 2: ApproximateCreationDateTime 'yesterday' is not a number of seconds or milliseconds"
    )
    with pytest.raises(RecordError, match="SequenceNumber 'abc' is not a whole number"):
        dynamodb_change(
            {"eventName": "INSERT", "dynamodb": {"Keys": {"id": {"S": "a"}}, "SequenceNumber": "abc"}}, 0, ("id",)
        )


UNKNOWN_PRECISION = (
    "ApproximateCreationDateTimePrecision 'NANOSECOND' is not one of MILLISECOND, MICROSECOND: "
    "the record's time cannot be read"
)


def test_each_record_form_is_timed_as_it_declares(samples_dir: Path) -> None:
    """Golden: one record of each form, ordered by its time in milliseconds.

    The Lambda streams form (seconds) and the Kinesis form without a precision field (milliseconds) are the
    published samples as they are. No published record declares ``ApproximateCreationDateTimePrecision``:
    the MILLISECOND and MICROSECOND records are the published Kinesis sample's first record with the field
    set in its ``dynamodb`` object and the time written in that precision.
    """
    streams = json.loads((samples_dir / "lambda-events" / "dynamoStreamEvent.json").read_text())["Records"][0]
    kinesis = kinesis_sample(samples_dir)[0]
    no_sequence = "0" * SEQUENCE_DIGITS
    forms = {
        "streams (seconds)": (streams, ("Id",)),
        "kinesis, no precision (milliseconds)": (kinesis, ("id",)),
        "kinesis, MILLISECOND": (with_precision(kinesis, "MILLISECOND", 1731924555370), ("id",)),
        "kinesis, MICROSECOND": (with_precision(kinesis, "MICROSECOND", 1731924555370123), ("id",)),
    }
    assert {form: dynamodb_change(record, 0, keys).ordering for form, (record, keys) in forms.items()} == {
        "streams (seconds)": "001693997155000|" + "111".rjust(SEQUENCE_DIGITS, "0"),
        "kinesis, no precision (milliseconds)": "001731924555370|" + no_sequence,
        "kinesis, MILLISECOND": "001731924555370|" + no_sequence,
        "kinesis, MICROSECOND": "001731924555370|123" + "0" * 37,  # the microseconds head the position
    }


@pytest.mark.parametrize(
    ("value", "precision", "millis"),
    [
        (1693997155.0, None, 1693997155000),  # seconds by magnitude, as before
        (1731924555370, None, 1731924555370),  # milliseconds by magnitude, as before
        (1731924555370, "MILLISECOND", 1731924555370),
        (1700000000, "MILLISECOND", 1700000000),  # declared: not taken for seconds
        (1772352000000000, "MICROSECOND", 1772352000000),  # the value: DynamoDB's default precision
        ("1772352000999999", "MICROSECOND", 1772352000999),  # floored, never into the next millisecond
        (999_999_999_999_999_999, "MICROSECOND", 999_999_999_999_999),  # exact beyond a float's 2^53
    ],
)
def test_approximate_creation_time_in_its_declared_precision(value, precision, millis) -> None:
    assert approximate_millis(value, precision) == millis


@pytest.mark.parametrize(
    ("value", "precision", "message"),
    [
        (1772352000000000, None, "ApproximateCreationDateTime 1772352000000000 is out of range"),
        (1772352000000000, "MILLISECOND", "ApproximateCreationDateTime 1772352000000000 (MILLISECOND) is out of range"),
        (10**18, "MICROSECOND", "ApproximateCreationDateTime 1000000000000000000 (MICROSECOND) is out of range"),
        (-1, "MICROSECOND", "ApproximateCreationDateTime -1 (MICROSECOND) is out of range"),
        (1731924555370, "NANOSECOND", UNKNOWN_PRECISION),
        (1731924555370, "millisecond", UNKNOWN_PRECISION.replace("'NANOSECOND'", "'millisecond'")),
        (1731924555370, ["MICROSECOND"], UNKNOWN_PRECISION.replace("'NANOSECOND'", "['MICROSECOND']")),
        ("noon", "MICROSECOND", "ApproximateCreationDateTime 'noon' is not a number of seconds or milliseconds"),
    ],
)
def test_a_time_no_precision_explains_is_a_record_error(value, precision, message) -> None:
    with pytest.raises(RecordError) as error:
        approximate_millis(value, precision)
    assert str(error.value) == message


def test_an_unknown_precision_fails_its_file_with_the_row(samples_dir: Path) -> None:
    kinesis = kinesis_sample(samples_dir)[0]
    good = with_precision(kinesis, "MICROSECOND", 1731924555370123)
    unknown = with_precision(kinesis, "NANOSECOND", 1731924555370123456)
    text = "".join(json.dumps(record) for record in (good, unknown))  # Firehose: records back to back
    changes = list(parse_content(text.encode(), "dynamodb", ("id",)))
    assert [(change.ordering[:15], change.error) for change in changes] == [
        ("001731924555370", None),
        ("", f"row 2: {UNKNOWN_PRECISION}"),
    ]


def test_a_precision_at_the_top_level_of_the_record_is_honoured_too(samples_dir: Path) -> None:
    kinesis = kinesis_sample(samples_dir)[0]
    kinesis["dynamodb"]["ApproximateCreationDateTime"] = 1731924555370123
    top_level = {**kinesis, "ApproximateCreationDateTimePrecision": "MICROSECOND"}
    assert dynamodb_change(top_level, 0, ("id",)).ordering.startswith("001731924555370|")


def test_microseconds_of_one_millisecond_order_its_changes_by_event_time(samples_dir: Path) -> None:
    """Two changes of one item in one millisecond, delivered in reverse order (the later one first in the file):
    the position starts with the microseconds past the millisecond, so the orderings sort in event order, not
    by file key and row. The Kinesis form has no SequenceNumber: 37 zeros follow."""
    kinesis = kinesis_sample(samples_dir)[0]
    early, late = (with_precision(kinesis, "MICROSECOND", 1731924555370000 + micros) for micros in (100, 900))
    text = "".join(json.dumps(record) for record in (late, early))  # Firehose: back to back, out of order
    delivered = [change.ordering for change in parse_content(text.encode(), "dynamodb", ("id",))]
    assert delivered == [
        "001731924555370|900" + "0" * 37,
        "001731924555370|100" + "0" * 37,
    ]
    assert sorted(delivered) == delivered[::-1]  # event order: the early change sorts first
    assert len(delivered[0]) == len(dynamodb_change(kinesis, 0, ("id",)).ordering)  # the stored width is kept


def test_orderings_of_records_not_microsecond_are_byte_for_byte_as_before(samples_dir: Path) -> None:
    """A MILLISECOND record, one without a precision and a Lambda streams record with a SequenceNumber: the
    strings stored before the microsecond remainder existed."""
    kinesis = kinesis_sample(samples_dir)[0]
    streams = json.loads((samples_dir / "lambda-events" / "dynamoStreamEvent.json").read_text())["Records"][0]
    orderings = [
        dynamodb_change(with_precision(kinesis, "MILLISECOND", 1731924555370), 0, ("id",)).ordering,
        dynamodb_change(kinesis, 0, ("id",)).ordering,
        dynamodb_change(streams, 0, ("Id",)).ordering,
    ]
    assert orderings == [
        "001731924555370|0000000000000000000000000000000000000000",
        "001731924555370|0000000000000000000000000000000000000000",
        "001693997155000|0000000000000000000000000000000000000111",
    ]


def test_a_microsecond_record_whose_sequence_number_leaves_no_room_for_the_remainder_is_refused(
    samples_dir: Path,
) -> None:
    """40 digits fit a MILLISECOND record's position; a MICROSECOND record keeps 3 of them for its microseconds."""
    kinesis = kinesis_sample(samples_dir)[0]
    forty = "1" * 40
    millis = with_precision(kinesis, "MILLISECOND", 1731924555370)
    millis["dynamodb"]["SequenceNumber"] = forty
    assert dynamodb_change(millis, 0, ("id",)).ordering == "001731924555370|" + forty
    micros = with_precision(kinesis, "MICROSECOND", 1731924555370123)
    micros["dynamodb"]["SequenceNumber"] = "1" * 37
    assert dynamodb_change(micros, 0, ("id",)).ordering == "001731924555370|123" + "1" * 37
    good = json.dumps(micros)
    micros["dynamodb"]["SequenceNumber"] = forty
    refused = (
        f"SequenceNumber '{forty}' is not a whole number of at most 37 digits "
        "(a MICROSECOND record's position starts with its 3 sub-millisecond digits)"
    )
    with pytest.raises(RecordError) as error:
        dynamodb_change(micros, 0, ("id",))
    assert str(error.value) == refused
    changes = list(parse_content((good + json.dumps(micros)).encode(), "dynamodb", ("id",)))
    assert [change.error for change in changes] == [None, f"row 2: {refused}"]


def test_unwrapped_sample_has_no_op_nor_time(samples_dir: Path) -> None:
    text = (samples_dir / "debezium" / "serde-unwrapped.json").read_bytes()
    assert [c.error for c in parse_content(text, "debezium", ("id",), shape="flattened")] == [
        "row 1: flattened record without __op or __deleted (add.fields=op, delete.handling.mode=rewrite)"
    ]


def test_a_flattened_row_with_a_payload_column_is_not_taken_for_the_schema_envelope() -> None:
    record = {"id": 1, "payload": "{}", "__op": "c", "__source_ts_ms": 5}
    assert debezium_change(record, 0, ("id",)).values == {"id": "1", "payload": "{}"}


def test_an_executor_error_is_mapped_back_to_the_file_its_message_names() -> None:
    from etl.readers.common import SourceFile, executor_error

    files = [
        SourceFile("file:///lake/staging/src/app/t/a.parquet", "src/app/t/a.parquet", 0),
        SourceFile("file:///lake/staging/src/app/t/b.parquet", "src/app/t/b.parquet", 1),
    ]
    raised = RuntimeError(
        "An error occurred while calling o1077.collectToPython.\n: org.apache.spark.SparkException: Job aborted: "
        "Encountered error while reading file file:///lake/staging/src/app/t/b.parquet. Details:\n\tat x.y(Z.java:1)\n"
        "Caused by: java.io.IOException: can not read class org.apache.parquet.format.PageHeader: Required field "
        "'uncompressed_page_size' was not found\n\tat a.b(C.java:2)"
    )
    error = executor_error(raised, files)
    assert str(error) == (
        "src/app/t/b.parquet: unreadable Parquet: java.io.IOException: can not read class "
        "org.apache.parquet.format.PageHeader: Required field 'uncompressed_page_size' was not found"
    )
    anonymous = executor_error(RuntimeError("boom\nCaused by: java.lang.OutOfMemoryError: heap"), files)
    assert str(anonymous) == (
        "src/app/t/a.parquet, src/app/t/b.parquet: reading failed, the error names no single file: "
        "java.lang.OutOfMemoryError: heap"
    )


def test_a_csv_field_of_hundreds_of_kilobytes_reads_and_one_past_the_record_limit_is_refused() -> None:
    lob = "x" * 200_000  # a DMS LOB column: more than Python's default field limit of 131,072
    assert _csv(f"I,1,{lob},7\n") == [(0, "I", {"id": "1", "name": lob, "seq": "7"}, None)]
    enormous = "x" * (MAX_RECORD_CHARS + 1)
    assert _csv(f"I,1,a,7\nI,2,{enormous},8\n")[-1] == (
        1,
        None,
        {},
        f"line 2: CSV does not parse: field larger than field limit ({MAX_RECORD_CHARS})",
    )


def test_a_json_record_past_the_record_limit_names_its_row() -> None:
    enormous = json.dumps({"op": "c", "after": {"id": 2, "name": "x" * MAX_RECORD_CHARS}, "source": {"ts_ms": 5}})
    text = json.dumps({"op": "c", "after": {"id": 1}, "source": {"ts_ms": 5}}) + "\n" + enormous + "\n"
    errors = [c.error for c in parse_content(text.encode(), "debezium", ("id",)) if c.error]
    assert errors == [
        f"row 2: a record of {len(enormous):,} characters is longer than the limit of {MAX_RECORD_CHARS:,} "
        "(one change record; DynamoDB items stop at 400 KB): not change data, or a row to load another way"
    ]
