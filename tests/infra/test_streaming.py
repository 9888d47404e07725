"""The streaming construct in a synthesized stage with two streams (tests/support/streaming_stage.py): stream,
job, destination, alarms, grants."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aws_cdk.assertions import Match, Template

from odp.contracts.streaming import StreamingJobArgs
from tests.support.streaming_stage import StreamingStage


@pytest.fixture(scope="module")
def template(streaming_stage: StreamingStage) -> Template:
    return Template.from_json(streaming_stage.template)


def test_one_kms_encrypted_on_demand_stream_per_configured_stream(template: Template) -> None:
    template.resource_count_is("AWS::Kinesis::Stream", 2)
    template.has_resource_properties(
        "AWS::Kinesis::Stream",
        {
            "Name": "odp-dev-shop_changes",
            "StreamModeDetails": {"StreamMode": "ON_DEMAND"},
            "StreamEncryption": {"EncryptionType": "KMS", "KeyId": Match.any_value()},
            "RetentionPeriodHours": 24,
        },
    )
    template.has_resource("AWS::Kinesis::Stream", {"DeletionPolicy": "RetainExceptOnCreate"})  # decisions/028


def test_the_streaming_job_is_gluestreaming_5_1_with_the_contract_and_the_batch_packaging(template: Template) -> None:
    jobs = template.find_resources("AWS::Glue::Job", {"Properties": {"Command": {"Name": "gluestreaming"}}})
    by_name = {job["Properties"]["Name"]: job["Properties"] for job in jobs.values()}
    assert set(by_name) == {"odp-dev-stream-shop_changes", "odp-dev-stream-partner_changes"}
    shop = by_name["odp-dev-stream-shop_changes"]
    assert (shop["GlueVersion"], shop["WorkerType"], shop["NumberOfWorkers"]) == ("5.1", "G.1X", 3)
    (security,) = template.find_resources(
        "AWS::Glue::SecurityConfiguration", {"Properties": {"Name": "odp-dev-streaming"}}
    )
    assert shop["SecurityConfiguration"] == {"Ref": security}
    assert shop["DefaultArguments"]["--enable-observability-metrics"] == "true"
    arguments = shop["DefaultArguments"]
    assert json.loads(arguments[StreamingJobArgs.option("table_ids")]) == [
        "shop_dynamodb.app.customers",
        "shop_dynamodb.app.orders",
    ]
    assert arguments[StreamingJobArgs.option("window_seconds")] == "100"
    assert arguments[StreamingJobArgs.option("starting_position")] == "TRIM_HORIZON"
    assert arguments[StreamingJobArgs.option("table_config_table")] == "odp-dev-table-config"
    assert arguments["--datalake-formats"] == "hudi"
    assert arguments["--python-modules-installer-option"] == "--no-index"
    batch_job = next(
        job["Properties"]
        for job in template.find_resources("AWS::Glue::Job").values()
        if job["Properties"]["Command"]["Name"] == "glueetl"
    )
    for shared in ("--extra-py-files", "--additional-python-modules", "--conf"):
        assert arguments[shared] == batch_job["DefaultArguments"][shared]
    partner = by_name["odp-dev-stream-partner_changes"]["DefaultArguments"]
    assert '/cp/partner/"' in json.dumps(partner[StreamingJobArgs.option("checkpoint_location")])


def test_same_account_tables_get_their_kinesis_destination_and_others_do_not(template: Template) -> None:
    calls = [
        json.dumps(resource["Properties"]["Create"])
        for resource in template.find_resources("Custom::AWS").values()
        if "KinesisStreamingDestination" in json.dumps(resource["Properties"])
    ]
    assert len(calls) == 2  # orders and customers; partner_changes has wire_dynamodb: false
    assert all("enableKinesisStreamingDestination" in call and "MILLISECOND" in call for call in calls)
    assert sorted(t for t in ("orders", "customers", "offers") if any(f'\\"{t}\\"' in c for c in calls)) == [
        "customers",
        "orders",
    ]


def test_the_destination_custom_resource_may_list_streams_and_create_dynamodbs_replication_role(
    template: Template,
) -> None:
    """Item 4: in a fresh account, EnableKinesisStreamingDestination needs kinesis:ListStreams and creates
    DynamoDB's Kinesis replication service-linked role (only that one: the iam:AWSServiceName condition)."""
    creates = [
        resource
        for resource in template.find_resources("Custom::AWS").values()
        if "enableKinesisStreamingDestination" in json.dumps(resource["Properties"]["Create"])
    ]
    assert creates
    policies = template.find_resources("AWS::IAM::Policy")
    for resource in creates:
        (dependency,) = [d for d in resource["DependsOn"] if d in policies]
        statements = policies[dependency]["Properties"]["PolicyDocument"]["Statement"]
        actions = {action: statement for statement in statements for action in _listed(statement["Action"])}
        assert actions["kinesis:ListStreams"]["Resource"] == "*"
        slr = actions["iam:CreateServiceLinkedRole"]
        assert slr["Condition"] == {"StringEquals": {"iam:AWSServiceName": "kinesisreplication.dynamodb.amazonaws.com"}}
        assert "AWSServiceRoleForDynamoDBKinesisDataStreamsReplication" in json.dumps(slr["Resource"])


