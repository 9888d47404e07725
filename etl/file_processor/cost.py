"""What each table run costs: wall seconds and its share of the job's DPU-seconds, as CloudWatch metrics.

A Glue run is billed for its DPUs over its whole duration. Tables running at once share the job's
workers, so a table's share is ``seconds x job DPUs / tables running at once``; summed over a batch it
is the job's DPU-seconds less the time no table ran (start-up, the last table alone on its workers).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from odp.contracts.metrics import (
    CADENCE_DIMENSION,
    IGNORED_VALUES_METRIC,
    NAMESPACE,
    TABLE_DIMENSION,
    TABLE_DPU_SECONDS_METRIC,
    TABLE_SECONDS_METRIC,
)

logger = logging.getLogger(__name__)
_BATCH = 500  # PutMetricData takes up to 1,000 metric data points per call


def dpu_seconds_share(seconds: float, *, job_dpus: float, concurrency: int) -> float | None:
    """Pure: a table run's share of the job's DPU-seconds, or None when the job's DPUs are unknown (0)."""
    if job_dpus <= 0:
        return None
    return round(seconds * job_dpus / max(1, concurrency), 3)


def _dimensions(cadence: str, table_id: str) -> list[dict[str, str]]:
    return [{"Name": CADENCE_DIMENSION, "Value": cadence}, {"Name": TABLE_DIMENSION, "Value": table_id}]


def cost_metric_data(
    cadence: str, costs: Sequence[tuple[str, float, float | None]], ignored: Sequence[tuple[str, int]] = ()
) -> list[dict[str, Any]]:
    """Pure: PutMetricData entries for (table id, seconds, DPU-seconds) of each table run, and (table id, values)
    of each run that dropped values under ``new_columns: ignore`` (``IgnoredColumnValues``)."""
    data: list[dict[str, Any]] = []
    for table_id, values in ignored:
        data.append(
            {
                "MetricName": IGNORED_VALUES_METRIC,
                "Dimensions": _dimensions(cadence, table_id),
                "Value": float(values),
                "Unit": "Count",
            }
        )
    for table_id, seconds, dpu_seconds in costs:
        dimensions = _dimensions(cadence, table_id)
        data.append({"MetricName": TABLE_SECONDS_METRIC, "Dimensions": dimensions, "Value": seconds, "Unit": "Seconds"})
        if dpu_seconds is not None:
            data.append(
                {"MetricName": TABLE_DPU_SECONDS_METRIC, "Dimensions": dimensions, "Value": dpu_seconds, "Unit": "None"}
            )
    return data


def publish_costs(
    cloudwatch: Any,
    cadence: str,
    costs: Sequence[tuple[str, float, float | None]],
    *,
    ignored: Sequence[tuple[str, int]] = (),
) -> None:
    """Send the table runs' costs (and ignored column values) to CloudWatch. A failure is logged, never raised:
    the tables are done."""
    data = cost_metric_data(cadence, costs, ignored)
    try:
        for start in range(0, len(data), _BATCH):
            cloudwatch.put_metric_data(Namespace=NAMESPACE, MetricData=data[start : start + _BATCH])
    except (ClientError, BotoCoreError) as error:
        logger.warning("table cost metrics not published (%d data points): %s", len(data), error)
