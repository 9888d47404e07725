"""The Glue job base (infrastructure/jobs/glue_job.py): alone on a bare stack with default and non-default props
(aws_cdk.assertions + the cdk-nag audit), and across the app: every Glue job role built by it has the same
metrics condition, the per-database catalog scope and glue:GetSecurityConfiguration on ``*`` alone (items
5 and 6), every job has observability metrics and a KMS security configuration."""

from __future__ import annotations

import json

import pytest
from aws_cdk import App, Environment, Stack
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3_deployment as s3deploy
from aws_cdk.assertions import Match, Template

from infrastructure.application import cdk_json_context
from infrastructure.assets import GlueArtifacts
from infrastructure.foundation.network import Network, NetworkProps
from infrastructure.foundation.secure_bucket import SecureBucket, SecureBucketProps
from infrastructure.jobs.glue_job import (
    BucketKeys,
    GlueCommand,
    GlueJobFamily,
    GlueJobFamilyProps,
    GlueJobSpec,
    GlueStage,
)
from infrastructure.nag import AUDIT_CONTEXT, audit_acknowledgments
from tests.support.paths import REPO_ROOT

ARTIFACTS = GlueArtifacts(
    directory=REPO_ROOT, script=None, library="odp_etl.zip", wheels_zip="deps.gluewheels.zip", wheels=()
)


def _synth(tmp_path, *, streaming: bool) -> tuple[App, Template]:
    app = App(context={**cdk_json_context(), AUDIT_CONTEXT: True}, outdir=str(tmp_path))
    stack = Stack(app, "S", env=Environment(account="111111111111", region="eu-west-1"))
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    logs = SecureBucket(stack, "Logs").bucket
    bucket = SecureBucket(
        stack, "Artifacts", SecureBucketProps(encryption_key=key, access_logs=logs, access_logs_prefix="a/")
    ).bucket
    network = Network(stack, "Network", NetworkProps(environment="x", cidr="10.1.0.0/16", log_key=key))
    family = GlueJobFamily(
        stack,
        "Jobs",
        GlueJobFamilyProps(
            stage=GlueStage(
                environment="x",
                network=network,
                buckets={"artifacts": bucket},
                zone_keys={},
                state_key=key,
                artifacts=ARTIFACTS,
            ),
            purpose="streaming" if streaming else "batch",
            code_prefix="glue/x/",
            code_sources=[s3deploy.Source.data("job.py", "print(1)")],
            data_key=BucketKeys("two zones") if streaming else key,
            databases=["b_raw", "a_raw", "b_raw"],
            metric_namespaces=["ODP/X"] if streaming else (),
            prune_code=not streaming,
        ),
    )
    family.add_job(
        GlueJobSpec(
            construct_id="Job",
            name="odp-x-job",
            description="a job",
            script="job.py",
            arguments={"--odp_a": "1"},
            command=GlueCommand.STREAMING if streaming else GlueCommand.ETL,
            worker_type="G.2X" if streaming else "G.1X",
            number_of_workers=5 if streaming else 2,
            timeout_minutes=None if streaming else 60,
            max_concurrent_runs=1,
        )
    )
    return app, Template.from_stack(stack)


@pytest.mark.parametrize("streaming", [False, True], ids=["etl-default", "streaming-bucket-keys"])
def test_the_base_alone(tmp_path, streaming: bool) -> None:
    app, template = _synth(tmp_path, streaming=streaming)
    (security,) = template.find_resources("AWS::Glue::SecurityConfiguration")
    connections = list(template.find_resources("AWS::Glue::Connection"))  # the network's order
    template.has_resource_properties(
        "AWS::Glue::Job",
        {
            "Name": "odp-x-job",
            "GlueVersion": "5.1",
            "Command": Match.object_like({"Name": "gluestreaming" if streaming else "glueetl"}),
            "WorkerType": "G.2X" if streaming else "G.1X",
            "NumberOfWorkers": 5 if streaming else 2,
            "MaxRetries": 0,
            "SecurityConfiguration": {"Ref": security},
            "Connections": {"Connections": [{"Ref": c} for c in connections]},
            "DefaultArguments": Match.object_like(
                {
                    "--odp_a": "1",
                    "--enable-observability-metrics": "true",
                    "--enable-continuous-cloudwatch-log": "true",
                    "--datalake-formats": "hudi",
                    "--python-modules-installer-option": "--no-index",
                    "--extra-py-files": Match.any_value(),
                    # ODP's Hudi extensions (the catalog sync's decoding partition extractor), beside the library
                    "--extra-jars": Match.object_like(
                        {"Fn::Join": ["", ["s3://", Match.any_value(), "/glue/file_processor/odp-hudi-extensions.jar"]]}
                    ),
                }
            ),
            **({} if streaming else {"Timeout": 60}),
        },
    )
    s3_mode = "DISABLED" if streaming else "SSE-KMS"
    template.has_resource_properties(
        "AWS::Glue::SecurityConfiguration",
        {
            "Name": "odp-x-streaming" if streaming else "odp-x-batch",
            "EncryptionConfiguration": Match.object_like(
                {
                    "S3Encryptions": [Match.object_like({"S3EncryptionMode": s3_mode})],
                    "CloudWatchEncryption": Match.object_like({"CloudWatchEncryptionMode": "SSE-KMS"}),
                    "JobBookmarksEncryption": Match.object_like({"JobBookmarksEncryptionMode": "CSE-KMS"}),
                }
            ),
        },
    )
    metrics = ["Glue", "ODP/X"] if streaming else ["Glue"]
    template.has_resource_properties(
        "AWS::IAM::Policy",
        {
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        Match.object_like(
                            {"Sid": "GlueMetrics", "Condition": {"StringEquals": {"cloudwatch:namespace": metrics}}}
                        )
                    ]
                )
            }
        },
    )
    app.synth()
    audit = audit_acknowledgments(app)
    assert audit.unacknowledged == [], audit.unacknowledged
    assert audit.unmatched == [], audit.unmatched


