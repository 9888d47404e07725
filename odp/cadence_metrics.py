"""A cadence's CloudWatch metrics of one plan and its outcome (pure), whoever runs the cadence.

A scheduled cadence's Batch Manager publishes them through Powertools (EMF, lambdas/batch_manager/manager.py); a warm
run publishes the same after each tick with PutMetricData (etl/file_processor/warm.py). The freshness alarm
(``OldestPendingFileAgeSeconds``, missing data breaching) and the failure alarms (infrastructure/operations/
monitoring.py) then see both modes alike. The names and the dimension are odp.contracts.metrics'.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from odp.cadence_plan import PendingTotals
from odp.contracts.metrics import (
    BATCHES_METRIC,
    CADENCE_DIMENSION,
    FAILED_BATCHES_METRIC,
    FAILED_TABLES_METRIC,
    FRESHNESS_METRIC,
    LEASED_TABLES_SKIPPED_METRIC,
    PENDING_BYTES_METRIC,
    PENDING_FILES_METRIC,
    QUARANTINED_METRIC,
    TABLES_WITH_PENDING_FILES_METRIC,
)


@dataclass(frozen=True)
class CadenceMetric:
    """One data point of a cadence: ``unit`` is CloudWatch's unit name (Powertools' ``MetricUnit`` values are the
    same names)."""

    name: str
    unit: str
    value: float


def plan_metrics(totals: PendingTotals, *, leased: int, runs: int) -> list[CadenceMetric]:
    """What a plan found: pending files, bytes, the oldest pending file's age (the freshness alarm's), the tables
    with pending files, the leased tables left out, and the runs planned."""
    return [
        CadenceMetric(PENDING_FILES_METRIC, "Count", totals.files),
        CadenceMetric(PENDING_BYTES_METRIC, "Bytes", totals.bytes),
        CadenceMetric(FRESHNESS_METRIC, "Seconds", totals.oldest_age_seconds),
        CadenceMetric(TABLES_WITH_PENDING_FILES_METRIC, "Count", totals.tables),
        CadenceMetric(LEASED_TABLES_SKIPPED_METRIC, "Count", leased),
        CadenceMetric(BATCHES_METRIC, "Count", runs),
    ]


def outcome_metrics(*, failed_tables: int, failed_runs: int, quarantined_files: int) -> list[CadenceMetric]:
    """What the planned runs did: failed tables, failed runs (a Glue run that ended before recording its tables;
    a warm tick's runs share its JVM, so none) and the files they quarantined."""
    return [
        CadenceMetric(FAILED_TABLES_METRIC, "Count", failed_tables),
        CadenceMetric(FAILED_BATCHES_METRIC, "Count", failed_runs),
        CadenceMetric(QUARANTINED_METRIC, "Count", quarantined_files),
    ]


def metric_data(cadence: str, metrics: Iterable[CadenceMetric]) -> list[dict[str, Any]]:
    """PutMetricData entries of ``metrics`` with the cadence as their dimension (as the Batch Manager's EMF)."""
    dimensions = [{"Name": CADENCE_DIMENSION, "Value": cadence}]
    return [
        {"MetricName": metric.name, "Dimensions": dimensions, "Value": float(metric.value), "Unit": metric.unit}
        for metric in metrics
    ]
