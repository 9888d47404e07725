"""Readers on real files: DMS Parquet and CSV, Debezium and DynamoDB samples (no Hudi writes)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from etl.errors import ChangeFileError
from etl.readers import SourceFile, first_error, read_changes
from odp.config.models import SourceFormat
from tests.support.lake import table_config

DMS = pa.schema([("Op", pa.string()), ("SEQ", pa.string()), ("ID", pa.int32()), ("NAME", pa.string())])


def _parquet(path: Path, rows: list[dict], schema: pa.Schema = DMS) -> SourceFile:
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return path


def _source(path: Path, order: int, *, full_load: bool = False) -> SourceFile:
    return SourceFile(uri=path.as_uri(), key=f"src/app/t/{path.name}", order=order, is_full_load=full_load)


def _rows(frame, *columns: str) -> list[tuple]:
    return [tuple(r) for r in frame.orderBy("_odp_file_order", "_odp_row").select(*columns).collect()]


@pytest.mark.spark
def test_dms_parquet_load_without_op_and_cdc_with_upper_case_columns(spark, tmp_path: Path) -> None:
    load = _parquet(
        tmp_path / "LOAD00000001.parquet",
        [{"SEQ": None, "ID": 1, "NAME": "a"}, {"SEQ": None, "ID": 2, "NAME": "b"}],
        pa.schema([("SEQ", pa.string()), ("ID", pa.int32()), ("NAME", pa.string())]),
    )
    cdc = _parquet(
        tmp_path / "20260101-1.parquet",
        [{"Op": "U", "SEQ": "5", "ID": 1, "NAME": "a2"}, {"Op": "D", "SEQ": "6", "ID": 2, "NAME": "b"}],
    )
    config = table_config("t", columns={"id": "bigint", "name": "string", "seq": "string"})
    frame = read_changes(spark, [_source(load, 0, full_load=True), _source(cdc, 1)], config)
    first_error(frame, config.primary_key)
    assert _rows(frame, "_odp_op", "_odp_ordering", "_odp_file_order", "_odp_row", "id", "name") == [
        ("I", "", 0, 0, 1, "a"),
        ("I", "", 0, 1, 2, "b"),
        ("U", "5".rjust(35, "0"), 1, 0, 1, "a2"),
        ("D", "6".rjust(35, "0"), 1, 1, 2, "b"),
    ]
    assert dict(frame.dtypes)["id"] == "bigint"


@pytest.mark.spark
def test_dms_csv_with_and_without_op(spark, tmp_path: Path) -> None:
    (tmp_path / "LOAD00000001.csv").write_text("1,a,1\n2,b,1\n")
    (tmp_path / "20260101-1.csv").write_text("U,1,a2,2\nD,2,b,3\n")
    config = table_config("t", columns={"id": "int", "name": "string", "seq": "string"})
    frame = read_changes(
        spark,
        [_source(tmp_path / "LOAD00000001.csv", 0, full_load=True), _source(tmp_path / "20260101-1.csv", 1)],
        config,
    )
    assert _rows(frame, "_odp_op", "_odp_ordering", "id", "name") == [
        ("I", "1".rjust(35, "0"), 1, "a"),
        ("I", "1".rjust(35, "0"), 2, "b"),
        ("U", "2".rjust(35, "0"), 1, "a2"),
        ("D", "3".rjust(35, "0"), 2, "b"),
    ]


@pytest.mark.spark
@pytest.mark.parametrize(
    ("rows", "schema", "reason"),
    [
        ([{"Op": "X", "SEQ": "1", "ID": 1, "NAME": "a"}], DMS, "unknown Op 'X'"),
        ([{"Op": None, "SEQ": "1", "ID": 1, "NAME": "a"}], DMS, "missing Op"),
        ([{"Op": "I", "SEQ": "1", "ID": None, "NAME": "a"}], DMS, "null key column id"),
        ([{"SEQ": "1", "ID": 1}], pa.schema([("SEQ", pa.string()), ("ID", pa.int32())]), "missing Op column"),
        ([{"Op": "I", "ID": 1}], pa.schema([("Op", pa.string()), ("ID", pa.int32())]), "missing ordering column seq"),
        ([{"Op": "I", "SEQ": "1"}], pa.schema([("Op", pa.string()), ("SEQ", pa.string())]), "missing key column id"),
    ],
)
def test_dms_bad_input_names_file_and_reason(spark, tmp_path: Path, rows, schema, reason) -> None:
    path = _parquet(tmp_path / "20260101-9.parquet", rows, schema)

    def read_and_check() -> None:
        first_error(read_changes(spark, [_source(path, 0)], table_config("t")), ("id",))

    with pytest.raises(ChangeFileError) as raised:
        read_and_check()
    assert raised.value.file == "src/app/t/20260101-9.parquet"
    assert reason in str(raised.value)


@pytest.mark.spark
def test_unreadable_parquet_is_named(spark, tmp_path: Path) -> None:
    bad = tmp_path / "20260101-2.parquet"
    bad.write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(ChangeFileError, match=r"src/app/t/20260101-2.parquet: unreadable Parquet"):
        read_changes(spark, [_source(bad, 0)], table_config("t"))


@pytest.mark.spark
def test_debezium_sample_with_configured_columns(spark, samples_dir: Path) -> None:
    path = samples_dir / "debezium" / "debezium-postgres-data-schema-include.txt"
    config = table_config(
        "products",
        source_format=SourceFormat.DEBEZIUM,
        ordering_column=None,
        columns={"id": "int", "name": "string", "description": "string", "weight": "double"},
    )
    frame = read_changes(spark, [SourceFile(path.as_uri(), "inv/inventory/products/a.json", 0)], config)
    first_error(frame, ("id",))
    rows = _rows(frame, "_odp_op", "id", "weight")
    assert len(rows) == 16
    assert rows[0] == ("I", 101, 3.14)
    assert rows[-1] == ("D", 111, 5.17)
    assert dict(frame.dtypes)["id"] == "int"


@pytest.mark.spark
def test_json_that_does_not_parse_is_named(spark, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"op": "c", "after": {"id": 1}, "source": {"ts_ms": 1}}\n{"op": "c", "after": \n')
    config = table_config("products", source_format=SourceFormat.DEBEZIUM, ordering_column=None)
    frame = read_changes(spark, [SourceFile(bad.as_uri(), "inv/inventory/products/bad.json", 0)], config)
    with pytest.raises(
        ChangeFileError,
        match=r"^inv/inventory/products/bad.json: row 2: JSON does not parse: Expecting value \(char 78\)$",
    ):
        first_error(frame, ("id",))


@pytest.mark.spark
def test_dynamodb_kinesis_sample_without_configured_columns(spark, samples_dir: Path, tmp_path: Path) -> None:
    event = json.loads((samples_dir / "dynamodb-kinesis" / "dynamodb-stream.json").read_text())
    path = tmp_path / "stream.jsonl"
    path.write_text("\n".join(base64.b64decode(r["kinesis"]["data"]).decode() for r in event["Records"]) + "\n")
    config = table_config("orders", source_format=SourceFormat.DYNAMODB, ordering_column=None, primary_key=("id",))
    frame = read_changes(spark, [SourceFile(path.as_uri(), "ddb/app/orders/stream.jsonl", 0)], config)
    first_error(frame, ("id",))
    assert _rows(frame, "_odp_op", "id", "data") == [
        ("I", "record-1qit2y819gi", "data-x6aq7ckdpgk"),
        ("I", "record-fvxn3q4q5jw", "data-4eompjs89n5"),
    ]


@pytest.mark.spark
def test_a_corrupt_parquet_page_found_on_an_executor_names_its_file(spark, tmp_path: Path) -> None:
    rows = [{"Op": "I", "SEQ": str(i), "ID": i, "NAME": "x" * 50 + str(i)} for i in range(2000)]
    path = _parquet(tmp_path / "20260101-3.parquet", rows)
    body = bytearray(path.read_bytes())
    body[200:1200] = b"A" * 1000  # a data page: the footer still reads, the page does not decompress
    path.write_bytes(bytes(body))
    good = _parquet(tmp_path / "20260101-2.parquet", rows[:1])
    sources = [_source(good, 0), _source(path, 1)]
    frame = read_changes(spark, sources, table_config("t"))
    with pytest.raises(ChangeFileError) as raised:
        first_error(frame, ("id",), sources)
    assert (
        str(raised.value)
        == "src/app/t/20260101-3.parquet: unreadable Parquet: java.io.IOException: FAILED_TO_UNCOMPRESS(5)"
    )
