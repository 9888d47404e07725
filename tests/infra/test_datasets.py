"""Datasets construct on its own stack (Storage, Monitoring, Tracking, an imported File Processor), with cdk-nag:
the job, its role, the run history table, the state machine and its trigger, alarm and named queries."""

from __future__ import annotations

from pathlib import Path

import pytest
from aws_cdk import Environment, RemovalPolicy, Stack, Validations
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk.assertions import Match, Template
from cdk_nag import AwsSolutionsChecks

from infrastructure.application import cdk_json_context, new_app
from infrastructure.datasets import Datasets, dataset_query
from infrastructure.monitoring import Monitoring
from infrastructure.storage import RetentionSettings, Storage
from infrastructure.tracking import Tracking
from odp.config.loader import load_config
from odp.naming import DATASET_RUN_HISTORY

PROCESSOR_ARN = "arn:aws:states:eu-west-1:111111111111:stateMachine:odp-dev-file-processor-every_10_minutes"


@pytest.fixture(scope="module")
def template(repo_root: Path) -> Template:
    config = load_config(repo_root / "config")
    app = new_app(context=cdk_json_context())
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    stack = Stack(app, "DatasetsTest", env=Environment(account="111111111111", region="eu-west-1"))
    storage = Storage(
        stack, "Storage", environment="dev", retention=RetentionSettings(30, 365), removal_policy=RemovalPolicy.RETAIN
    )
    monitoring = Monitoring(stack, "Monitoring", environment="dev", key=storage.state_key, alarm_email=None)
    tracking = Tracking(
        stack, "Tracking", environment="dev", key=storage.state_key, removal_policy=RemovalPolicy.RETAIN
    )
    Datasets(
        stack,
        "Datasets",
        environment="dev",
        datasets=config.datasets,
        buckets=storage.buckets,
        zone_keys=storage.keys,
        state_key=storage.state_key,
        history_table=tracking.table(DATASET_RUN_HISTORY),
        alerts_topic=monitoring.topic,
        dashboard=monitoring.dashboard,
        file_processors=[sfn.StateMachine.from_state_machine_arn(stack, "Processor", PROCESSOR_ARN)],
        workgroup_name="odp-dev",
        library="odp_etl.zip",
        wheels_zip="odp_dependencies.gluewheels.zip",
        connection_names=["odp-dev-glue-a", "odp-dev-glue-b"],
        removal_policy=RemovalPolicy.RETAIN,
        log_retention=logs.RetentionDays.ONE_YEAR,
    )
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
                        "--odp_config_dir": Match.any_value(),
                        "--odp_dataset_history_table": Match.any_value(),
                        "--odp_topic_arn": Match.any_value(),
                        "--odp_catalog_sync": "true",
                        "--datalake-formats": "hudi",
                    }
                ),
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
