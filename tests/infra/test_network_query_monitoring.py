"""Network, Query and Monitoring: endpoints and flow logs, the enforced workgroup, alarms and freshness."""

from __future__ import annotations

import json

import pytest

from infrastructure.access.query import row_count_queries, row_count_select
from infrastructure.operations.monitoring import DEFAULT_CRON_INTERVAL_MINUTES, freshness_threshold_seconds
from odp.config.models import SourceFormat, TableConfig, TableMode
from odp.contracts.metrics import FRESHNESS_METRIC


def test_vpc_has_no_nat_gateway_endpoints_and_flow_logs(synthesized) -> None:
    template = synthesized.data_lakes["dev"]
    assert synthesized.resources(template, "AWS::EC2::NatGateway") == {}
    assert synthesized.resources(template, "AWS::EC2::InternetGateway") == {}
    endpoints = [e["Properties"] for e in synthesized.resources(template, "AWS::EC2::VPCEndpoint").values()]
    gateway = [e for e in endpoints if e.get("VpcEndpointType") in (None, "Gateway")]
    interface = [e for e in endpoints if e.get("VpcEndpointType") == "Interface"]
    assert len(gateway) == 2
    # What the Glue jobs call, nothing else (no SQS, Step Functions, Secrets Manager: nothing in the VPC uses
    # them); SNS because datasets are configured (the dataset job publishes), no Kinesis: no stream is.
    services = sorted(e["ServiceName"].rsplit(".", 1)[-1] for e in interface)
    assert services == ["glue", "kms", "logs", "monitoring", "sns", "sts"]
    assert len(synthesized.resources(template, "AWS::EC2::FlowLog")) == 1
    subnets = synthesized.resources(template, "AWS::EC2::Subnet")
    assert len({s["Properties"]["AvailabilityZone"] for s in subnets.values()}) == 2


def test_one_glue_connection_per_subnet_in_its_own_az(synthesized) -> None:
    template = synthesized.data_lakes["prod"]
    subnets = synthesized.resources(template, "AWS::EC2::Subnet")
    connections = [
        c["Properties"]["ConnectionInput"] for c in synthesized.resources(template, "AWS::Glue::Connection").values()
    ]
    assert [c["Name"] for c in connections] == ["odp-prod-vpc", "odp-prod-vpc-2"]
    used = []
    for connection in connections:
        requirements = connection["PhysicalConnectionRequirements"]
        subnet = requirements["SubnetId"]["Ref"]
        assert subnet in subnets
        assert requirements["AvailabilityZone"] == {"Fn::GetAtt": [subnet, "AvailabilityZone"]}
        used.append(subnet)
    assert sorted(used) == sorted(subnets)


def test_workgroup_enforces_encrypted_results_and_each_raw_database_has_a_row_count_query(synthesized, config) -> None:
    template = synthesized.data_lakes["prod"]
    (workgroup,) = synthesized.resources(template, "AWS::Athena::WorkGroup").values()
    configuration = workgroup["Properties"]["WorkGroupConfiguration"]
    assert configuration["EnforceWorkGroupConfiguration"] is True
    assert configuration["ResultConfiguration"]["EncryptionConfiguration"]["EncryptionOption"] == "SSE_KMS"
    queries = {
        q["Properties"]["Name"]: q["Properties"]
        for q in synthesized.resources(template, "AWS::Athena::NamedQuery").values()
        if q["Properties"]["Name"].startswith("row-count ")  # the datasets' queries: test_datasets.py
    }
    databases = {table.database for table in config.tables}
    assert set(queries) == {f"row-count {database}" for database in databases}  # none per table
    for table in config.tables:
        query = queries[f"row-count {table.database}"]
        assert query["Database"] == table.database
        assert f"""SELECT '{table.target_table}' AS table_name""" in query["QueryString"]


def test_a_row_count_query_checks_keys_of_current_tables_and_holds_at_most_200_tables() -> None:
    current = TableConfig(
        source="shop",
        schema_name="public",
        table="orders",
        format=SourceFormat.DMS,
        primary_key=("id",),
        database="shop_raw",
    )
    history = current.model_copy(update={"table": "events", "mode": TableMode.HISTORICAL})
    assert row_count_select(current) == (
        "SELECT 'orders' AS table_name, COUNT(*) AS row_count, COUNT(DISTINCT _hoodie_record_key) AS distinct_keys, "
        'COUNT(*) = COUNT(DISTINCT _hoodie_record_key) AS valid FROM "shop_raw"."orders"'
    )
    assert "CAST(NULL AS BIGINT) AS distinct_keys, COUNT(*) > 0 AS valid" in row_count_select(history)
    many = [current.model_copy(update={"table": f"t{n:03d}"}) for n in range(450)]
    queries = row_count_queries(many)
    assert list(queries) == [f"row-count shop_raw (part {n} of 3)" for n in (1, 2, 3)]
    assert [sql.count("UNION ALL") + 1 for _, _, sql in queries.values()] == [200, 200, 50]
    assert max(len(sql.encode()) for _, _, sql in queries.values()) < 262_144 // 4  # Athena's query string limit