def _listed(value: object) -> list:
    return value if isinstance(value, list) else [value]


def test_alarms_on_iterator_age_batch_duration_bad_records_and_failed_tables(template: Template) -> None:
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "AlarmName": "odp-dev-stream-shop_changes-iterator-age",
            "MetricName": "GetRecords.IteratorAgeMilliseconds",
            "Threshold": 300000,
        },
    )
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "AlarmName": "odp-dev-stream-partner_changes-batch-duration",
            "Namespace": "ODP/Streaming",
            "MetricName": "BatchSeconds",
            "Threshold": 48,
            "Dimensions": [{"Name": "stream", "Value": "partner_changes"}],
        },
    )
    for suffix in ("bad-records", "failed-tables"):
        template.has_resource_properties(
            "AWS::CloudWatch::Alarm", {"AlarmName": f"odp-dev-stream-shop_changes-{suffix}", "Threshold": 0}
        )
    template.has_resource_properties(
        "AWS::Events::Rule",
        {
            "EventPattern": {
                "source": ["aws.glue"],
                "detail": {"jobName": ["odp-dev-stream-shop_changes"], "state": Match.array_with(["STOPPED"])},
            }
        },
    )


def test_the_streaming_role_reads_its_streams_and_writes_only_raw_and_its_prefixes(template: Template) -> None:
    roles = template.find_resources("AWS::IAM::Role", {"Properties": {"Description": "ODP dev streaming Glue jobs"}})
    (role_id,) = roles
    policies = [
        p["Properties"]["PolicyDocument"]["Statement"]
        for p in template.find_resources("AWS::IAM::Policy").values()
        if {"Ref": role_id} in p["Properties"]["Roles"]
    ]
    statements = json.dumps(policies)
    assert "kinesis:GetRecords" in statements
    # table_config is read only; the only DynamoDB writes are the run ledger's (each table commit's run)
    writes = [
        statement
        for policy in policies
        for statement in policy
        if "dynamodb:PutItem" in json.dumps(statement.get("Action"))
    ]
    resources = [resource for statement in writes for resource in statement["Resource"]]
    assert sorted(resource["Fn::GetAtt"][0].rstrip("0123456789ABCDEF") for resource in resources) == [
        "TrackingProcessingTracker",
        "TrackingProcessingTrackerHistory",
    ]
    assert "streaming/*" in statements
    assert "glue/*" in statements
    assert "ODP/Streaming" in statements


def test_cfn_lint_finds_no_error_in_the_streaming_stage(template: Template, tmp_path: Path) -> None:
    from tests.support.synth import cfn_lint_problems

    assert cfn_lint_problems(template.to_json(), tmp_path) == []
