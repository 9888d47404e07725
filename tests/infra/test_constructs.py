"""Each construct of the stage on its own bare stack, with its typed props: aws_cdk.assertions on what it
creates and the cdk-nag audit (no finding left, no acknowledgment unused). FileManagerFunction, Network,
DeployAccess, SecureBucket, the Glue job base and Datasets have their own modules; the rest (EMR Serverless
included) are here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk.assertions import Match, Template

from infrastructure.access.catalog import Catalog, CatalogProps
from infrastructure.access.query import Query, QueryProps
from infrastructure.application import ASSET_CACHE, REPO_ROOT
from infrastructure.assets import GlueArtifacts, lambda_code
from infrastructure.foundation.network import Network, NetworkProps
from infrastructure.foundation.secure_bucket import SecureBucket, SecureBucketProps
from infrastructure.foundation.storage import RetentionSettings, Storage, StorageProps
from infrastructure.ingest.batch_manager import BatchManagerFunction, BatchManagerFunctionProps
from infrastructure.ingest.lambda_function import FunctionOwnerProps, FunctionSpec, OdpFunction, OdpFunctionProps
from infrastructure.ingest.tracking import Tracking, TrackingProps
from infrastructure.jobs.engines.emr_serverless import EmrServerless, EmrServerlessProps
from infrastructure.jobs.file_processor import FileProcessor, FileProcessorProps
from infrastructure.jobs.glue_job import GlueStage
from infrastructure.jobs.glue_jobs import GlueJobs, GlueJobsProps
from infrastructure.operations.monitoring import Monitoring, MonitoringProps
from odp.config.loader import load_config
from odp.config.models import Cadence, EngineName
from odp.contracts.base import LedgerTables
from odp.contracts.datasets import LakeRoots
from odp.contracts.job_kinds import JobDeployment, engines_in_use
from odp.contracts.state_machines import FileProcessorOnEmrServerless
from tests.support.bare_stack import assert_nag_clean, bare_stack

REMOVAL = pytest.mark.parametrize(
    ("removal", "deletion"),
    [(RemovalPolicy.RETAIN, "Retain"), (RemovalPolicy.DESTROY, "Delete")],
    ids=["retain", "destroy"],
)


@pytest.fixture(scope="module")
def config():
    return load_config(REPO_ROOT / "config")


@pytest.fixture(scope="module")
def code_dir() -> Path:
    return lambda_code(REPO_ROOT, ASSET_CACHE)


@REMOVAL
def test_storage(tmp_path, removal, deletion) -> None:
    app, stack = bare_stack(tmp_path)
    storage = Storage(
        stack, "Storage", StorageProps(environment="x", retention=RetentionSettings(7, 30), removal_policy=removal)
    )
    template = Template.from_stack(stack)
    assert set(storage.buckets) >= {"staging", "raw", "conformed", "purpose_built", "artifacts"}
    template.has_resource("AWS::S3::Bucket", {"DeletionPolicy": deletion})
    template.has_resource_properties("AWS::KMS::Key", {"EnableKeyRotation": True})
    assert_nag_clean(app)


def test_tracking_with_and_without_replicas(tmp_path) -> None:
    app, stack = bare_stack(tmp_path)
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    Tracking(stack, "Tracking", TrackingProps(environment="x", key=key))
    template = Template.from_stack(stack)
    template.has_resource("AWS::DynamoDB::GlobalTable", {"DeletionPolicy": "Retain"})
    template.has_resource_properties(
        "AWS::DynamoDB::GlobalTable", {"TableName": "odp-x-dataset-run-history", "BillingMode": "PAY_PER_REQUEST"}
    )
    assert_nag_clean(app)
    _, other = bare_stack(tmp_path / "other")
    props = TrackingProps(environment="x", key=kms.Key(other, "Key"), dr_region="eu-central-1")
    with pytest.raises(ValueError, match="replica key"):
        Tracking(other, "Tracking", props)


def test_catalog(tmp_path, config) -> None:
    app, stack = bare_stack(tmp_path)
    storage = Storage(stack, "Storage", StorageProps(environment="x", retention=RetentionSettings(7, 30)))
    Catalog(stack, "Catalog", CatalogProps(tables=config.tables, zone_buckets=storage.buckets))
    databases = Template.from_stack(stack).find_resources("AWS::Glue::Database").values()
    names = {d["Properties"]["DatabaseInput"]["Name"] for d in databases}
    assert {table.database for table in config.tables} <= names
    # kept when the stack goes, except when their own create is rolled back (docs/decisions/028)
    assert {(d["DeletionPolicy"], d["UpdateReplacePolicy"]) for d in databases} == {("RetainExceptOnCreate", "Retain")}
    assert_nag_clean(app)
    _, destroyed = bare_stack(tmp_path / "destroyed")
    buckets = Storage(destroyed, "Storage", StorageProps(environment="x", retention=RetentionSettings(7, 30))).buckets
    props = CatalogProps(tables=config.tables, zone_buckets=buckets, removal_policy=RemovalPolicy.DESTROY)
    Catalog(destroyed, "Catalog", props)
    databases = Template.from_stack(destroyed).find_resources("AWS::Glue::Database").values()
    assert {d["DeletionPolicy"] for d in databases} == {"Delete"}


@pytest.mark.parametrize("email", [None, "ops@example.com"])
def test_monitoring(tmp_path, email) -> None:
    app, stack = bare_stack(tmp_path)
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    Monitoring(stack, "Monitoring", MonitoringProps(environment="x", key=key, alarm_email=email))
    template = Template.from_stack(stack)
    template.has_resource_properties("AWS::SNS::Topic", {"TopicName": "odp-x-alerts"})
    template.resource_count_is("AWS::SNS::Subscription", 0 if email is None else 1)
    assert_nag_clean(app)


def test_odp_function(tmp_path, code_dir) -> None:
    app, stack = bare_stack(tmp_path)
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    tracking = Tracking(stack, "Tracking", TrackingProps(environment="x", key=key))
    OdpFunction(
        stack,
        "Function",
        OdpFunctionProps(
            FunctionOwnerProps(environment="x", tracking=tracking, key=key, code_dir=code_dir),
            FunctionSpec("lambdas.batch_manager.handler.handler", "batch_manager", Duration.seconds(30), "d"),
            memory_size=256,
        ),
    )
    template = Template.from_stack(stack)
    template.has_resource_properties(
        "AWS::Lambda::Function", {"FunctionName": "odp-x-batch-manager", "MemorySize": 256, "Timeout": 30}
    )
    template.has_resource("AWS::Logs::LogGroup", {"DeletionPolicy": "Retain"})
    assert_nag_clean(app)


def plans_bucket(stack, key: kms.IKey) -> s3.IBucket:
    """The artifacts bucket the plans go to, as Storage builds it (KMS, access logs, TLS only)."""
    logs_bucket = SecureBucket(stack, "AccessLogs").bucket
    props = SecureBucketProps(bucket_name="odp-x-artifacts", encryption_key=key, access_logs=logs_bucket)
    return SecureBucket(stack, "Plans", props).bucket


def test_batch_manager(tmp_path, code_dir) -> None:
    app, stack = bare_stack(tmp_path)
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    tracking = Tracking(stack, "Tracking", TrackingProps(environment="x", key=key))
    BatchManagerFunction(
        stack,
        "BatchManager",
        BatchManagerFunctionProps(
            environment="x",
            tracking=tracking,
            key=key,
            code_dir=code_dir,
            plans=plans_bucket(stack, key),
            removal_policy=RemovalPolicy.DESTROY,
            log_retention=logs.RetentionDays.ONE_WEEK,
        ),
    )
    template = Template.from_stack(stack)
    template.has_resource_properties(
        "AWS::Lambda::Function",
        {
            "FunctionName": "odp-x-batch-manager",
            "Environment": {
                "Variables": Match.object_like({"ODP_PLAN_BUCKET": {"Ref": Match.string_like_regexp("^Plans")}})
            },
        },
    )
    template.has_resource(
        "AWS::Logs::LogGroup", {"DeletionPolicy": "Delete", "Properties": Match.object_like({"RetentionInDays": 7})}
    )
    assert_nag_clean(app)


def _file_processor(stack, key: kms.IKey, monitoring: Monitoring, cadence: Cadence, **more) -> FileProcessor:
    """The cadence ``hourly``'s File Processor on a bare stack (its Glue job and Batch Manager by ARN)."""
    return FileProcessor(
        stack,
        "FileProcessor",
        FileProcessorProps(
            environment="x",
            cadence_name="hourly",
            cadence=cadence,
            batch_manager=lambda_.Function.from_function_arn(
                stack, "Manager", "arn:aws:lambda:eu-west-1:111111111111:function:odp-x-batch-manager"
            ),
            job_name="odp-x-file-processor-hourly",
            job_arn="arn:aws:glue:eu-west-1:111111111111:job/odp-x-file-processor-hourly",
            alerts_topic=monitoring.topic,
            key=key,
            plans=plans_bucket(stack, key),
            **more,
        ),
    )