def test_alerts_topic_is_encrypted_and_alarms_publish_to_it(synthesized) -> None:
    template = synthesized.data_lakes["test"]
    (topic_logical, topic), *_ = synthesized.resources(template, "AWS::SNS::Topic").items()
    assert "KmsMasterKeyId" in topic["Properties"]
    alarms = {
        a["Properties"]["AlarmName"]: a["Properties"]
        for a in synthesized.resources(template, "AWS::CloudWatch::Alarm").values()
    }
    for name in (
        "odp-test-file-manager-dlq-depth",
        "odp-test-file-manager-errors",
        "odp-test-file-manager-throttles",
        "odp-test-batch-manager-errors",
        "odp-test-batch-manager-throttles",
        "odp-test-glue-job-failed",
        "odp-test-file-processor-hourly-failed",
        "odp-test-file-processor-hourly-timed-out",
    ):
        assert alarms[name]["AlarmActions"] == [{"Ref": topic_logical}], name
    assert len(synthesized.resources(template, "AWS::CloudWatch::Dashboard")) == 1


@pytest.mark.parametrize("env", ["dev", "prod"])
def test_freshness_alarm_per_cadence_at_twice_the_interval(synthesized, config, env) -> None:
    template = synthesized.data_lakes[env]
    alarms = {
        a["Properties"]["AlarmName"]: a["Properties"]
        for a in synthesized.resources(template, "AWS::CloudWatch::Alarm").values()
    }
    for name, cadence in config.cadences.cadences.items():
        alarm = alarms[f"odp-{env}-freshness-{name}"]
        assert alarm["MetricName"] == FRESHNESS_METRIC
        assert alarm["Namespace"] == "ODP"
        assert {d["Name"]: d["Value"] for d in alarm["Dimensions"]} == {"cadence": name}
        expected_minutes = cadence.interval_minutes or DEFAULT_CRON_INTERVAL_MINUTES
        assert alarm["Threshold"] == 2 * 60 * expected_minutes
        assert alarm["ComparisonOperator"] == "GreaterThanThreshold"
        # A schedule that stops firing publishes nothing: missing data is a breach, over a period of twice
        # the interval (every period holds a run's datapoint while the schedule fires).
        assert alarm["TreatMissingData"] == "breaching"
        assert alarm["Period"] == 2 * 60 * expected_minutes


def test_freshness_period_is_twice_the_interval_within_a_day() -> None:
    from infrastructure.operations.monitoring import freshness_period
    from odp.config.models import Cadence

    def cadence(schedule: str) -> Cadence:
        return Cadence(schedule=schedule, batch_size=1, max_concurrency=1, job_timeout_minutes=30)

    assert freshness_period(cadence("rate(10 minutes)")).to_seconds() == 1200
    assert freshness_period(cadence("rate(12 hours)")).to_seconds() == 86_400
    assert freshness_period(cadence("rate(1 day)")).to_seconds() == 86_400  # CloudWatch's one-day limit


def test_freshness_threshold_values(config) -> None:
    cadences = config.cadences.cadences
    assert freshness_threshold_seconds(cadences["every_10_minutes"]) == 1200
    assert freshness_threshold_seconds(cadences["hourly"]) == 7200  # cron: the documented hourly default


def test_freshness_alarm_dimensions_match_what_the_batch_manager_emits(synthesized) -> None:
    """Emit the metric the way the Batch Manager does (lambdas.runtime.new_metrics, with the function's
    own environment variables) and compare its dimension set with the alarm's."""
    from aws_lambda_powertools.metrics import MetricUnit

    from lambdas.runtime import new_metrics
    from odp.contracts.lambda_env import lambda_environment
    from odp.contracts.metrics import CADENCE_DIMENSION
    from odp.naming import TrackerTableNames

    environ = lambda_environment("dev", TrackerTableNames.for_environment("dev"), service="batch_manager")
    metrics = new_metrics(environ, service="")
    try:
        metrics.add_dimension(name=CADENCE_DIMENSION, value="hourly")
        metrics.add_metric(name=FRESHNESS_METRIC, unit=MetricUnit.Seconds, value=1)
        (emitted,) = metrics.serialize_metric_set()["_aws"]["CloudWatchMetrics"]
    finally:
        metrics.clear_metrics()  # Powertools shares one metric set per process: leave it empty
    alarms = synthesized.resources(synthesized.data_lakes["dev"], "AWS::CloudWatch::Alarm").values()
    alarm = next(a["Properties"] for a in alarms if a["Properties"]["AlarmName"] == "odp-dev-freshness-hourly")
    assert emitted["Namespace"] == alarm["Namespace"]
    assert emitted["Dimensions"] == [[d["Name"] for d in alarm["Dimensions"]]]


