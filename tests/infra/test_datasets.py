"""Datasets construct on its own stack (Storage, Monitoring, Tracking, an imported File Processor), with cdk-nag:
the job, its role, the run history table, the state machine and its trigger, alarm and named queries; the job reads
its configuration from table_config and dataset_config, never from S3."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aws_cdk import App, Environment, RemovalPolicy, Stack, Validations
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3_deployment as s3deploy
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk.assertions import Match, Template
from cdk_nag import AwsSolutionsChecks

from infrastructure.access.query import Query, QueryProps, dataset_query
from infrastructure.application import cdk_json_context, new_app
from infrastructure.assets import GlueArtifacts
from infrastructure.foundation.network import Network, NetworkProps
from infrastructure.foundation.storage import RetentionSettings, Storage, StorageProps
from infrastructure.ingest.tracking import Tracking, TrackingProps
from infrastructure.jobs.datasets import DatasetJob, DatasetJobProps, Datasets, DatasetsProps
from infrastructure.jobs.glue_job import GlueStage
from infrastructure.nag import AUDIT_CONTEXT, audit_acknowledgments
from infrastructure.operations.monitoring import Monitoring, MonitoringProps
from odp.config.loader import load_config
from odp.contracts.base import LedgerTables
from odp.contracts.datasets import LakeRoots
from odp.contracts.job_kinds import JobDeployment
from odp.naming import DATASET_CONFIG, DATASET_RUN_HISTORY, PROCESSING_TRACKER, PROCESSING_TRACKER_HISTORY
from tests.support.synth import role_statements_of

PROCESSOR_ARN = "arn:aws:states:eu-west-1:111111111111:stateMachine:odp-dev-file-processor-every_10_minutes"


def _stack(repo_root: Path, *, audit: bool = False) -> tuple[App, Stack]:
    """Storage, Network, Tracking, Monitoring, Query, the dataset job and the datasets flow on one stack."""
    config = load_config(repo_root / "config")
    app = new_app(context={**cdk_json_context(), **({AUDIT_CONTEXT: True} if audit else {})})
    if not audit:
        Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    stack = Stack(app, "DatasetsTest", env=Environment(account="111111111111", region="eu-west-1"))
    storage = Storage(
        stack,
        "Storage",
        StorageProps(environment="dev", retention=RetentionSettings(30, 365), removal_policy=RemovalPolicy.RETAIN),
    )
    network = Network(stack, "Network", NetworkProps(environment="dev", cidr="10.1.0.0/16", log_key=storage.state_key))
    monitoring = Monitoring(
        stack, "Monitoring", MonitoringProps(environment="dev", key=storage.state_key, alarm_email=None)
    )
    tracking = Tracking(
        stack, "Tracking", TrackingProps(environment="dev", key=storage.state_key, removal_policy=RemovalPolicy.RETAIN)
    )
    Query(
        stack,
        "Query",
        QueryProps(
            environment="dev",
            results_bucket=storage.athena_results,
            key=storage.state_key,
            tables=[],
            datasets=config.datasets,  # each dataset's named query is the access layer's
        ),
    )
    library = s3deploy.BucketDeployment(
        stack,
        "Library",
        sources=[s3deploy.Source.data("odp_etl.zip", "zip")],
        destination_bucket=storage.buckets["artifacts"],
        destination_key_prefix="glue/file_processor/",
    )
    job = DatasetJob(
        stack,
        "DatasetJob",
        DatasetJobProps(
            stage=GlueStage(
                environment="dev",
                network=network,
                buckets=storage.buckets,
                zone_keys=storage.keys,
                state_key=storage.state_key,
                artifacts=GlueArtifacts(
                    directory=repo_root,
                    script=None,
                    library="odp_etl.zip",
                    wheels_zip="odp_dependencies.gluewheels.zip",
                    wheels=(),
                ),
            ),
            datasets=config.datasets,
            history_table=tracking.table(DATASET_RUN_HISTORY),
            alerts_topic=monitoring.topic,
            library=library,
            ledger_tracker=tracking.table(PROCESSING_TRACKER),
            ledger_history=tracking.table(PROCESSING_TRACKER_HISTORY),
            table_config=tracking.table("table_config"),
            dataset_config=tracking.table(DATASET_CONFIG),
            deployment=JobDeployment(
                environment="dev",
                roots=LakeRoots(
                    raw=f"s3://{storage.buckets['raw'].bucket_name}",
                    conformed=f"s3://{storage.buckets['conformed'].bucket_name}",
                    purpose_built=f"s3://{storage.buckets['purpose_built'].bucket_name}",
                ),
                artifacts_root=f"s3://{storage.buckets['artifacts'].bucket_name}",
                tracker_tables=tracking.names,
                dataset_history_table=tracking.table(DATASET_RUN_HISTORY).table_name,
                dataset_config_table=tracking.table(DATASET_CONFIG).table_name,
                ledger=LedgerTables(
                    tracking.table(PROCESSING_TRACKER).table_name,
                    tracking.table(PROCESSING_TRACKER_HISTORY).table_name,
                ),
                alerts_topic_arn=monitoring.topic.topic_arn,
            ),
        ),
    )
    Datasets(
        stack,
        "Datasets",
        DatasetsProps(
            environment="dev",
            datasets=config.datasets,
            job=job,
            state_key=storage.state_key,
            alerts_topic=monitoring.topic,
            dashboard=monitoring.dashboard,
            file_processors=[sfn.StateMachine.from_state_machine_arn(stack, "Processor", PROCESSOR_ARN)],
            log_retention=logs.RetentionDays.ONE_YEAR,
        ),
    )
    return app, stack


@pytest.fixture(scope="module")
def template(repo_root: Path) -> Template:
    app, stack = _stack(repo_root)
    app.synth()  # cdk-nag raises on any unacknowledged finding
    return Template.from_stack(stack)


def test_job_runs_one_at_a_time_with_the_contract_arguments(template: Template) -> None:
    template.has_resource_properties(
        "AWS::Glue::Job",
        Match.object_like(
            {
                "Name": "odp-dev-dataset-job",
                "ExecutionProperty": {"MaxConcurrentRuns": 1},
                "MaxRetries": 0,
                "DefaultArguments": Match.object_like(
                    {
                        "--odp_table_config": "odp-dev-table-config",
                        "--odp_dataset_config": {"Ref": Match.string_like_regexp("^TrackingDatasetConfig")},
                        "--odp_dataset_history_table": Match.any_value(),
                        "--odp_topic_arn": Match.any_value(),
                        "--odp_catalog_sync": "true",
                        "--odp_ledger_tracker": Match.any_value(),  # processing_tracker: the datasets' leases and runs
                        "--odp_ledger_history": Match.any_value(),  # processing_tracker_history: their rows
                        "--datalake-formats": "hudi",
                        "--enable-observability-metrics": "true",
                    }
                ),
            }
        ),
    )


def _job(template: Template) -> dict:
    (job,) = template.find_resources("AWS::Glue::Job", {"Properties": {"Name": "odp-dev-dataset-job"}}).values()
    return job["Properties"]


def _table(template: Template, name: str) -> str:
    (logical,) = template.find_resources("AWS::DynamoDB::GlobalTable", {"Properties": {"TableName": name}})
    return logical


def test_the_configuration_comes_from_dynamodb_never_from_s3(template: Template) -> None:
    """Issue 46 item 4: one configuration source. No --odp_config_dir; the family ships the job script alone (no
    config/ asset) and prunes what it did not ship under glue/datasets/."""
    arguments = _job(template)["DefaultArguments"]
    assert "--odp_config_dir" not in arguments
    assert not any("glue/datasets" in json.dumps(value) for value in arguments.values())
    (code,) = [
        deployment["Properties"]
        for deployment in template.find_resources("Custom::CDKBucketDeployment").values()
        if deployment["Properties"].get("DestinationBucketKeyPrefix") == "glue/datasets/"
    ]
    assert len(code["SourceObjectKeys"]) == 1  # dataset_job.py (Source.data), not etl/jobs/ and config/
    assert code.get("Prune", True) is True


def test_the_job_reads_dataset_config_and_table_config_and_nothing_more(template: Template) -> None:
    """What odp.config.store.dataset_job_config calls: Scan of dataset_config, GetItem on table_config."""
    role = _job(template)["Role"]["Fn::GetAtt"][0]
    statements = role_statements_of(template.to_json(), role)
    granted: dict[str, set[str]] = {}
    for statement in statements:
        resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        for resource in resources:
            text = json.dumps(resource)
            for table in ("odp-dev-table-config", "odp-dev-dataset-config"):
                if _table(template, table) in text:
                    granted.setdefault(table, set()).update(actions)
    assert granted == {"odp-dev-dataset-config": {"dynamodb:Scan"}, "odp-dev-table-config": {"dynamodb:GetItem"}}
    template.has_resource_properties(
        "AWS::DynamoDB::GlobalTable",
        Match.object_like(
            {
                "TableName": "odp-dev-dataset-config",
                "KeySchema": [{"AttributeName": "dataset", "KeyType": "HASH"}],
            }
        ),
    )


def test_history_table_and_trigger(template: Template) -> None:
    template.has_resource_properties(
        "AWS::DynamoDB::GlobalTable",
        Match.object_like(
            {
                "TableName": "odp-dev-dataset-run-history",
                "KeySchema": [
                    {"AttributeName": "dataset", "KeyType": "HASH"},
                    {"AttributeName": "run_at", "KeyType": "RANGE"},
                ],
                "TimeToLiveSpecification": {"AttributeName": "expires_at", "Enabled": True},
            }
        ),
    )
    template.has_resource_properties(
        "AWS::Events::Rule",
        Match.object_like(
            {
                "EventPattern": {
                    "source": ["aws.states"],
                    "detail-type": ["Step Functions Execution Status Change"],
                    "detail": {"status": ["SUCCEEDED"], "stateMachineArn": [PROCESSOR_ARN]},
                }
            }
        ),
    )
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm", Match.object_like({"AlarmName": "odp-dev-datasets-failed"})
    )


def test_a_named_query_per_dataset(template: Template, repo_root: Path) -> None:
    config = load_config(repo_root / "config")
    queries = template.find_resources("AWS::Athena::NamedQuery")
    assert sorted(q["Properties"]["Name"] for q in queries.values()) == sorted(
        f"dataset {d.name}" for d in config.datasets
    )
    clean = next(d for d in config.datasets if d.name == "trips_clean")
    assert dataset_query(clean) == (
        "SELECT COUNT(*) AS row_count, COUNT(DISTINCT _hoodie_record_key) AS distinct_keys, "
        'COUNT(*) = COUNT(DISTINCT _hoodie_record_key) AS valid FROM "taxi_trips_dms_conformed"."trips_clean"'
    )


def test_security_configuration_encrypts_logs_and_bookmarks_objects_keep_their_zone_key(template: Template) -> None:
    """One job writes two zones with different keys: S3 encryption stays with each bucket's default key
    (ZONE_KEYS_REASON, README), which both zone buckets set to SSE-KMS with their own key."""
    template.has_resource_properties(
        "AWS::Glue::SecurityConfiguration",
        Match.object_like(
            {
                "Name": "odp-dev-datasets",
                "EncryptionConfiguration": Match.object_like(
                    {
                        "S3Encryptions": [{"S3EncryptionMode": "DISABLED"}],
                        "CloudWatchEncryption": Match.object_like({"CloudWatchEncryptionMode": "SSE-KMS"}),
                        "JobBookmarksEncryption": Match.object_like({"JobBookmarksEncryptionMode": "CSE-KMS"}),
                    }
                ),
            }
        ),
    )
    template.has_resource_properties(
        "AWS::S3::Bucket",
        Match.object_like(
            {
                "BucketName": Match.string_like_regexp("odp-dev-conformed-"),
                "BucketEncryption": {
                    "ServerSideEncryptionConfiguration": [
                        Match.object_like(
                            {"ServerSideEncryptionByDefault": Match.object_like({"SSEAlgorithm": "aws:kms"})}
                        )
                    ]
                },
            }
        ),
    )


def test_the_named_queries_refer_to_the_workgroup(template: Template) -> None:
    """Item 1: a literal workgroup name lets CreateNamedQuery run before the workgroup exists."""
    (workgroup,) = template.find_resources("AWS::Athena::WorkGroup")
    queries = template.find_resources("AWS::Athena::NamedQuery")
    assert queries
    for query in queries.values():
        assert query["Properties"]["WorkGroup"] == {"Ref": workgroup}


def test_both_zone_buckets_encrypt_with_their_own_key(template: Template) -> None:
    buckets = template.find_resources("AWS::S3::Bucket")
    keys = {}
    for bucket in buckets.values():
        name = json.dumps(bucket["Properties"].get("BucketName"))
        for zone in ("conformed", "purpose-built"):
            if f"odp-dev-{zone}-" in name:
                (rule,) = bucket["Properties"]["BucketEncryption"]["ServerSideEncryptionConfiguration"]
                assert rule["ServerSideEncryptionByDefault"]["SSEAlgorithm"] == "aws:kms"
                keys[zone] = json.dumps(rule["ServerSideEncryptionByDefault"]["KMSMasterKeyID"])
    assert len(set(keys.values())) == 2, keys


def test_cdk_nag_audit_of_the_job_and_the_flow(repo_root: Path) -> None:
    app, _ = _stack(repo_root, audit=True)
    app.synth()
    audit = audit_acknowledgments(app)
    assert audit.unacknowledged == []
    assert audit.unmatched == []
