"""Network, Query and Monitoring: endpoints and flow logs, the enforced workgroup, alarms and freshness."""

from __future__ import annotations

import pytest

from infrastructure.batch_manager import FRESHNESS_METRIC
from infrastructure.monitoring import DEFAULT_CRON_INTERVAL_MINUTES, freshness_threshold_seconds
from infrastructure.query import row_count_query


def test_vpc_has_no_nat_gateway_endpoints_and_flow_logs(synthesized) -> None:
    template = synthesized.data_lakes["dev"]
    assert synthesized.resources(template, "AWS::EC2::NatGateway") == {}
    assert synthesized.resources(template, "AWS::EC2::InternetGateway") == {}
    endpoints = [e["Properties"] for e in synthesized.resources(template, "AWS::EC2::VPCEndpoint").values()]
    gateway = [e for e in endpoints if e.get("VpcEndpointType") in (None, "Gateway")]
    interface = [e for e in endpoints if e.get("VpcEndpointType") == "Interface"]
    assert len(gateway) == 2
    assert len(interface) == 8
    assert len(synthesized.resources(template, "AWS::EC2::FlowLog")) == 1
    subnets = synthesized.resources(template, "AWS::EC2::Subnet").values()
    assert len({s["Properties"]["AvailabilityZone"] for s in subnets}) == 2


def test_workgroup_enforces_encrypted_results_and_each_table_has_a_row_count_query(synthesized, config) -> None:
    template = synthesized.data_lakes["prod"]
    (workgroup,) = synthesized.resources(template, "AWS::Athena::WorkGroup").values()
    configuration = workgroup["Properties"]["WorkGroupConfiguration"]
    assert configuration["EnforceWorkGroupConfiguration"] is True
    assert configuration["ResultConfiguration"]["EncryptionConfiguration"]["EncryptionOption"] == "SSE_KMS"
    queries = {
        q["Properties"]["Name"]: q["Properties"]
        for q in synthesized.resources(template, "AWS::Athena::NamedQuery").values()
    }
    assert set(queries) == {f"row-count {t.table_id}" for t in config.tables}
    for table in config.tables:
        assert queries[f"row-count {table.table_id}"]["QueryString"] == row_count_query(table)


def test_row_count_query_checks_keys_for_current_tables(config) -> None:
    table = config.tables[0]
    query = row_count_query(table)
    assert f'FROM "{table.database}"."{table.target_table}"' in query
    if table.mode == "current":
        assert "COUNT(DISTINCT _hoodie_record_key)" in query


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


def test_freshness_threshold_values(config) -> None:
    cadences = config.cadences.cadences
    assert freshness_threshold_seconds(cadences["every_10_minutes"]) == 1200
    assert freshness_threshold_seconds(cadences["hourly"]) == 7200  # cron: the documented hourly default


def test_freshness_alarm_dimensions_match_what_the_batch_manager_emits(synthesized) -> None:
    """Emit the metric the way the Batch Manager does (lambdas.runtime.new_metrics, with the function's
    own environment variables) and compare its dimension set with the alarm's."""
    from aws_lambda_powertools.metrics import MetricUnit

    from infrastructure.batch_manager import CADENCE_DIMENSION
    from lambdas.runtime import new_metrics
    from odp.lambda_env import lambda_environment
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


def test_quarantine_alarm_per_cadence_on_the_metric_the_batch_manager_emits(synthesized, config) -> None:
    from infrastructure.monitoring import QUARANTINED_METRIC
    from lambdas.batch_manager.manager import QUARANTINED_METRIC as EMITTED

    assert QUARANTINED_METRIC == EMITTED == "QuarantinedFiles"
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