def _glue_roles(template: dict) -> dict[str, list[dict]]:
    """Role logical id -> statements, for every role a Glue job of the template runs as."""
    resources = template["Resources"]
    roles = {
        job["Properties"]["Role"]["Fn::GetAtt"][0] for job in resources.values() if job["Type"] == "AWS::Glue::Job"
    }
    return {
        role: [
            statement
            for policy in resources.values()
            if policy["Type"] == "AWS::IAM::Policy" and {"Ref": role} in policy["Properties"]["Roles"]
            for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        ]
        for role in roles
    }


def _listed(value) -> list:
    return value if isinstance(value, list) else [value]


def _templates(synthesized, streaming_stage) -> dict[str, dict]:
    return {**synthesized.data_lakes, "streaming stage": streaming_stage.template}


def test_the_job_roles_do_not_drift(synthesized, streaming_stage) -> None:
    """Item 6: File Processor, dataset and streaming roles: metrics conditioned, catalog scoped per database."""
    seen = set()
    for label, template in _templates(synthesized, streaming_stage).items():
        roles = _glue_roles(template)
        assert len(roles) >= 2, label
        for role, statements in roles.items():
            description = template["Resources"][role]["Properties"]["Description"]
            seen.add(description.split(" ", 2)[2])
            metrics = [s for s in statements if "cloudwatch:PutMetricData" in _listed(s["Action"])]
            assert len(metrics) == 1, (label, description)
            namespaces = metrics[0]["Condition"]["StringEquals"]["cloudwatch:namespace"]
            assert namespaces[0] == "Glue", (label, description)
            assert _listed(metrics[0]["Action"]) == ["cloudwatch:PutMetricData"]
            catalog = json.dumps([s["Resource"] for s in statements if "glue:CreateTable" in _listed(s["Action"])])
            for scoped in (":database/", ":table/"):
                assert scoped in catalog, (label, description)
                assert f"{scoped}*" not in catalog, (label, description)
    assert seen == {"file-processor Glue jobs", "datasets Glue jobs", "streaming Glue jobs"}


def test_get_security_configuration_is_granted_on_any_resource_alone(synthesized, streaming_stage) -> None:
    """Item 5: glue:GetSecurityConfiguration supports no resource-level permission; on an ARN it never applies."""
    for label, template in _templates(synthesized, streaming_stage).items():
        for role, statements in _glue_roles(template).items():
            granting = [s for s in statements if "glue:GetSecurityConfiguration" in _listed(s["Action"])]
            assert granting == [
                {
                    "Action": "glue:GetSecurityConfiguration",
                    "Effect": "Allow",
                    "Resource": "*",
                    "Sid": "GlueSecurityConfiguration",
                }
            ], (label, role)


def test_every_job_has_observability_metrics_and_a_kms_security_configuration(synthesized, streaming_stage) -> None:
    for label, template in _templates(synthesized, streaming_stage).items():
        resources = template["Resources"]
        for job in (r["Properties"] for r in resources.values() if r["Type"] == "AWS::Glue::Job"):
            assert job["DefaultArguments"]["--enable-observability-metrics"] == "true", (label, job["Name"])
            security = resources[job["SecurityConfiguration"]["Ref"]]["Properties"]
            encryption = security["EncryptionConfiguration"]
            assert encryption["CloudWatchEncryption"]["CloudWatchEncryptionMode"] == "SSE-KMS"
            (s3_encryption,) = encryption["S3Encryptions"]
            # Only the dataset job leaves S3 to its buckets' zone keys (datasets.ZONE_KEYS_REASON).
            expected = "DISABLED" if job["Name"].endswith("-dataset-job") else "SSE-KMS"
            assert s3_encryption["S3EncryptionMode"] == expected, (label, job["Name"])