def test_file_processor(tmp_path) -> None:
    app, stack = bare_stack(tmp_path)
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    monitoring = Monitoring(stack, "Monitoring", MonitoringProps(environment="x", key=key))
    _file_processor(stack, key, monitoring, Cadence(schedule="rate(1 hour)", batch_size=5, max_concurrency=3))
    template = Template.from_stack(stack)
    template.has_resource_properties(
        "AWS::StepFunctions::StateMachine", {"StateMachineName": "odp-x-file-processor-hourly"}
    )
    template.has_resource_properties(
        "AWS::Scheduler::Schedule", {"ScheduleExpression": "rate(1 hour)", "Target": Match.object_like({"Input": "{}"})}
    )
    assert_nag_clean(app)


@REMOVAL
def test_query(tmp_path, config, removal, deletion) -> None:
    app, stack = bare_stack(tmp_path)
    storage = Storage(stack, "Storage", StorageProps(environment="x", retention=RetentionSettings(7, 30)))
    query = Query(
        stack,
        "Query",
        QueryProps(
            environment="x",
            results_bucket=storage.athena_results,
            key=storage.state_key,
            tables=config.tables,
            removal_policy=removal,
            datasets=config.datasets,
        ),
    )
    template = Template.from_stack(stack)
    template.has_resource_properties(
        "AWS::Athena::WorkGroup",
        {"Name": "odp-x", "RecursiveDeleteOption": removal == RemovalPolicy.DESTROY},
    )
    workgroup = stack.resolve(query.workgroup.ref)
    for named in template.find_resources("AWS::Athena::NamedQuery").values():
        assert named["Properties"]["WorkGroup"] == workgroup
    assert sorted(query.queries) == sorted({f"row-count {table.database}" for table in config.tables})
    assert sorted(query.dataset_queries) == sorted(dataset.name for dataset in config.datasets)
    assert_nag_clean(app)


