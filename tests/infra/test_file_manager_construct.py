"""FileManagerFunction on its own, with default and non-default props: aws_cdk.assertions and cdk-nag."""

from __future__ import annotations

import pytest
from aws_cdk import App, Environment, RemovalPolicy, Stack
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk.assertions import Match, Template

from infrastructure.application import ASSET_CACHE, REPO_ROOT, cdk_json_context
from infrastructure.assets import lambda_code
from infrastructure.foundation.secure_bucket import SecureBucket, SecureBucketProps
from infrastructure.ingest.file_manager import FileManagerFunction, FileManagerFunctionProps
from infrastructure.ingest.tracking import Tracking, TrackingProps
from infrastructure.nag import AUDIT_CONTEXT, audit_acknowledgments


@pytest.mark.parametrize(
    ("overrides", "deletion", "days"),
    [
        ({}, "Retain", 30),
        ({"removal_policy": RemovalPolicy.DESTROY, "log_retention": logs.RetentionDays.ONE_WEEK}, "Delete", 7),
    ],
    ids=["default", "destroy-one-week"],
)
def test_file_manager_props(tmp_path, overrides, deletion, days) -> None:
    app = App(context={**cdk_json_context(), AUDIT_CONTEXT: True}, outdir=str(tmp_path))
    stack = Stack(app, "S", env=Environment(account="111111111111", region="eu-west-1"))
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    logs_bucket = SecureBucket(stack, "Logs").bucket
    staging = SecureBucket(
        stack, "Staging", SecureBucketProps(encryption_key=key, access_logs=logs_bucket, access_logs_prefix="s/")
    ).bucket
    tracking = Tracking(
        stack, "Tracking", TrackingProps(environment="x", key=key, removal_policy=RemovalPolicy.DESTROY)
    )
    FileManagerFunction(
        stack,
        "FileManager",
        FileManagerFunctionProps(
            environment="x",
            staging=staging,
            sources=["b_src", "a_src", "b_src"],
            tracking=tracking,
            key=key,
            code_dir=lambda_code(REPO_ROOT, ASSET_CACHE),
            **overrides,
        ),
    )
    template = Template.from_stack(stack)
    template.has_resource_properties(
        "AWS::Events::Rule",
        {
            "Name": "odp-x-staging-object-created",
            "EventPattern": Match.object_like(
                {"detail": Match.object_like({"object": {"key": [{"prefix": "a_src/"}, {"prefix": "b_src/"}]}})}
            ),
        },
    )
    template.has_resource(
        "AWS::SQS::Queue",
        {"DeletionPolicy": deletion, "Properties": Match.object_like({"QueueName": "odp-x-file-manager"})},
    )
    template.has_resource_properties(
        "AWS::Logs::LogGroup", {"LogGroupName": "/aws/lambda/odp-x-file-manager", "RetentionInDays": days}
    )
    template.has_resource_properties(
        "AWS::Lambda::EventSourceMapping", {"FunctionResponseTypes": ["ReportBatchItemFailures"]}
    )
    app.synth()
    audit = audit_acknowledgments(app)
    assert audit.unmatched == []
    assert audit.unacknowledged == []
