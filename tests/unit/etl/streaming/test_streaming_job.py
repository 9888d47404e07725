"""The streaming job's contract, its Glue options and its metrics; the Glue Kinesis rows' normalisation on Spark."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from etl.jobs.streaming_job import batch_options, kinesis_options
from etl.streaming.batch import BatchOutcome, stream_run
from etl.streaming.metrics import batch_metric_data
from etl.streaming.sources import KinesisSourceSchemaError, glue_kinesis_records
from odp.contracts.arguments import JobArgumentError
from odp.contracts.base import LedgerTables
from odp.contracts.streaming import StreamingJobArgs
from odp.tracker import RunStatus

ARGS = StreamingJobArgs(
    environment="dev",
    stream="shop_changes",
    stream_arn="arn:aws:kinesis:eu-west-1:111111111111:stream/odp-dev-shop_changes",
    table_ids=("shop_dynamodb.app.orders",),
    raw_root="s3://raw",
    error_root="s3://artifacts/streaming/errors",
    checkpoint_location="s3://artifacts/streaming/shop_changes/checkpoint/",
    table_config_table="odp-dev-table-config",
    ledger=LedgerTables("odp-dev-processing-tracker", "odp-dev-processing-tracker-history"),
    window_seconds=60,
)


def test_arguments_round_trip() -> None:
    assert StreamingJobArgs.from_arguments(ARGS.to_arguments()) == ARGS


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("odp_table_ids", "[]", "job argument --odp_table_ids must be a non-empty JSON list of table ids"),
        # odp_table_ids and the choices are declared once for every job (odp.contracts): the shared messages
        ("odp_table_ids", "orders", "job argument --odp_table_ids must be a JSON list of table ids, got 'orders'"),
        ("odp_window_seconds", "1.5", "job argument --odp_window_seconds must be a whole number of seconds, got '1.5'"),
        (
            "odp_starting_position",
            "AT_TIMESTAMP",
            "job argument --odp_starting_position must be TRIM_HORIZON or LATEST, got 'AT_TIMESTAMP'",
        ),
        ("odp_stream_arn", "", "job argument --odp_stream_arn is required"),
    ],
)
def test_a_bad_argument_is_named(name: str, value: str, message: str) -> None:
    arguments = {**ARGS.to_arguments(), f"--{name}": value}
    with pytest.raises(JobArgumentError) as caught:
        StreamingJobArgs.from_arguments(arguments)
    assert str(caught.value) == message


def test_glue_source_and_batch_options() -> None:
    assert kinesis_options(ARGS) == {
        "typeOfData": "kinesis",
        "streamARN": "arn:aws:kinesis:eu-west-1:111111111111:stream/odp-dev-shop_changes",
        "startingPosition": "TRIM_HORIZON",
        "emitConsumerLagMetrics": "true",
    }
    assert batch_options(ARGS) == {
        "windowSize": "60 seconds",
        "checkpointLocation": "s3://artifacts/streaming/shop_changes/checkpoint/",
    }


def test_batch_metrics() -> None:
    outcome = BatchOutcome(
        "stream:shop_changes:q:7",
        records=12,
        bad_records=2,
        duplicates=1,
        seconds=4.5,
        tables=[
            stream_run(
                "a", "t", "2026-01-01T00:00:00Z", RunStatus.COMPLETED, ignored_columns=("color",), ignored_values=3
            ),
            stream_run("b", "t", "2026-01-01T00:00:00Z", RunStatus.FAILED, error="x"),
        ],
    )
    dimensions = [{"Name": "stream", "Value": "shop_changes"}]
    assert batch_metric_data("shop_changes", outcome) == [
        {"MetricName": "BatchSeconds", "Dimensions": dimensions, "Value": 4.5, "Unit": "Seconds"},
        {"MetricName": "Records", "Dimensions": dimensions, "Value": 12.0, "Unit": "Count"},
        {"MetricName": "BadRecords", "Dimensions": dimensions, "Value": 2.0, "Unit": "Count"},
        {"MetricName": "FailedTables", "Dimensions": dimensions, "Value": 1.0, "Unit": "Count"},
        {"MetricName": "IgnoredColumnValues", "Dimensions": dimensions, "Value": 3.0, "Unit": "Count"},
    ]


# The columns of an unparsed Kinesis record (awslabs/spark-sql-kinesis-connector, "Check Schema").
KINESIS_ROW = (
    "data binary, streamName string, partitionKey string, sequenceNumber string, approximateArrivalTimestamp timestamp"
)


@pytest.mark.spark
def test_glue_kinesis_rows_become_data_sequence_and_shard(spark: Any) -> None:
    document = {"eventName": "INSERT", "tableName": "orders"}
    data = json.dumps(document).encode()
    arrived = datetime(2026, 1, 1, tzinfo=UTC)
    frame = spark.createDataFrame([(bytearray(data), "odp-dev-shop_changes", "k", "4965", arrived)], KINESIS_ROW)

    rows = glue_kinesis_records(frame, "shop_changes").collect()

    assert [tuple(row) for row in rows] == [(data.decode(), "4965", "shop_changes")]


@pytest.mark.spark
def test_parsed_kinesis_rows_are_refused_naming_the_columns(spark: Any) -> None:
    frame = spark.createDataFrame([("INSERT", "orders")], "eventName string, tableName string")
    with pytest.raises(KinesisSourceSchemaError) as caught:
        glue_kinesis_records(frame, "shop_changes")
    assert "no 'data' column (columns: eventName, tableName)" in str(caught.value)
