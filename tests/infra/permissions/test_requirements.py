"""The template resolver and the call -> IAM request mapping, on a small hand-written template."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from odp.config.models import TableType
from sandbox import aws_calls
from sandbox.aws_calls import AwsCall, report_folder_changes
from tests.infra.permissions.requirements import (
    S3_TLS,
    SECURE_TRANSPORT,
    Requirement,
    Translation,
    UnmappedCallError,
    call_requirements,
    catalog_sync_requirements,
    state_machine_requirements,
)
from tests.infra.permissions.template import Deployment, Resolver, TemplateError, principals, role_of, role_policies

KEY = "arn:aws:kms:eu-west-1:111111111111:key/StateKey"
TABLE = "arn:aws:dynamodb:eu-west-1:111111111111:table/odp-dev-file-tracker"
HISTORY = "arn:aws:dynamodb:eu-west-1:111111111111:table/odp-dev-file-tracker-history"
RAW = "arn:aws:s3:::odp-dev-raw-111111111111-eu-west-1"
SANDBOX = Translation("sandbox", {"raw": "raw"})
VIA_DYNAMODB = ("kms:ViaService", "dynamodb.eu-west-1.amazonaws.com")


def _table(name: str) -> dict:
    return {
        "Type": "AWS::DynamoDB::GlobalTable",
        "Properties": {
            "TableName": name,
            "Replicas": [
                {"Region": "eu-west-1", "SSESpecification": {"KMSMasterKeyId": {"Fn::GetAtt": ["StateKey", "Arn"]}}}
            ],
        },
    }


TEMPLATE = {
    "Resources": {
        "StateKey": {"Type": "AWS::KMS::Key", "Properties": {}},
        "Tracker": _table("odp-dev-file-tracker"),
        "History": _table("odp-dev-file-tracker-history"),
        "RawBucket": {
            "Type": "AWS::S3::Bucket",
            "Properties": {
                "BucketName": {"Fn::Join": ["-", ["odp-dev-raw", {"Ref": "AWS::AccountId"}, {"Ref": "AWS::Region"}]]},
                "BucketEncryption": {
                    "ServerSideEncryptionConfiguration": [
                        {"ServerSideEncryptionByDefault": {"KMSMasterKeyID": {"Fn::GetAtt": ["StateKey", "Arn"]}}}
                    ]
                },
            },
        },
        "FunctionRole": {"Type": "AWS::IAM::Role", "Properties": {}},
        "FunctionPolicy": {
            "Type": "AWS::IAM::Policy",
            "Properties": {
                "Roles": [{"Ref": "FunctionRole"}],
                "PolicyDocument": {
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Action": "dynamodb:PutItem",
                            "Resource": {"Fn::GetAtt": ["Tracker", "Arn"]},
                        },
                        {"Effect": "Allow", "Action": "s3:GetObject", "Resource": {"Fn::Sub": "${RawBucket.Arn}/*"}},
                    ]
                },
            },
        },
        "Function": {
            "Type": "AWS::Lambda::Function",
            "Properties": {"FunctionName": "odp-dev-file-manager", "Role": {"Fn::GetAtt": ["FunctionRole", "Arn"]}},
        },
    }
}


@pytest.fixture
def resolver() -> Resolver:
    return Resolver(TEMPLATE, Deployment("dev", "111111111111", "eu-west-1"))


def _call(operation: str, params: dict, service: str = "dynamodb") -> AwsCall:
    return AwsCall("file-manager", service, operation, params, "odp/tracker/repository.py (register)")


def test_the_resolver_builds_names_and_arns_as_cloudformation_would(resolver: Resolver) -> None:
    assert resolver.resolve({"Ref": "RawBucket"}) == "odp-dev-raw-111111111111-eu-west-1"
    assert resolver.resolve({"Fn::GetAtt": ["RawBucket", "Arn"]}) == RAW
    assert resolver.resolve({"Fn::Sub": "${Tracker.Arn}/index/*"}) == f"{TABLE}/index/*"
    assert resolver.resolve({"Fn::Select": [1, {"Fn::Split": [":", "a:b:c"]}]}) == "b"
    assert resolver.resolve({"Fn::GetAtt": ["StateKey", "Arn"]}) == KEY
    with pytest.raises(TemplateError, match="intrinsic Fn::If is not supported"):
        resolver.resolve({"Fn::If": ["Cond", "a", "b"]})
    with pytest.raises(TemplateError, match="no resource 'Missing' in the template"):
        resolver.resolve({"Ref": "Missing"})


def test_principals_are_found_by_what_they_run_and_their_policies_resolved(resolver: Resolver) -> None:
    with pytest.raises(TemplateError, match="no role found in the template for batch-manager, config-loader"):
        principals(resolver)
    documents = role_policies(resolver, role_of(resolver, "FunctionRole"))
    assert [statement["Resource"] for statement in documents[0]["Statement"]] == [TABLE, f"{RAW}/*"]


def test_a_transaction_needs_each_items_action_and_the_tables_key(resolver: Resolver) -> None:
    call = _call(
        "TransactWriteItems",
        {
            "TransactItems": [
                {"ConditionCheck": {"TableName": "odp-sandbox-file-tracker-history"}},
                {"Put": {"TableName": "odp-sandbox-file-tracker"}},
            ]
        },
    )
    reason = "dynamodb.TransactWriteItems from odp/tracker/repository.py (register)"
    assert call_requirements(call, resolver, SANDBOX) == [
        Requirement("file-manager", "dynamodb:ConditionCheckItem", HISTORY, (SECURE_TRANSPORT,), reason),
        Requirement("file-manager", "kms:Decrypt", KEY, (SECURE_TRANSPORT, VIA_DYNAMODB), reason),
        Requirement("file-manager", "dynamodb:PutItem", TABLE, (SECURE_TRANSPORT,), reason),
        Requirement("file-manager", "kms:Decrypt", KEY, (SECURE_TRANSPORT, VIA_DYNAMODB), reason),
    ]


def test_batch_writes_queries_on_indexes_and_bucket_listings(resolver: Resolver) -> None:
    batch = call_requirements(
        _call("BatchWriteItem", {"RequestItems": {"odp-sandbox-file-tracker": []}}), resolver, SANDBOX
    )
    assert [(r.action, r.resource) for r in batch] == [("dynamodb:BatchWriteItem", TABLE), ("kms:Decrypt", KEY)]
    query = call_requirements(
        _call("Query", {"TableName": "odp-sandbox-file-tracker", "IndexName": "pending_by_table"}), resolver, SANDBOX
    )
    assert query[0].resource == f"{TABLE}/index/pending_by_table"
    listing = call_requirements(_call("ListObjectsV2", {"Bucket": "raw", "Prefix": "db/t/"}, "s3"), resolver, SANDBOX)
    assert listing == [
        Requirement(
            "file-manager", "s3:ListBucket", RAW, (SECURE_TRANSPORT, S3_TLS, ("s3:prefix", "db/t/")), listing[0].reason
        )
    ]
    put = call_requirements(_call("PutObject", {"Bucket": "raw", "Key": "db/t/f.parquet"}, "s3"), resolver, SANDBOX)
    assert [(r.action, r.resource) for r in put] == [
        ("s3:PutObject", f"{RAW}/db/t/f.parquet"),
        ("kms:GenerateDataKey", KEY),
    ]


def test_an_unmapped_call_or_bucket_fails_instead_of_passing(resolver: Resolver) -> None:
    with pytest.raises(UnmappedCallError, match=r"file-manager: no IAM mapping for dynamodb.ExecuteStatement from"):
        call_requirements(_call("ExecuteStatement", {}), resolver, SANDBOX)
    with pytest.raises(UnmappedCallError, match="bucket 'elsewhere' has no deployed counterpart"):
        call_requirements(_call("GetObject", {"Bucket": "elsewhere", "Key": "k"}, "s3"), resolver, SANDBOX)


def test_state_machine_tasks_need_the_documented_actions(resolver: Resolver) -> None:
    definition = {
        "States": {
            "Plan": {
                "Type": "Task",
                "Resource": "arn:aws:states:::lambda:invoke",
                "Parameters": {"FunctionName": "arn:f"},
            },
            "Map": {
                "Type": "Map",
                "Iterator": {
                    "States": {
                        "Run": {
                            "Type": "Task",
                            "Resource": "arn:aws:states:::glue:startJobRun.sync",
                            "Parameters": {"JobName": "odp-dev-job"},
                        }
                    }
                },
            },
        }
    }
    found = [(r.action, r.resource) for r in state_machine_requirements("state-machine x", definition, resolver)]
    job = "arn:aws:glue:eu-west-1:111111111111:job/odp-dev-job"
    assert found == [
        ("lambda:InvokeFunction", "arn:f"),
        ("glue:StartJobRun", job),
        ("glue:GetJobRun", job),
        ("glue:GetJobRuns", job),
        ("glue:BatchStopJobRun", job),
    ]
    definition["States"]["Plan"]["Resource"] = "arn:aws:states:::dynamodb:putItem"
    with pytest.raises(UnmappedCallError, match="state Plan uses arn:aws:states:::dynamodb:putItem, which has no IAM"):
        state_machine_requirements("state-machine x", definition, resolver)


def test_folder_changes_become_the_s3_calls_s3a_would_make() -> None:
    before = {"db/t/.hoodie/1.commit": (1, 1), "db/t/old.parquet": (1, 1), "db/u/x.parquet": (1, 1)}
    after = {"db/t/.hoodie/1.commit": (1, 1), "db/t/.hoodie/2.commit": (1, 2), "db/u/x.parquet": (1, 1)}
    with aws_calls.CallRecorder() as recorder, aws_calls.acting_as("file-processor-job"):
        report_folder_changes("raw", before, after)
    assert [(c.operation, c.params) for c in recorder.calls] == [
        ("ListObjectsV2", {"Bucket": "raw", "Prefix": "db/t/"}),
        ("PutObject", {"Bucket": "raw", "Key": "db/t/.hoodie/2.commit"}),
        ("DeleteObject", {"Bucket": "raw", "Key": "db/t/old.parquet"}),
        ("GetObject", {"Bucket": "raw", "Key": "db/t/.hoodie/1.commit"}),
        ("GetObject", {"Bucket": "raw", "Key": "db/t/.hoodie/2.commit"}),
    ]
    with pytest.raises(ValueError, match=r"s3.GetObject recorded outside acting_as\(...\): whose call is it\?"):
        recorder.add("s3", "GetObject", {})


def test_catalog_sync_needs_catalog_database_and_each_glue_table(resolver: Resolver) -> None:
    base = {"source": "s", "schema_name": "app", "database": "app_raw", "is_active": True}
    mor = SimpleNamespace(
        **base, table_id="s.app.t", target_table="t", table_type=TableType.MERGE_ON_READ, partition_by=()
    )
    cow = SimpleNamespace(
        **base, table_id="s.app.u", target_table="u", table_type=TableType.COPY_ON_WRITE, partition_by=("d",)
    )
    gone = SimpleNamespace(**{**base, "is_active": False}, table_id="s.app.v", target_table="v", table_type=None)
    found = {(r.action, r.resource.rsplit(":", 1)[1]) for r in catalog_sync_requirements(resolver, [mor, cow, gone])}
    assert ("glue:GetDatabase", "database/app_raw") in found
    assert {("glue:UpdateTable", "table/app_raw/t_ro"), ("glue:UpdateTable", "table/app_raw/t_rt")} <= found
    assert ("glue:CreateTable", "catalog") in found
    assert ("glue:BatchCreatePartition", "table/app_raw/u") in found
    assert not any(resource.endswith(("/t", "/v")) for _, resource in found)
    assert not any(action == "glue:GetPartitions" and "/t_" in resource for action, resource in found)
