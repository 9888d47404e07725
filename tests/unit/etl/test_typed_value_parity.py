"""One strict cast for files and streams: the same values, refused with the same words, stored the same.

The same DynamoDB change records are read once from a landed JSON-lines file (and their values once from
a DMS CSV file) by the real readers, and once from a streaming micro-batch (written to Hudi). Each bad
record holds one value its declared type cannot hold exactly; the error's core
(``column X: value 'V' is not a valid T``) must be the same on every path, only its place differs
(``row N`` in a file, ``shard <s> sequence <n>`` on a stream).
"""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from etl.errors import ChangeFileError
from etl.hudi.options import HudiProfile, WriteProfile
from etl.readers import SourceFile, first_error, read_changes
from etl.streaming.batch import StreamTarget, process_micro_batch
from odp.config.models import SourceFormat, TableConfig
from odp.tracker import RunStatus
from tests.support.stream_records import change

STREAM = "parity"
SHARD = "shardId-000000000000"
COLUMNS = {
    "id": "string",
    "n": "bigint",
    "small": "int",
    "amount": "decimal(12,2)",
    "ratio": "double",
    "day": "date",
    "at": "timestamp",
}
GOOD = {
    "id": "g1",
    "n": 7,
    "small": 42,
    "amount": Decimal("12.30"),
    "ratio": 0.5,
    "day": "2026-01-31",
    "at": "2026-01-01T10:00:00Z",
}
# The good item as every path types it (the timestamp as text in the session's zone, UTC).
EXPECTED = ("g1", 7, 42, Decimal("12.30"), 0.5, date(2026, 1, 31), "2026-01-01 10:00:00")
# One bad value per record (id -> column, value) and the message core every path must give for it.
BAD = {
    "b1": ("n", Decimal("1.5"), "column n: value '1.5' is not a valid bigint"),
    "b2": ("amount", Decimal("12.345"), "column amount: value '12.345' is not a valid decimal(12,2)"),
    "b3": ("ratio", "n/a", "column ratio: value 'n/a' is not a valid double"),
    "b4": ("small", 3_000_000_000, "column small: value '3000000000' is not a valid int"),
    "b5": ("day", "2026-02-30", "column day: value '2026-02-30' is not a valid date"),
    "b6": ("day", "2026-01-01 10:00:00", "column day: value '2026-01-01 10:00:00' is not a valid date"),
    "b7": ("at", "yesterday", "column at: value 'yesterday' is not a valid timestamp"),
}


def _items() -> list[dict]:
    """The good item, then each bad one (the good item's values with one replaced)."""
    bad = [{**GOOD, "id": key, column: value} for key, (column, value, _) in BAD.items()]
    return [GOOD, *bad]


def _config(source_format: SourceFormat = SourceFormat.DYNAMODB) -> TableConfig:
    return TableConfig(
        source="shop_dynamodb",
        schema_name="app",
        table="typed",
        format=source_format,
        primary_key=("id",),
        stream=STREAM if source_format is SourceFormat.DYNAMODB else None,
        database="shop_raw",
        columns=COLUMNS,
    )


def _typed(frame) -> list:
    """The frame's declared columns (the timestamp as the session shows it, so the host's zone plays no part)."""
    return frame.select(*[F.col(name).cast("string") if name == "at" else F.col(name) for name in COLUMNS])


def _file_errors(spark, path: Path, config: TableConfig) -> tuple[list[tuple], dict[str, str], ChangeFileError]:
    """(the good rows as typed, id -> the error of each row, the error the File Processor raises)."""
    source = SourceFile(uri=path.as_uri(), key=f"src/app/typed/{path.name}", order=0)
    frame = read_changes(spark, [source], config)
    errors = {row["id"]: row["_odp_error"] for row in frame.where("_odp_error IS NOT NULL").collect()}
    good = [tuple(row) for row in _typed(frame.where("_odp_error IS NULL")).collect()]
    with pytest.raises(ChangeFileError) as raised:
        first_error(frame, config.primary_key, [source])
    return good, errors, raised.value


def _core(message: str, place: str) -> str:
    assert message.startswith(f"{place}, "), message
    return message.removeprefix(f"{place}, ")


