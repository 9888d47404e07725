"""DeployAccess on its own, with default and non-default props: aws_cdk.assertions and cdk-nag."""

from __future__ import annotations

import pytest
from aws_cdk import App, Environment, RemovalPolicy, Stack
from aws_cdk import aws_kms as kms
from aws_cdk.assertions import Match, Template

from infrastructure.application import cdk_json_context
from infrastructure.ingest.tracking import Tracking, TrackingProps
from infrastructure.nag import AUDIT_CONTEXT, audit_acknowledgments
from infrastructure.operations.deploy_access import DeployAccess, DeployAccessProps

JOB = "arn:aws:glue:eu-west-1:111111111111:job/odp-x-file-processor-hourly"


@pytest.mark.parametrize("jobs", [(), (JOB,)], ids=["default", "with-canary-jobs"])
def test_deploy_access_props(tmp_path, jobs) -> None:
    app = App(context={**cdk_json_context(), AUDIT_CONTEXT: True}, outdir=str(tmp_path))
    stack = Stack(app, "S", env=Environment(account="111111111111", region="eu-west-1"))  # TableV2 needs a region
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    tracking = Tracking(
        stack, "Tracking", TrackingProps(environment="x", key=key, removal_policy=RemovalPolicy.DESTROY)
    )
    DeployAccess(
        stack,
        "DeployAccess",
        DeployAccessProps(
            environment="x", deployment_account="000000000000", tracking=tracking, key=key, glue_job_arns=jobs
        ),
    )
    template = Template.from_stack(stack)
    template.has_resource_properties(
        "AWS::IAM::Role",
        {
            "RoleName": "odp-x-config-loader",
            "AssumeRolePolicyDocument": {
                "Statement": [
                    Match.object_like(
                        {
                            "Condition": {"ArnEquals": {"aws:PrincipalArn": Match.any_value()}},
                            "Principal": {"AWS": Match.any_value()},
                        }
                    )
                ],
                "Version": "2012-10-17",
            },
        },
    )
    (policy,) = template.find_resources("AWS::IAM::Policy").values()
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    actions = {a for s in statements for a in (s["Action"] if isinstance(s["Action"], list) else [s["Action"]])}
    assert "dynamodb:Scan" in actions
    # the Configuration Manager writes (and scans) the three configuration tables, dataset_config among them
    tables = {
        table["Properties"]["TableName"]: logical
        for logical, table in template.find_resources("AWS::DynamoDB::GlobalTable").items()
    }
    written = {
        resource["Fn::GetAtt"][0]
        for s in statements
        if {"dynamodb:BatchWriteItem", "dynamodb:Scan"} <= set(s["Action"] if isinstance(s["Action"], list) else [])
        for resource in (s["Resource"] if isinstance(s["Resource"], list) else [s["Resource"]])
        if isinstance(resource, dict) and "Fn::GetAtt" in resource
    }
    assert written == {tables[f"odp-x-{name}"] for name in ("table-config", "batch-config", "dataset-config")}
    assert "states:DescribeStateMachine" not in actions  # no state machine given, no statement
    assert ("glue:StartJobRun" in actions) is bool(jobs)
    app.synth()
    audit = audit_acknowledgments(app)
    assert audit.unacknowledged == []
    assert audit.unmatched == []