def test_cloudwatch_alarms_of_this_account_may_publish_to_the_alerts_topic(synthesized, config) -> None:
    for env, template in synthesized.data_lakes.items():
        (topic_logical,) = synthesized.resources(template, "AWS::SNS::Topic")
        (policy,) = [
            p["Properties"]
            for p in synthesized.resources(template, "AWS::SNS::TopicPolicy").values()
            if {"Ref": topic_logical} in p["Properties"]["Topics"]
        ]
        allowed = [
            s
            for s in policy["PolicyDocument"]["Statement"]
            if s["Effect"] == "Allow" and s["Principal"] == {"Service": "cloudwatch.amazonaws.com"}
        ]
        assert len(allowed) == 1, env
        assert allowed[0]["Action"] == "sns:Publish"
        account = config.environments.environments[env].account
        assert allowed[0]["Condition"]["StringEquals"] == {"aws:SourceAccount": account}


def test_the_dashboard_shows_each_cadences_cost_and_the_costliest_tables_and_the_job_may_publish_them(
    synthesized, config
) -> None:
    template = synthesized.data_lakes["test"]
    (dashboard,) = synthesized.resources(template, "AWS::CloudWatch::Dashboard").values()
    body = json.dumps(dashboard["Properties"]["DashboardBody"])
    assert "DPU-seconds per cadence per day" in body
    for cadence in config.cadences.cadences:  # every run publishes its cadence's set (etl/file_processor/cost.py)
        assert f'[\\"ODP\\",\\"TableDpuSeconds\\",\\"cadence\\",\\"{cadence}\\"' in body, cadence
    # hourly publishes per-table figures (table_metrics: true in config/cadences.yaml): the top-10 widget reads them
    assert [name for name, cadence in config.cadences.cadences.items() if cadence.table_metrics] == ["hourly"]
    assert "Costliest tables, DPU-seconds per day (top 10, cadences with table_metrics)" in body
    assert "SORT(SEARCH('{ODP,cadence,table_id} MetricName=" in body
    statements = [
        statement
        for policy in synthesized.resources(template, "AWS::IAM::Policy").values()
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        if statement.get("Sid") == "GlueMetrics"
    ]
    assert statements
    # every Glue job role is conditioned (the dataset role on Glue only); the File Processor's adds ODP
    assert all(s["Condition"]["StringEquals"]["cloudwatch:namespace"][0] == "Glue" for s in statements)
    assert {"StringEquals": {"cloudwatch:namespace": ["Glue", "ODP"]}} in [s["Condition"] for s in statements]


def test_quarantine_alarm_per_cadence_on_the_metric_the_batch_manager_emits(synthesized, config) -> None:
    from infrastructure.operations.monitoring import QUARANTINED_METRIC
    from odp.cadence_metrics import outcome_metrics  # what the Batch Manager and a warm tick publish

    emitted = {metric.name for metric in outcome_metrics(failed_tables=0, failed_runs=0, quarantined_files=1)}
    assert QUARANTINED_METRIC == "QuarantinedFiles"
    assert QUARANTINED_METRIC in emitted
    alarms = {
        a["Properties"]["AlarmName"]: a["Properties"]
        for a in synthesized.resources(synthesized.data_lakes["dev"], "AWS::CloudWatch::Alarm").values()
    }
    for name in config.cadences.cadences:
        alarm = alarms[f"odp-dev-quarantined-{name}"]
        assert (alarm["MetricName"], alarm["Namespace"], alarm["Statistic"]) == ("QuarantinedFiles", "ODP", "Sum")
        assert {d["Name"]: d["Value"] for d in alarm["Dimensions"]} == {"cadence": name}
        assert (alarm["Threshold"], alarm["ComparisonOperator"]) == (0, "GreaterThanThreshold")
        assert alarm["AlarmActions"]