@pytest.mark.spark
def test_a_plain_file_refuses_the_same_values_with_the_same_message(spark, tmp_path: Path) -> None:
    config = _config(SourceFormat.FILES)
    header = ",".join(COLUMNS) + "\n"
    for key in BAD:
        path = tmp_path / f"{key}.csv"
        item = next(item for item in _items() if item["id"] == key)
        path.write_text(
            header + ",".join(str(GOOD[c]) for c in COLUMNS) + "\n" + ",".join(str(item[c]) for c in COLUMNS)
        )
        source = SourceFile(uri=path.as_uri(), key=f"src/app/typed/{path.name}", order=0)
        with pytest.raises(ChangeFileError) as raised:
            read_changes(spark, [source], config)
        assert str(raised.value) == f"src/app/typed/{key}.csv: row id='{key}', {BAD[key][2]}"
    good = tmp_path / "good.csv"
    good.write_text(header + ",".join(str(GOOD[c]) for c in COLUMNS) + "\n")
    frame = read_changes(spark, [SourceFile(uri=good.as_uri(), key="src/app/typed/good.csv", order=0)], config)
    assert [tuple(row) for row in _typed(frame).collect()] == [EXPECTED]


@pytest.mark.spark
def test_a_file_and_a_stream_refuse_the_same_values_with_the_same_message(spark, tmp_path: Path) -> None:
    documents = [change("INSERT", "typed", item, ms=index) for index, item in enumerate(_items())]

    # The file path: the documents as a landed DynamoDB JSON-lines file, and their values as a DMS CSV file.
    json_file = tmp_path / "stream.json"
    json_file.write_text("\n".join(json.dumps(document) for document in documents) + "\n")
    json_good, json_errors, json_raised = _file_errors(spark, json_file, _config())
    csv_file = tmp_path / "20260101-1.csv"
    csv_file.write_text("".join("I," + ",".join(str(item[c]) for c in COLUMNS) + "\n" for item in _items()))
    csv_good, csv_errors, csv_raised = _file_errors(spark, csv_file, _config(SourceFormat.DMS))

    # The stream path: the same documents as one micro-batch of Kinesis records, one shard.
    target = StreamTarget(
        stream=STREAM,
        tables=(_config(),),
        raw_root=f"file://{tmp_path / 'raw'}",
        error_root=f"file://{tmp_path / 'errors'}",
        profile=WriteProfile(HudiProfile.LOCAL),
    )
    sequences = {document["dynamodb"]["NewImage"]["id"]["S"]: str(100 + i) for i, document in enumerate(documents)}
    records = spark.createDataFrame(
        [(json.dumps(d), sequences[d["dynamodb"]["NewImage"]["id"]["S"]], SHARD) for d in documents],
        "data string, sequence_number string, shard string",
    )
    outcome = process_micro_batch(spark, records, f"stream:{STREAM}:q:0", target)
    bad_records = [
        json.loads(line)
        for path in sorted((tmp_path / "errors" / STREAM / "bad_records").rglob("*.json"))
        for line in path.read_text().splitlines()
    ]
    stream_errors = {json.loads(r["data"])["dynamodb"]["NewImage"]["id"]["S"]: r["reason"] for r in bad_records}

    assert (outcome.records, outcome.bad_records) == (1 + len(BAD), len(BAD))
    assert [t.status for t in outcome.tables] == [RunStatus.COMPLETED]
    rows = {key: index + 1 for index, key in enumerate(item["id"] for item in _items())}
    for key, (_, _, core) in BAD.items():
        assert _core(json_errors[key], f"row {rows[key]}") == core
        assert _core(csv_errors[key], f"row {rows[key]}") == core
        assert _core(stream_errors[key], f"shard {SHARD} sequence {sequences[key]}") == core
    assert sorted(json_errors) == sorted(csv_errors) == sorted(stream_errors) == sorted(BAD)
    # The File Processor's error for the file: its key, the first bad row, the same core.
    assert str(json_raised) == f"src/app/typed/stream.json: row 2, {BAD['b1'][2]}"
    assert str(csv_raised) == f"src/app/typed/20260101-1.csv: row 2, {BAD['b1'][2]}"

    # The good values: typed the same by both readers and stored the same from the stream, nothing rounded.
    stored = [tuple(row) for row in _typed(spark.read.format("hudi").load(target.base_path(_config()))).collect()]
    assert json_good == csv_good == stored == [EXPECTED]
