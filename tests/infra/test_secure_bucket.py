"""SecureBucket on its own: default and non-default props, synthesized with aws_cdk.assertions and
checked by cdk-nag (no finding left, no acknowledgment unused)."""

from __future__ import annotations

import pytest
from aws_cdk import App, Duration, RemovalPolicy, Stack
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk.assertions import Match, Template

from infrastructure.application import cdk_json_context
from infrastructure.foundation.secure_bucket import INCOMPLETE_UPLOAD_DAYS, SecureBucket, SecureBucketProps
from infrastructure.nag import AUDIT_CONTEXT, audit_acknowledgments


def _stack(tmp_path) -> tuple[App, Stack]:
    # cdk.json's feature flags (server access logs by bucket policy), acknowledgments recorded for the audit.
    app = App(context={**cdk_json_context(), AUDIT_CONTEXT: True}, outdir=str(tmp_path))
    return app, Stack(app, "S")


def test_defaults_are_private_tls_only_versioned_s3_encrypted_and_retained(tmp_path) -> None:
    app, stack = _stack(tmp_path)
    SecureBucket(stack, "Logs")
    template = Template.from_stack(stack)
    template.has_resource(
        "AWS::S3::Bucket",
        {
            "DeletionPolicy": "Retain",
            "Properties": Match.object_like(
                {
                    "BucketEncryption": {
                        "ServerSideEncryptionConfiguration": [
                            {"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}
                        ]
                    },
                    "PublicAccessBlockConfiguration": {
                        "BlockPublicAcls": True,
                        "BlockPublicPolicy": True,
                        "IgnorePublicAcls": True,
                        "RestrictPublicBuckets": True,
                    },
                    "VersioningConfiguration": {"Status": "Enabled"},
                    "OwnershipControls": {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]},
                    "LifecycleConfiguration": {
                        "Rules": [
                            Match.object_like(
                                {
                                    "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": INCOMPLETE_UPLOAD_DAYS},
                                    "NoncurrentVersionExpiration": {"NoncurrentDays": 30},
                                }
                            )
                        ]
                    },
                }
            ),
        },
    )
    policy = template.find_resources("AWS::S3::BucketPolicy")
    statements = next(iter(policy.values()))["Properties"]["PolicyDocument"]["Statement"]
    assert {s["Condition"].get("Bool", {}).get("aws:SecureTransport") for s in statements} >= {"false"}
    assert any("s3:TlsVersion" in s["Condition"].get("NumericLessThan", {}) for s in statements)
    template.resource_count_is("Custom::S3AutoDeleteObjects", 0)
    app.synth()
    audit = audit_acknowledgments(app)
    # Alone, neither logged nor a log target: S1 is the one finding (in Storage it is the log target).
    assert audit.unacknowledged == ["S/Logs/Default/Resource: AwsSolutions-S1"]
    assert audit.unmatched == []


def test_kms_logged_and_destroyed_bucket_empties_itself(tmp_path) -> None:
    app, stack = _stack(tmp_path)
    logs = SecureBucket(stack, "Logs").bucket
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    SecureBucket(
        stack,
        "Data",
        SecureBucketProps(
            bucket_name="odp-x-raw-111111111111-eu-west-1",
            encryption_key=key,
            access_logs=logs,
            access_logs_prefix="raw/",
            lifecycle_rules=(s3.LifecycleRule(id="expire", expiration=Duration.days(3)),),
            noncurrent_version_days=5,
            removal_policy=RemovalPolicy.DESTROY,
        ),
    )
    template = Template.from_stack(stack)
    template.has_resource(
        "AWS::S3::Bucket",
        {
            "DeletionPolicy": "Delete",
            "Properties": Match.object_like(
                {
                    "BucketName": "odp-x-raw-111111111111-eu-west-1",
                    "BucketEncryption": {
                        "ServerSideEncryptionConfiguration": [
                            Match.object_like(
                                {
                                    "BucketKeyEnabled": True,
                                    "ServerSideEncryptionByDefault": Match.object_like({"SSEAlgorithm": "aws:kms"}),
                                }
                            )
                        ]
                    },
                    "LoggingConfiguration": Match.object_like({"LogFilePrefix": "raw/"}),
                    "LifecycleConfiguration": {
                        "Rules": [
                            Match.object_like({"NoncurrentVersionExpiration": {"NoncurrentDays": 5}}),
                            Match.object_like({"Id": "expire", "ExpirationInDays": 3}),
                        ]
                    },
                }
            ),
        },
    )
    # A destroy environment can be torn down: the bucket is emptied before CloudFormation deletes it.
    template.resource_count_is("Custom::S3AutoDeleteObjects", 1)
    app.synth()
    audit = audit_acknowledgments(app)
    assert audit.unacknowledged == []
    assert audit.unmatched == []


def test_a_log_prefix_without_a_log_bucket_is_refused(tmp_path) -> None:
    _, stack = _stack(tmp_path)
    with pytest.raises(ValueError, match="S/Data: access_logs_prefix needs access_logs"):
        SecureBucket(stack, "Data", SecureBucketProps(access_logs_prefix="x/"))
