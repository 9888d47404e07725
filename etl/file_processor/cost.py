"""What each table run costs: wall seconds and its share of the job's DPU-seconds, as CloudWatch metrics per
cadence (per table when the cadence's ``table_metrics`` asks) and one JSON log line per table.

A Glue run is billed for its DPUs over its whole duration. Tables running at once share the job's
workers, so a table's share is ``seconds x job DPUs / tables running at once``; summed over a batch it
is the job's DPU-seconds less the time no table ran (start-up, the last table alone on its workers).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
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


def _dimensions(cadence: str, table_id: str | None = None) -> list[dict[str, str]]:
    dimensions = [{"Name": CADENCE_DIMENSION, "Value": cadence}]
    return [*dimensions, {"Name": TABLE_DIMENSION, "Value": table_id}] if table_id is not None else dimensions


def _statistics(values: Sequence[float]) -> dict[str, float]:
    return {
        "SampleCount": float(len(values)),
        "Sum": float(sum(values)),
        "Minimum": min(values),
        "Maximum": max(values),
    }


def cost_metric_data(
    cadence: str,
    costs: Sequence[tuple[str, float, float | None]],
    ignored: Sequence[tuple[str, int]] = (),
    *,
    per_table: bool = False,
) -> list[dict[str, Any]]:
    """Pure: PutMetricData entries for (table id, seconds, DPU-seconds) of each table run, and (table id, values)
    of each run that dropped values under ``new_columns: ignore`` (``IgnoredColumnValues``).

    By default one entry per metric for the whole run, with the cadence as its only dimension (statistic sets: the
    tables' count, sum, minimum and maximum): three custom metrics per cadence whatever the fleet. ``per_table``
    (the cadence's ``table_metrics``) adds one entry per table and metric with the table as a dimension.
    """
    series: list[tuple[str, str, list[tuple[str, float]]]] = [
        (IGNORED_VALUES_METRIC, "Count", [(table_id, float(values)) for table_id, values in ignored]),
        (TABLE_SECONDS_METRIC, "Seconds", [(table_id, seconds) for table_id, seconds, _ in costs]),
        (TABLE_DPU_SECONDS_METRIC, "None", [(table_id, dpu) for table_id, _, dpu in costs if dpu is not None]),
    ]
    data: list[dict[str, Any]] = []
    for name, unit, points in series:
        if not points:
            continue
        data.append(
            {
                "MetricName": name,
                "Dimensions": _dimensions(cadence),
                "StatisticValues": _statistics([value for _, value in points]),
                "Unit": unit,
            }
        )
        if per_table:
            data += [
                {"MetricName": name, "Dimensions": _dimensions(cadence, table_id), "Value": value, "Unit": unit}
                for table_id, value in points
            ]
    return data


def log_costs(
    cadence: str,
    costs: Sequence[tuple[str, float, float | None]],
    steps: Mapping[str, Mapping[str, float]] | None = None,
) -> None:
    """Each table run's cost as one JSON log line (``table_cost``): the per-table figures without a metric each, with
    where the run's time went when ``steps`` has it (table id -> ``TableRun.step_seconds``)."""
    for table_id, seconds, dpu_seconds in costs:
        record = {"event": "table_cost", "cadence": cadence, "table_id": table_id, "seconds": seconds}
        where = (steps or {}).get(table_id)
        logger.info(json.dumps({**record, "dpu_seconds": dpu_seconds, **({"step_seconds": where} if where else {})}))


def publish_costs(
    cloudwatch: Any,
    cadence: str,
    costs: Sequence[tuple[str, float, float | None]],
    *,
    ignored: Sequence[tuple[str, int]] = (),
    per_table: bool = False,
    steps: Mapping[str, Mapping[str, float]] | None = None,
) -> None:
    """Log each table run's cost (and ``steps``, where its time went) and send the run's cost metrics to CloudWatch
    (per table too with ``per_table``). A failure is logged, never raised: the tables are done."""
    log_costs(cadence, costs, steps)
    send_metric_data(cloudwatch, cost_metric_data(cadence, costs, ignored, per_table=per_table), what="table cost")


def send_metric_data(cloudwatch: Any, data: Sequence[dict[str, Any]], *, what: str) -> None:
    """PutMetricData of ``data`` in ODP's namespace, in calls of at most _BATCH entries. A failure is logged (naming
    ``what``), never raised: the work the metrics describe is done."""
    try:
        for start in range(0, len(data), _BATCH):
            cloudwatch.put_metric_data(Namespace=NAMESPACE, MetricData=list(data[start : start + _BATCH]))
    except (ClientError, BotoCoreError) as error:
        logger.warning("%s metrics not published (%d data points): %s", what, len(data), error)