def _job_stage(stack, folder: Path, script: str | None) -> tuple[Storage, Tracking, GlueStage]:
    """Storage, network and trackers on ``stack``, and the GlueStage every job construct takes."""
    storage = Storage(stack, "Storage", StorageProps(environment="x", retention=RetentionSettings(7, 30)))
    network = Network(stack, "Network", NetworkProps(environment="x", cidr="10.1.0.0/16", log_key=storage.state_key))
    tracking = Tracking(stack, "Tracking", TrackingProps(environment="x", key=storage.state_key))
    artifacts = GlueArtifacts(
        directory=folder, script=script, library="odp_etl.zip", wheels_zip="w.gluewheels.zip", wheels=()
    )
    stage = GlueStage("x", network, storage.buckets, storage.keys, storage.state_key, artifacts)
    return storage, tracking, stage


def test_glue_jobs(tmp_path, config) -> None:
    app, stack = bare_stack(tmp_path)
    folder = tmp_path / "glue"
    folder.mkdir()
    (folder / "file_processor.py").write_text("print(1)\n", encoding="utf-8")
    _, tracking, stage = _job_stage(stack, folder, "file_processor.py")
    jobs = GlueJobs(
        stack,
        "Glue",
        GlueJobsProps(
            stage=stage,
            cadences=config.cadences.cadences,
            tracking=tracking,
            deployment=JobDeployment(
                environment="x",
                roots=LakeRoots("s3://raw", "s3://conformed", "s3://purpose-built"),
                artifacts_root="s3://artifacts",
                tracker_tables=tracking.names,
                dataset_history_table="odp-x-dataset-run-history",
                dataset_config_table="odp-x-dataset-config",
                ledger=LedgerTables(tracking.names.processing_tracker, tracking.names.processing_tracker_history),
                alerts_topic_arn="arn:aws:sns:eu-west-1:111111111111:odp-x-alerts",
                history_retention_days=30,
            ),
            databases=[table.database for table in config.tables],
        ),
    )
    template = Template.from_stack(stack)
    assert set(jobs.job_names) == set(config.cadences.cadences)
    template.has_resource_properties(
        "AWS::Glue::Job",
        Match.object_like(
            {
                "Name": "odp-x-file-processor-hourly",
                # the registry's static arguments of the cadence (odp.contracts.job_kinds.FILE_PROCESSOR)
                "DefaultArguments": Match.object_like(
                    {"--odp_cadence": "hourly", "--odp_raw_root": "s3://raw", "--odp_history_retention_days": "30"}
                ),
            }
        ),
    )
    template.resource_count_is("AWS::Glue::Job", len(config.cadences.cadences))
    template.has_resource_properties("AWS::Glue::SecurityConfiguration", {"Name": "odp-x-file-processor"})
    statements = json.dumps(template.find_resources("AWS::IAM::Policy"))
    assert '"Sid": "GlueMetrics"' in statements
    assert '"ODP"' in statements  # the table runs' cost metrics namespace
    assert_nag_clean(app)


