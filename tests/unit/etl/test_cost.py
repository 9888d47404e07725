"""A table run's share of the job's DPU-seconds and the metrics that carry it."""

from __future__ import annotations

import json
import logging

import boto3
from botocore.exceptions import ClientError

from etl.file_processor.cost import cost_metric_data, dpu_seconds_share, publish_costs
from odp.config.models import Cadence, GlueWorkerType


def test_a_table_holds_the_jobs_dpus_divided_by_the_tables_running_with_it() -> None:
    assert dpu_seconds_share(30.0, job_dpus=10, concurrency=1) == 300.0
    assert dpu_seconds_share(30.0, job_dpus=10, concurrency=4) == 75.0
    assert dpu_seconds_share(1.0, job_dpus=2, concurrency=3) == 0.667
    assert dpu_seconds_share(30.0, job_dpus=0, concurrency=4) is None  # DPUs unknown (a local run)
    cadence = Cadence(schedule="rate(10 minutes)", batch_size=5, worker_type=GlueWorkerType.G_2X, number_of_workers=10)
    assert cadence.job_dpus == 20.0
    assert cadence.table_concurrency == 4


def test_by_default_a_run_sends_one_statistic_set_per_metric_with_the_cadence_only() -> None:
    """Three custom metrics per cadence however many tables: count, sum, minimum and maximum of the run's tables."""
    data = cost_metric_data("hourly", [("a.b.c", 12.5, 25.0), ("a.b.d", 3.0, None)], [("a.b.d", 7)])
    assert [(d["MetricName"], d["Unit"], d["StatisticValues"]) for d in data] == [
        ("IgnoredColumnValues", "Count", {"SampleCount": 1.0, "Sum": 7.0, "Minimum": 7.0, "Maximum": 7.0}),
        ("TableRunSeconds", "Seconds", {"SampleCount": 2.0, "Sum": 15.5, "Minimum": 3.0, "Maximum": 12.5}),
        ("TableDpuSeconds", "None", {"SampleCount": 1.0, "Sum": 25.0, "Minimum": 25.0, "Maximum": 25.0}),
    ]
    assert all(d["Dimensions"] == [{"Name": "cadence", "Value": "hourly"}] for d in data)
    assert cost_metric_data("hourly", []) == []


def test_table_metrics_add_each_tables_figures_with_the_table_as_a_dimension() -> None:
    data = cost_metric_data("hourly", [("a.b.c", 12.5, 25.0), ("a.b.d", 3.0, None)], per_table=True)
    per_table = [(d["MetricName"], d["Dimensions"][1]["Value"], d["Value"]) for d in data if "Value" in d]
    assert per_table == [
        ("TableRunSeconds", "a.b.c", 12.5),
        ("TableRunSeconds", "a.b.d", 3.0),
        ("TableDpuSeconds", "a.b.c", 25.0),  # unknown DPUs: no DPU-seconds
    ]
    assert data[1]["Dimensions"] == [{"Name": "cadence", "Value": "hourly"}, {"Name": "table_id", "Value": "a.b.c"}]
    assert sum("StatisticValues" in d for d in data) == 2  # the cadence's sets too


def test_publishing_sends_to_the_odp_namespace_logs_each_table_and_never_raises(aws, caplog) -> None:
    cloudwatch = boto3.client("cloudwatch")
    with caplog.at_level(logging.INFO, logger="etl.file_processor.cost"):
        publish_costs(
            cloudwatch,
            "hourly",
            [("a.b.c", 12.5, 25.0), ("a.b.d", 0.5, None)],
            steps={"a.b.c": {"read": 0.5, "write.hudi": 9.0}},  # a.b.d made no step (a failed run)
        )
    metrics = cloudwatch.list_metrics(Namespace="ODP")["Metrics"]
    assert sorted(m["MetricName"] for m in metrics) == ["TableDpuSeconds", "TableRunSeconds"]
    assert all(m["Dimensions"] == [{"Name": "cadence", "Value": "hourly"}] for m in metrics)
    assert [json.loads(r.getMessage()) for r in caplog.records] == [
        {
            "event": "table_cost",
            "cadence": "hourly",
            "table_id": "a.b.c",
            "seconds": 12.5,
            "dpu_seconds": 25.0,
            "step_seconds": {"read": 0.5, "write.hudi": 9.0},  # where the run's time went, queryable in the logs
        },
        {"event": "table_cost", "cadence": "hourly", "table_id": "a.b.d", "seconds": 0.5, "dpu_seconds": None},
    ]

    class Refusing:
        def put_metric_data(self, **_: object) -> None:
            raise ClientError({"Error": {"Code": "AccessDenied", "Message": "no"}}, "PutMetricData")

    publish_costs(Refusing(), "hourly", [("a.b.c", 1.0, 1.0)])  # logged, not raised


def test_with_table_metrics_each_table_is_its_own_metric(aws) -> None:
    cloudwatch = boto3.client("cloudwatch")
    publish_costs(cloudwatch, "hourly", [("a.b.c", 1.0, None)], ignored=[("a.b.c", 7)], per_table=True)
    metrics = cloudwatch.list_metrics(Namespace="ODP")["Metrics"]
    by_table = sorted(m["MetricName"] for m in metrics if len(m["Dimensions"]) == 2)
    assert by_table == ["IgnoredColumnValues", "TableRunSeconds"]
