"""The streaming job's CloudWatch metrics of one micro-batch (pure: the job sends them with put_metric_data)."""

from __future__ import annotations

from typing import Any

from etl.streaming.batch import BatchOutcome
from odp.contracts.metrics import (
    BAD_RECORDS_METRIC,
    BATCH_SECONDS_METRIC,
    FAILED_TABLES_METRIC,
    IGNORED_VALUES_METRIC,
    RECORDS_METRIC,
    STREAM_DIMENSION,
)


def batch_metric_data(stream: str, outcome: BatchOutcome) -> list[dict[str, Any]]:
    """MetricData of one batch: its duration, records, bad records, failed tables and the values dropped under
    ``new_columns: ignore``, by stream."""
    dimensions = [{"Name": STREAM_DIMENSION, "Value": stream}]
    values = (
        (BATCH_SECONDS_METRIC, outcome.seconds, "Seconds"),
        (RECORDS_METRIC, outcome.records, "Count"),
        (BAD_RECORDS_METRIC, outcome.bad_records, "Count"),
        (FAILED_TABLES_METRIC, len(outcome.failed), "Count"),
        (IGNORED_VALUES_METRIC, outcome.ignored_values, "Count"),
    )
    return [
        {"MetricName": name, "Dimensions": dimensions, "Value": float(value), "Unit": unit}
        for name, value, unit in values
    ]
