"""Debezium (MERGE_ON_READ) and DynamoDB-stream (COPY_ON_WRITE) tables from the published samples."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from odp.config.models import SourceFormat, TableType
from odp.tracker import RunStatus
from tests.support.lake import Lake, hudi_rs_rows, rows_of, table_config

PRODUCTS = [
    (101, "Small 2-wheel scooter", 3.14),
    (102, "12V car battery", 8.1),
    (103, "12-pack of drill bits with sizes ranging from #40 to #3", 0.8),
    (104, "12oz carpenter's hammer", 0.75),
    (105, "14oz carpenter's hammer", 0.875),
    (106, "18oz carpenter hammer", 1.0),
    (107, "box of assorted rocks", 5.1),
    (108, "water resistent black wind breaker", 0.1),
    (109, "24 inch spare tire", 22.2),
    (110, "new water resistent white wind breaker", 0.5),
]


@pytest.mark.spark
def test_debezium_merge_on_read_with_late_file(spark, lake: Lake, samples_dir: Path) -> None:
    config = lake.configure(
        table_config(
            "products",
            source_format=SourceFormat.DEBEZIUM,
            ordering_column=None,
            table_type=TableType.MERGE_ON_READ,
            columns={"id": "int", "name": "string", "description": "string", "weight": "double"},
        )
    )
    sample = (samples_dir / "debezium" / "debezium-postgres-data-schema-include.txt").read_text()
    lake.land_text(config, "inventory.products+0+0000000000.json", sample + "null\n")
    first = lake.run(spark, config.table_id).tables[0]
    assert first.status is RunStatus.COMPLETED, first.error
    assert first.rows == 16
    assert rows_of(spark, first.base_path, ["id", "description", "weight"]) == PRODUCTS
    # The MySQL sample has the same changes with older source.ts_ms: late data, nothing may change.
    late = (samples_dir / "debezium" / "debezium-data-schema-exclude.txt").read_text()
    lake.land_text(config, "inventory.products+0+0000000016.json", late)
    second = lake.run(spark, config.table_id).tables[0]
    assert second.status is RunStatus.COMPLETED, second.error
    assert rows_of(spark, second.base_path, ["id", "description", "weight"]) == PRODUCTS  # snapshot of MOR: merged


@pytest.mark.spark
def test_dynamodb_stream_records_copy_on_write(spark, lake: Lake, samples_dir: Path) -> None:
    config = lake.configure(
        table_config(
            "orders",
            source_format=SourceFormat.DYNAMODB,
            ordering_column=None,
            primary_key=("id",),
            columns={
                "id": "string",
                "data": "string",
                "amount": "decimal(12,2)",
                "qty": "bigint",
                "gift": "boolean",
                "tags": "string",
            },
        )
    )
    event = json.loads((samples_dir / "dynamodb-kinesis" / "dynamodb-stream.json").read_text())
    lines = [base64.b64decode(r["kinesis"]["data"]).decode() for r in event["Records"]]
    ms = 1731924555370
    changes = [
        {
            "eventName": "MODIFY",
            "dynamodb": {
                "ApproximateCreationDateTime": ms + 5,
                "Keys": {"id": {"S": "record-1qit2y819gi"}},
                "NewImage": {
                    "id": {"S": "record-1qit2y819gi"},
                    "data": {"S": "changed"},
                    "amount": {"N": "12.50"},
                    "qty": {"N": "3"},
                    "gift": {"BOOL": True},
                    "tags": {"SS": ["a", "b"]},
                },
            },
        },
        {
            "eventName": "REMOVE",
            "dynamodb": {
                "ApproximateCreationDateTime": ms + 6,
                "Keys": {"id": {"S": "record-fvxn3q4q5jw"}},
                "OldImage": {"id": {"S": "record-fvxn3q4q5jw"}, "data": {"S": "data-4eompjs89n5"}},
            },
        },
        {
            "eventName": "INSERT",
            "dynamodb": {
                "ApproximateCreationDateTime": (ms + 7) / 1000,
                "Keys": {"id": {"S": "new"}},
                "NewImage": {"id": {"S": "new"}, "data": {"NULL": True}, "qty": {"N": "1"}},
            },
        },
    ]
    lake.land_text(config, "2026/01/01/stream-1.jsonl", "\n".join(lines) + "\n")
    lake.land_json_lines(config, "2026/01/01/stream-2.jsonl", changes)
    result = lake.run(spark, config.table_id).tables[0]
    assert result.status is RunStatus.COMPLETED, result.error
    columns = ["id", "data", "amount", "qty", "gift", "tags"]
    from decimal import Decimal

    expected = [
        ("new", None, None, 1, None, None),
        ("record-1qit2y819gi", "changed", Decimal("12.50"), 3, True, '["a","b"]'),
    ]
    assert rows_of(spark, result.base_path, columns) == expected
    assert hudi_rs_rows(result.base_path, ["id", "data", "qty"]) == [
        ("new", None, 1),
        ("record-1qit2y819gi", "changed", 3),
    ]
