"""Pure parsers on the real CDC shapes (no Spark): DMS CSV layouts, flattened Debezium, event times, content."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from etl.readers.csv_records import parse_csv, parse_csv_content
from etl.readers.records import (
    MAX_RECORD_CHARS,
    RecordError,
    approximate_millis,
    debezium_change,
    decode_content,
    dynamodb_change,
    parse_content,
)

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
