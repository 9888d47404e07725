"""Columns outside a table's configured ``columns``: new_columns add | refuse | ignore, one rule for every format.

Golden runs of the File Processor on real Spark + Hudi (the shared ``spark`` fixture), read back by Spark and by
hudi-rs. Before ``new_columns`` a DynamoDB attribute outside ``columns`` was dropped without a trace, while a
Parquet column outside them was added.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest

from odp.config.models import NewColumns, SourceFormat, TableConfig
from odp.tracker import RunStatus
from tests.support.lake import Lake, hudi_rs_rows, rows_of, small_table_config

MS = 1764000000000  # 2025-11-24, inside any run's horizon
DYNAMODB_COLUMNS = {"id": "string", "name": "string"}


def _record(event: str, item: dict[str, Any], ms: int) -> dict[str, Any]:
    image = "OldImage" if event == "REMOVE" else "NewImage"
    return {
        "eventName": event,
        "dynamodb": {"ApproximateCreationDateTime": ms, "Keys": {"id": item["id"]}, image: item},
    }


RECORDS = [
    _record("INSERT", {"id": {"S": "a"}, "name": {"S": "first"}}, MS),
    # the second record carries two attributes the table does not declare: a number and a nested map
    _record(
        "INSERT",
        {"id": {"S": "b"}, "name": {"S": "second"}, "stock": {"N": "7"}, "dims": {"M": {"w": {"N": "2"}}}},
        MS + 1,
    ),
    _record("MODIFY", {"id": {"S": "a"}, "name": {"S": "first, renamed"}, "stock": {"N": "3"}}, MS + 2),
]
FILE = "2026/01/01/items-1.jsonl"


def _dynamodb(lake: Lake, rule: NewColumns | None) -> TableConfig:
    settings = {} if rule is None else {"new_columns": rule}
    return lake.configure(
        small_table_config(
            "items", source_format=SourceFormat.DYNAMODB, ordering_column=None, columns=DYNAMODB_COLUMNS, **settings
        )
    )


def _history(lake: Lake, table_id: str) -> list[dict[str, Any]]:
    items = lake.tables["processing_tracker_history"].scan()["Items"]
    return [item for item in items if item["table_id"] == table_id]


@pytest.mark.spark
def test_dynamodb_attributes_outside_columns_are_added_by_default(spark, lake: Lake) -> None:
    config = _dynamodb(lake, None)
    assert config.new_columns is NewColumns.ADD
    lake.land_json_lines(config, FILE, RECORDS)
    run = lake.run(spark, config.table_id).tables[0]
    assert run.status is RunStatus.COMPLETED, run.error
    expected = [("a", "first, renamed", 3, None), ("b", "second", 7, '{"w":2}')]  # M flattened to JSON text
    assert rows_of(spark, run.base_path, ["id", "name", "stock", "dims"]) == expected
    assert hudi_rs_rows(run.base_path, ["id", "name", "stock", "dims"]) == expected
    assert dict(spark.read.format("hudi").load(run.base_path).dtypes)["stock"] == "bigint"
    assert run.ignored_columns == ()
    assert run.ignored_values == 0


@pytest.mark.spark
def test_dynamodb_attribute_outside_columns_refuses_the_file(spark, lake: Lake) -> None:
    config = _dynamodb(lake, NewColumns.REFUSE)
    lake.land_json_lines(config, FILE, RECORDS)
    run = lake.run(spark, config.table_id).tables[0]
    key = f"{config.staging_prefix}{FILE}"
    # a refusal is deterministic: the file is quarantined at its first failure, the table's run goes on
    assert run.status is RunStatus.COMPLETED, run.error
    assert run.quarantined_files == (key,)
    [quarantined] = lake.quarantined(config.table_id)
    assert (
        f"{key}: row 2, attribute dims is not in the table's columns (new_columns: refuse): declare it in columns, "
        "or set new_columns to add or ignore"
    ) in quarantined.last_error
    assert lake.landed(config.table_id) == []  # nothing applied; the file waits in quarantine for a release


@pytest.mark.spark
def test_dynamodb_attributes_outside_columns_ignored_are_logged_and_counted(spark, lake: Lake, caplog) -> None:
    config = _dynamodb(lake, NewColumns.IGNORE)
    lake.land_json_lines(config, FILE, RECORDS)
    run = lake.run(spark, config.table_id).tables[0]
    assert run.status is RunStatus.COMPLETED, run.error
    assert rows_of(spark, run.base_path, ["id", "name"]) == [("a", "first, renamed"), ("b", "second")]
    stored = spark.read.format("hudi").load(run.base_path).columns
    assert not {"stock", "dims", "_odp_dropped"} & set(stored)
    assert run.ignored_columns == ("dims", "stock")
    assert run.ignored_values == 3  # stock and dims of b, stock of a
    [history] = _history(lake, config.table_id)
    assert history["ignored_columns"] == ["dims", "stock"]
    assert int(history["ignored_values"]) == 3
    assert f"{config.staging_prefix}{FILE}: dropped column(s) outside the table's columns" in caplog.text


PARQUET_SCHEMA = pa.schema(
    [("Op", pa.string()), ("seq", pa.int64()), ("id", pa.int64()), ("name", pa.string()), ("color", pa.string())]
)
PARQUET_ROWS = [
    {"Op": "I", "seq": 1, "id": 1, "name": "one", "color": "red"},
    {"Op": "I", "seq": 2, "id": 2, "name": "two", "color": None},
]


def _dms(lake: Lake, rule: NewColumns) -> TableConfig:
    columns = {"seq": "bigint", "id": "bigint", "name": "string"}
    return lake.configure(small_table_config("parts", columns=columns, new_columns=rule))


@pytest.mark.spark
def test_parquet_column_outside_columns_refuses_the_file(spark, lake: Lake) -> None:
    config = _dms(lake, NewColumns.REFUSE)
    lake.land_parquet(config, "20260101-000001.parquet", PARQUET_ROWS, PARQUET_SCHEMA)
    run = lake.run(spark, config.table_id).tables[0]
    key = f"{config.staging_prefix}20260101-000001.parquet"
    assert run.status is RunStatus.COMPLETED, run.error  # the file is quarantined at its first failure
    assert run.quarantined_files == (key,)
    [quarantined] = lake.quarantined(config.table_id)
    assert f"{key}: column color is not in the table's columns (new_columns: refuse)" in quarantined.last_error


@pytest.mark.spark
def test_parquet_column_outside_columns_ignored_is_counted(spark, lake: Lake) -> None:
    config = _dms(lake, NewColumns.IGNORE)
    lake.land_parquet(config, "20260101-000001.parquet", PARQUET_ROWS, PARQUET_SCHEMA)
    run = lake.run(spark, config.table_id).tables[0]
    assert run.status is RunStatus.COMPLETED, run.error
    assert rows_of(spark, run.base_path, ["id", "name"]) == [(1, "one"), (2, "two")]
    assert hudi_rs_rows(run.base_path, ["id", "name"]) == [(1, "one"), (2, "two")]
    assert "color" not in spark.read.format("hudi").load(run.base_path).columns
    assert (run.ignored_columns, run.ignored_values) == (("color",), 2)  # a value per row, NULL or not


@pytest.mark.spark
def test_plain_json_field_outside_columns_refuses_the_file(spark, lake: Lake) -> None:
    refused = lake.configure(
        small_table_config(
            "drops",
            source_format=SourceFormat.FILES,
            ordering_column=None,
            columns={"id": "bigint", "name": "string"},
            new_columns=NewColumns.REFUSE,
        )
    )
    lake.land_text(refused, "drop-1.json", json.dumps({"id": 1, "name": "x", "extra": True}) + "\n")
    run = lake.run(spark, refused.table_id).tables[0]
    key = f"{refused.staging_prefix}drop-1.json"
    assert run.status is RunStatus.COMPLETED, run.error  # the file is quarantined at its first failure
    assert run.quarantined_files == (key,)
    [quarantined] = lake.quarantined(refused.table_id)
    assert f"{key}: column extra is not in the table's columns" in quarantined.last_error


@pytest.mark.spark
def test_debezium_field_outside_columns_is_added_by_default(spark, lake: Lake) -> None:
    config = lake.configure(
        small_table_config(
            "people",
            source_format=SourceFormat.DEBEZIUM,
            ordering_column=None,
            columns={"id": "int", "name": "string"},
        )
    )
    events = [
        {"op": "c", "after": {"id": 1, "name": "Ann"}, "source": {"ts_ms": MS, "lsn": 1}},
        {"op": "u", "after": {"id": 1, "name": "Ann", "city": "Ghent"}, "source": {"ts_ms": MS + 1, "lsn": 2}},
    ]
    lake.land_json_lines(config, "dbz.people+0+0000000000.json", events)
    run = lake.run(spark, config.table_id).tables[0]
    assert run.status is RunStatus.COMPLETED, run.error
    assert rows_of(spark, run.base_path, ["id", "name", "city"]) == [(1, "Ann", "Ghent")]
    assert hudi_rs_rows(run.base_path, ["id", "name", "city"]) == [(1, "Ann", "Ghent")]
