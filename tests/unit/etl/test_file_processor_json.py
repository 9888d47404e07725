"""Debezium (MERGE_ON_READ) and DynamoDB-stream (COPY_ON_WRITE) tables from the published samples."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from odp.config.models import SourceFormat, TableConfig, TableType
from odp.tracker import RunStatus
from tests.support.lake import Lake, hudi_rs_rows, rows_of, small_table_config
from tests.support.stream_records import kinesis_sample, with_precision

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
        small_table_config(
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


def dynamodb_table(lake: Lake, name: str, columns: dict[str, str]) -> TableConfig:
    """A configured DynamoDB table keyed by ``id``."""
    return lake.configure(
        small_table_config(
            name, source_format=SourceFormat.DYNAMODB, ordering_column=None, primary_key=("id",), columns=columns
        )
    )


@pytest.mark.spark
def test_dynamodb_stream_records_copy_on_write(spark, lake: Lake, samples_dir: Path) -> None:
    config = dynamodb_table(
        lake,
        "orders",
        {
            "id": "string",
            "data": "string",
            "amount": "decimal(12,2)",
            "qty": "bigint",
            "gift": "boolean",
            "tags": "string",
        },
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


@pytest.mark.spark
def test_firehose_file_of_microsecond_records_applies_in_event_order(spark, lake: Lake, samples_dir: Path) -> None:
    """DynamoDB's default Kinesis precision (MICROSECOND), as a Firehose delivery stream lands it: records back
    to back in an extension-less object, not in event order. No published record declares a precision: these
    are the published Kinesis sample's records with ``ApproximateCreationDateTimePrecision`` set, in microseconds.
    Two changes of the first item fall in one millisecond, the later one first in the file: the microseconds,
    not the row, decide.
    """
    config = dynamodb_table(lake, "items", {"id": "string", "data": "string"})
    first, second = kinesis_sample(samples_dir)
    base = 1772352000000000  # 2026-03-01T00:00:00Z in microseconds

    def at(record: dict, micros: int, event: str = "INSERT", data: str | None = None) -> dict:
        changed = with_precision(record, "MICROSECOND", base + micros)
        changed["eventName"] = event
        if data is not None:
            changed["dynamodb"]["NewImage"]["data"] = {"S": data}
        if event == "REMOVE":
            changed["dynamodb"]["OldImage"] = changed["dynamodb"].pop("NewImage")
        return changed

    file_order = [
        at(first, 2_000_500, "MODIFY", "latest"),  # the last change of the first item, first in the file
        at(first, 250),
        at(first, 1_000_750, "MODIFY", "older"),
        at(first, 2_000_100, "MODIFY", "same millisecond, earlier"),  # 400 µs before "latest", after it in the file
        at(second, 5_000_000, "REMOVE"),  # the second item's delete comes before its insert in the file
        at(second, 100),
    ]
    lake.land_text(config, "2026/03/01/00/items-1-2026-03-01-00-00-05-7f3c", "".join(map(json.dumps, file_order)))
    result = lake.run(spark, config.table_id).tables[0]
    assert result.status is RunStatus.COMPLETED, result.error
    assert rows_of(spark, result.base_path, ["id", "data"]) == [("record-1qit2y819gi", "latest")]
