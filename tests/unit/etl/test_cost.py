"""A table run's share of the job's DPU-seconds and the metrics that carry it."""

from __future__ import annotations

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


def test_metric_data_per_table_and_unknown_dpus_send_seconds_only() -> None:
    data = cost_metric_data("hourly", [("a.b.c", 12.5, 25.0), ("a.b.d", 3.0, None)])
    assert [(d["MetricName"], d["Value"]) for d in data] == [
        ("TableRunSeconds", 12.5),
        ("TableDpuSeconds", 25.0),
        ("TableRunSeconds", 3.0),
    ]
    assert data[0]["Dimensions"] == [{"Name": "cadence", "Value": "hourly"}, {"Name": "table_id", "Value": "a.b.c"}]


def test_publishing_sends_to_the_odp_namespace_and_never_raises(aws) -> None:
    cloudwatch = boto3.client("cloudwatch")
    publish_costs(cloudwatch, "hourly", [("a.b.c", 12.5, 25.0)])
    names = sorted(m["MetricName"] for m in cloudwatch.list_metrics(Namespace="ODP")["Metrics"])
    assert names == ["TableDpuSeconds", "TableRunSeconds"]

    class Refusing:
        def put_metric_data(self, **_: object) -> None:
            raise ClientError({"Error": {"Code": "AccessDenied", "Message": "no"}}, "PutMetricData")

    publish_costs(Refusing(), "hourly", [("a.b.c", 1.0, 1.0)])  # logged, not raised


def test_ignored_column_values_are_a_metric_per_table(aws) -> None:
    data = cost_metric_data("hourly", [("a.b.c", 1.0, None)], [("a.b.c", 7)])
    assert [(d["MetricName"], d["Value"], d["Unit"]) for d in data] == [
        ("IgnoredColumnValues", 7.0, "Count"),
        ("TableRunSeconds", 1.0, "Seconds"),
    ]
    cloudwatch = boto3.client("cloudwatch")
    publish_costs(cloudwatch, "hourly", [("a.b.c", 1.0, None)], ignored=[("a.b.c", 7)])
    names = sorted(m["MetricName"] for m in cloudwatch.list_metrics(Namespace="ODP")["Metrics"])
    assert names == ["IgnoredColumnValues", "TableRunSeconds"]