def test_emr_serverless_application_and_a_cadence_on_it(tmp_path, config) -> None:
    app, stack = bare_stack(tmp_path)
    storage, tracking, stage = _job_stage(stack, tmp_path, None)
    monitoring = Monitoring(stack, "Monitoring", MonitoringProps(environment="x", key=storage.state_key))
    emr = EmrServerless(
        stack,
        "Emr",
        EmrServerlessProps(
            stage=stage,
            tracking=tracking,
            databases=["shop_raw"],
            alerts_topic=monitoring.topic,
            initial_executors=4,
            image_uri="111111111111.dkr.ecr.eu-west-1.amazonaws.com/odp-emr:1",
        ),
    )
    _file_processor(
        stack,
        storage.state_key,
        monitoring,
        Cadence(schedule="rate(1 hour)", batch_size=5, engine="emr_serverless"),
        engine=emr,
        static_arguments={"--odp_cadence": "hourly"},
    )
    template = Template.from_stack(stack)
    template.has_resource_properties(
        "AWS::EMRServerless::Application",
        {
            "Name": "odp-x-spark",
            "ReleaseLabel": "emr-7.12.0",
            "ImageConfiguration": {"ImageUri": "111111111111.dkr.ecr.eu-west-1.amazonaws.com/odp-emr:1"},
            "InitialCapacity": Match.array_with(
                [Match.object_like({"Key": "Executor", "Value": Match.object_like({"WorkerCount": 4})})]
            ),
        },
    )
    machine = next(iter(template.find_resources("AWS::StepFunctions::StateMachine").values()))
    values = machine["Properties"]["DefinitionSubstitutions"]
    assert set(values) == set(FileProcessorOnEmrServerless.placeholders())
    assert values["ExecutionTimeoutMinutes"] == "60"  # the cadence's job timeout (default)
    assert "'--odp_cadence', 'hourly'" in json.dumps(values["EntryPointArguments"])
    # the shipped configuration stays on Glue: no application
    assert EngineName.EMR_SERVERLESS not in engines_in_use(config)
    assert_nag_clean(app)
