"""Pure parsers of JSON change records, on the published samples as they are (no Spark)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from etl.readers.records import (
    RecordError,
    approximate_millis,
    debezium_change,
    dynamodb_change,
    json_documents,
    parse_file,
    plain_attribute,
)

KEYS = ("id",)


def _changes(text: str, fmt: str, keys: tuple[str, ...] = KEYS) -> list:
    return list(parse_file(text, fmt, keys))


@pytest.mark.parametrize(
    "name",
    [
        "debezium-data-schema-exclude.txt",
        "debezium-postgres-data-schema-exclude.txt",
        "debezium-postgres-data-schema-include.txt",
    ],
)
def test_debezium_samples_parse_to_sixteen_changes(samples_dir: Path, name: str) -> None:
    changes = _changes((samples_dir / "debezium" / name).read_text(), "debezium")
    assert [c.error for c in changes] == [None] * 16
    assert [c.op for c in changes] == ["I"] * 9 + ["U", "U", "I", "I", "U", "U", "D"]
    assert changes[15].values == {
        "id": "111",
        "name": "scooter",
        "description": "Big 2-wheel scooter ",
        "weight": "5.17" if "postgres" in name else "5.170000076293945",
    }
    orderings = [c.ordering for c in changes]
    assert orderings == sorted(orderings)  # the samples are in log order


def test_debezium_envelope_types_and_positions(samples_dir: Path) -> None:
    with_schema = _changes(
        (samples_dir / "debezium" / "debezium-postgres-data-schema-include.txt").read_text(), "debezium"
    )
    assert with_schema[0].types == {"id": "int", "name": "string", "description": "string", "weight": "double"}
    assert with_schema[0].ordering == "001596001099434|00000000000034078720"
    mysql = _changes((samples_dir / "debezium" / "debezium-data-schema-exclude.txt").read_text(), "debezium")
    assert mysql[9].ordering == "001589361987000|mysql-bin.000003:00000000000000000362:0000000000"
    assert mysql[0].types == {"id": "bigint", "name": "string", "description": "string", "weight": "double"}


def unwrapped_text(samples_dir: Path) -> str:
    return (samples_dir / "debezium" / "serde-unwrapped.json").read_text()


def test_debezium_pretty_printed_samples_and_unwrapped_record(samples_dir: Path) -> None:
    update = _changes((samples_dir / "debezium" / "serde-update.json").read_text(), "debezium")
    assert [(c.op, c.values["first_name"]) for c in update] == [("U", "Anne")]
    created = _changes((samples_dir / "debezium" / "serde-without-schema.json").read_text(), "debezium")
    assert [(c.op, c.values["id"]) for c in created] == [("I", "1004")]
    unwrapped = _changes((samples_dir / "debezium" / "serde-unwrapped.json").read_text(), "debezium")
    # Flattened without add.fields: nothing says which change it is, nor when.
    assert [c.error for c in unwrapped] == [
        "row 1: not a Debezium change event: neither an envelope (op, before, after, source) nor a flattened "
        "record (__op, __source_ts_ms, __deleted: ExtractNewRecordState with add.fields=op,source.ts_ms)"
    ]
    configured = list(
        parse_file(json.dumps(json.loads(unwrapped_text(samples_dir))), "debezium", ("id",), shape="flattened")
    )
    assert [c.error for c in configured] == [
        "row 1: flattened record without __op or __deleted (add.fields=op, delete.handling.mode=rewrite)"
    ]


def test_debezium_tombstones_are_ignored_and_bad_records_fail_with_a_reason() -> None:
    good = {"op": "d", "before": {"id": 1}, "after": None, "source": {"ts_ms": 5, "lsn": 9}}
    changes = _changes(json.dumps(good) + "\nnull\n" + json.dumps({"schema": {}, "payload": None}) + "\n", "debezium")
    assert [(c.op, c.values, c.row) for c in changes] == [("D", {"id": "1"}, 0)]
    assert _changes(json.dumps({"op": "t", "source": {}}), "debezium")[0].error == (
        "row 1: unknown op 't' (expected c, r, u or d)"
    )
    assert _changes(json.dumps({"op": "c", "after": {"id": None}}), "debezium")[0].error == "row 1: null key column id"
    assert _changes(json.dumps({"op": "c", "after": {"x": 1}}), "debezium")[0].error == "row 1: missing key column id"
    broken = _changes(json.dumps(good) + "\n{not json\n", "debezium")
    assert broken[0].op == "D"
    assert broken[1].error == "row 2: JSON does not parse: Expecting property name enclosed in double quotes (char 83)"
    with pytest.raises(RecordError):
        debezium_change(["a list"], 0, KEYS)


def test_dynamodb_kinesis_sample_decodes_to_inserts(samples_dir: Path) -> None:
    event = json.loads((samples_dir / "dynamodb-kinesis" / "dynamodb-stream.json").read_text())
    lines = [base64.b64decode(r["kinesis"]["data"]).decode() for r in event["Records"]]
    changes = _changes("\n".join(lines), "dynamodb")
    assert [(c.op, c.values) for c in changes] == [
        ("I", {"id": "record-1qit2y819gi", "data": "data-x6aq7ckdpgk"}),
        ("I", {"id": "record-fvxn3q4q5jw", "data": "data-4eompjs89n5"}),
    ]
    assert changes[0].ordering == "001731924555370|" + "0" * 40  # milliseconds, no sequence number


def test_dynamodb_typed_attributes_flatten() -> None:
    record = {
        "eventName": "MODIFY",
        "dynamodb": {
            "ApproximateCreationDateTime": 1700000000,
            "SequenceNumber": "111",
            "Keys": {"id": {"S": "a"}},
            "NewImage": {
                "id": {"S": "a"},
                "n": {"N": "12.50"},
                "i": {"N": "7"},
                "b": {"BOOL": True},
                "z": {"NULL": True},
                "m": {"M": {"x": {"N": "1"}, "y": {"L": [{"S": "q"}, {"NS": ["2", "1.5"]}]}}},
                "ss": {"SS": ["u", "v"]},
                "bin": {"B": "AAE="},
            },
        },
    }
    change = dynamodb_change(record, 3, ("id",))
    assert change.op == "U"
    assert change.values == {
        "id": "a",
        "n": "12.50",
        "i": "7",
        "b": "true",
        "z": None,
        "m": '{"x":1,"y":["q",[2,1.5]]}',
        "ss": '["u","v"]',
        "bin": "AAE=",
    }
    assert change.types["i"] == "bigint"
    assert change.types["n"] == "double"
    assert "z" not in change.types
    assert change.ordering == "001700000000000|" + "111".rjust(40, "0")


def test_dynamodb_remove_uses_old_image_or_keys() -> None:
    with_old = {
        "eventName": "REMOVE",
        "dynamodb": {"Keys": {"id": {"S": "k"}}, "OldImage": {"id": {"S": "k"}, "v": {"N": "1"}}},
    }
    keys_only = {"eventName": "REMOVE", "dynamodb": {"Keys": {"id": {"S": "k"}}}}
    assert dynamodb_change(with_old, 0, ("id",)).values == {"id": "k", "v": "1"}
    assert dynamodb_change(keys_only, 0, ("id",)).values == {"id": "k"}
    with pytest.raises(RecordError, match="unknown eventName"):
        dynamodb_change({"eventName": "UPSERT", "dynamodb": {}}, 0, ("id",))
    with pytest.raises(RecordError, match="unknown attribute type"):
        plain_attribute({"Q": 1})


def test_approximate_creation_time_precision() -> None:
    assert approximate_millis(1700000000) == 1700000000000
    assert approximate_millis(1700000000.5) == 1700000000500
    assert approximate_millis(1731924555370) == 1731924555370


def test_json_documents_reads_lines_and_concatenated_documents() -> None:
    assert list(json_documents('{"a": 1}\n{"a": 2}\n')) == [{"a": 1}, {"a": 2}]
    assert list(json_documents('{\n "a": 1\n}{\n "a": 2\n}')) == [{"a": 1}, {"a": 2}]
    with pytest.raises(RecordError, match=r"^row 2: JSON does not parse: Expecting value \(char 15\)$"):
        list(json_documents('{"a": 1}\n{"a": '))
