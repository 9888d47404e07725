"""Permissions proven offline: every AWS call each deployed principal's code made in the local flow,
and every service integration of the state machines, is allowed by that principal's policies in the
synthesized template of every environment; removing a needed grant fails with a sentence naming the
principal, the action and the resource.

The flow runs once per module (real handlers, real job on Spark + Hudi, real config loader; the
datasets state machine on moto running the real dataset job; the smoke check against moto per
environment); the app is synthesized once per session (tests/infra/conftest.py). The streaming job is
covered in test_streaming_permissions.py. The same recording is checked against the stage with a cadence on EMR
Serverless and Lake Formation on (tests/support/emr_stage.py): the File Processor's calls against its execution
role too, the EMR Serverless task of the state machine, the endpoints its application's subnets need.
"""

from __future__ import annotations

import copy
import json
import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml
from botocore.stub import Stubber
from moto import mock_aws

from etl.hudi.timeline import latest_instant
from odp.config.loader import OdpConfig, load_config
from odp.naming import TrackerTableNames
from odp.operations.canary import canary_jobs, emr_canary_machines, emr_canary_request, run_canary, run_emr_canary
from odp.operations.smoke import check_environment
from odp.tracker.dataset_history import dataset_history_table_name
from odp.tracker.schema import create_tables
from sandbox import aws_calls
from sandbox.account import (
    RAW_BUCKET,
    STAGING_BUCKET,
    ExecutionResult,
    LocalAccount,
    SandboxLayout,
    environment_variables,
)
from sandbox.datasets import TRIPS, lake_roots
from sandbox.datasets_flow import (
    ARTIFACTS_BUCKET,
    CONFORMED_BUCKET,
    PURPOSE_BUILT_BUCKET,
    DatasetsStateMachine,
    file_processor_event,
)
from sandbox.demo_data import DemoGenerator
from sandbox.runner import PROCESS_ENVIRONMENT, run_sandbox
from tests.infra.permissions.check import (
    check_reachability,
    check_template,
    state_machine_definition,
    without_action,
)
from tests.infra.permissions.reachability import without_endpoint
from tests.infra.permissions.requirements import Translation, lake_formation_on
from tests.infra.permissions.template import (
    EMR_DATASET_JOB,
    EMR_FILE_PROCESSOR,
    Deployment,
    Resolver,
    emr_serverless_runs,
    encryption_key_arn,
    find_bucket,
    find_by_name,
    principals,
)
from tests.support.emr_stage import EMR_CADENCE, VIEWS
from tests.support.emr_stage import EMR_DATASET as EMR_DATASET_NAME
from tests.support.emr_stubs import RUN_ID, stub_job_run
from tests.support.streaming_stage import StreamingStage
from tests.support.synth import SynthesizedApp

PRODUCTS = "inventory_debezium.inventory.products"
TRIPS_CADENCE = "every_10_minutes"
SANDBOX = "sandbox"
ENVIRONMENTS = ("dev", "test", "prod")


@dataclass(frozen=True)
class RecordedFlow:
    """Calls by the environment they ran in, and how that environment's names map to a deployed one."""

    calls: dict[str, list[aws_calls.AwsCall]]
    translations: dict[str, Translation]
    datasets: DatasetExecutions

    def of(self, principal: str) -> list[aws_calls.AwsCall]:
        return [call for calls in self.calls.values() for call in calls if call.principal == principal]


def _smoke_check_calls(config: OdpConfig, environment: str) -> list[aws_calls.AwsCall]:
    """The smoke check of ``environment`` against moto holding that environment's tables."""
    region = config.environments.environments[environment].region
    account = config.environments.environments[environment].account
    with mock_aws(), aws_calls.CallRecorder() as recorder:
        dynamodb = boto3.client("dynamodb", region_name=region)
        create_tables(dynamodb, TrackerTableNames.for_environment(environment))
        glue = boto3.client("glue", region_name=region)
        jobs = canary_jobs(config, environment)
        for job in jobs:
            glue.create_job(Name=job.name, Role="arn:aws:iam::123456789012:role/g", Command={"Name": "glueetl"})
        with aws_calls.acting_as(aws_calls.CONFIG_LOADER):
            failures = check_environment(
                config, environment, dynamodb, boto3.client("stepfunctions", region_name=region), account
            )
            # The canary runs as the same role (infrastructure/pipeline.py post_deploy_commands): its own calls.
            canary_failures = run_canary(glue, jobs, timeout_seconds=600, sleep=lambda _: None, report=lambda _: None)
    assert failures, "moto has no state machines and no config items: the smoke check must report them"
    assert canary_failures == []
    return recorder.calls


@dataclass(frozen=True)
class DatasetExecutions:
    """The datasets state machine run twice on moto, each started by a File Processor execution's event."""

    failed: ExecutionResult  # trips_clean's config gained a fail rule the data breaks
    succeeded: ExecutionResult  # the configuration as shipped
    strict_left_nothing: bool  # no dataset commit after the failed execution
    written: dict[str, bool]  # dataset -> a commit exists after the successful execution
    history: dict[str, list[str]]  # dataset -> statuses of its run history items


def _run_datasets_state_machine(
    config: OdpConfig, layout: SandboxLayout, spark: Any, event: dict[str, Any], *, work: Path, repo_root: Path
) -> DatasetExecutions:
    """First with a fail rule trips_clean's data breaks (the job fails: NotifyFailure), then as shipped; each
    configuration loaded into dataset_config by the Configuration Manager before the run, as a deploy does."""
    strict = work / "strict-config"
    shutil.copytree(repo_root / "config", strict)
    clean = strict / "datasets" / "trips_clean.yaml"
    document = yaml.safe_load(clean.read_text())
    document["quality"].append({"type": "expression", "name": "cheap_trips_only", "expression": "total_amount < 10"})
    clean.write_text(yaml.safe_dump(document, sort_keys=False))
    roots = lake_roots(layout)
    paths = {d.name: roots.dataset_path(d) for d in config.datasets}
    with environment_variables(PROCESS_ENVIRONMENT), LocalAccount(config, layout) as account:
        machine = DatasetsStateMachine(account, spark)
        machine.create()
        account.load_configuration(load_config(strict))
        failed = machine.run(event)
        strict_left_nothing = all(latest_instant(spark, path) is None for path in paths.values())
        account.load_configuration(config)
        succeeded = machine.run(event)
        table = account.dynamodb().Table(dataset_history_table_name(SANDBOX))
        history: dict[str, list[str]] = {}
        for item in table.scan()["Items"]:
            history.setdefault(str(item["dataset"]), []).append(str(item["status"]))
    written = {name: latest_instant(spark, path) is not None for name, path in paths.items()}
    return DatasetExecutions(failed, succeeded, strict_left_nothing, written, history)


@pytest.fixture(scope="module")
def recorded(config: OdpConfig, spark: Any, tmp_path_factory: pytest.TempPathFactory, repo_root: Path) -> RecordedFlow:
    """A full load then a CDC round of one table, a full load of the trips, and the datasets state
    machine started by the trips' File Processor execution, every principal's calls recorded."""
    work = tmp_path_factory.mktemp("permissions")
    layout = SandboxLayout(lake=work / "lake", staging=work / "staging")
    layout.staging.mkdir()
    generator = DemoGenerator(config, layout.staging, table_ids=(PRODUCTS, TRIPS))
    with aws_calls.CallRecorder() as recorder:
        generator.generate_round(0)
        first = run_sandbox(config, layout, spark)
        generator.generate_round(1)
        second = run_sandbox(config, layout, spark, cadence="every_15_minutes")
        trips = next(c for c in first.cadences if c.cadence == TRIPS_CADENCE)
        assert trips.output is not None, trips
        event = file_processor_event(trips.execution_arn, trips.output)
        datasets = _run_datasets_state_machine(config, layout, spark, event, work=work, repo_root=repo_root)
    assert first.ok, first
    assert second.ok, second
    assert second.table(PRODUCTS).files >= 1
    calls = {SANDBOX: recorder.calls}
    buckets = {
        STAGING_BUCKET: "staging",
        RAW_BUCKET: "raw",
        ARTIFACTS_BUCKET: "artifacts",
        CONFORMED_BUCKET: "conformed",
        PURPOSE_BUILT_BUCKET: "purpose-built",
    }
    translations = {SANDBOX: Translation(SANDBOX, buckets)}
    for environment in ENVIRONMENTS:
        calls[environment] = _smoke_check_calls(config, environment)
        translations[environment] = Translation(environment, {})
    return RecordedFlow(calls, translations, datasets)


def _failures(
    synthesized: SynthesizedApp, config: OdpConfig, recorded: RecordedFlow, environment: str, template: dict
) -> list[str]:
    """Every refusal in ``template`` (an environment's DataLake stack, or a changed copy of it)."""
    settings = config.environments.environments[environment]
    resolver = Resolver(template, Deployment(environment, settings.account, settings.region))
    calls = {name: calls for name, calls in recorded.calls.items() if name in (SANDBOX, environment)}
    return check_template(
        resolver, calls, recorded.translations, synthesized.asset_text, tables=config.tables, datasets=config.datasets
    )


@pytest.mark.spark
@pytest.mark.slow
def test_the_flow_exercised_every_principal(recorded: RecordedFlow) -> None:
    """The recording is worth checking: each principal made calls, including the ones item 2 is about."""
    operations = {
        principal: {(c.service, c.operation) for c in recorded.of(principal)}
        for principal in (
            aws_calls.FILE_MANAGER,
            aws_calls.BATCH_MANAGER,
            aws_calls.FILE_PROCESSOR_JOB,
            aws_calls.CONFIG_LOADER,
            aws_calls.DATASET_JOB,
        )
    }
    assert ("dynamodb", "TransactWriteItems") in operations[aws_calls.FILE_MANAGER]
    assert {("dynamodb", "Query"), ("dynamodb", "Scan")} <= operations[aws_calls.BATCH_MANAGER]
    assert {("dynamodb", "UpdateItem"), ("s3", "GetObject"), ("s3", "PutObject")} <= operations[
        aws_calls.FILE_PROCESSOR_JOB
    ]
    assert {
        ("dynamodb", "Scan"),
        ("dynamodb", "BatchWriteItem"),
        ("dynamodb", "DescribeTable"),
        ("glue", "StartJobRun"),  # the canary, as the same role
        ("glue", "GetJobRun"),
    } <= operations[aws_calls.CONFIG_LOADER]
    scans = {(c.params["TableName"], c.origin) for c in recorded.of(aws_calls.CONFIG_LOADER) if c.operation == "Scan"}
    origin = "odp/config/manager.py (_scan_all)"
    assert scans == {
        ("odp-sandbox-table-config", origin),
        ("odp-sandbox-batch-config", origin),
        ("odp-sandbox-dataset-config", origin),
    }
    dataset_job = {(c.service, c.operation, c.params.get("Bucket")) for c in recorded.of(aws_calls.DATASET_JOB)}
    assert not any(bucket == ARTIFACTS_BUCKET for _, _, bucket in dataset_job)  # no configuration from S3
    config_reads = {
        (c.operation, c.params["TableName"], c.origin)
        for c in recorded.of(aws_calls.DATASET_JOB)
        if c.params.get("TableName") in ("odp-sandbox-table-config", "odp-sandbox-dataset-config")
    }
    assert config_reads == {  # the job's configuration, as the Configuration Manager loaded it
        ("Scan", "odp-sandbox-dataset-config", "odp/config/store.py (active)"),
        ("GetItem", "odp-sandbox-table-config", "odp/config/store.py (_item)"),
    }
    assert {
        ("s3", "GetObject", RAW_BUCKET),  # Spark reads the trips
        ("s3", "PutObject", CONFORMED_BUCKET),  # and writes the datasets
        ("s3", "PutObject", PURPOSE_BUILT_BUCKET),
        ("dynamodb", "PutItem", None),  # run history
        ("dynamodb", "UpdateItem", None),  # each dataset's lease (--odp_ledger_tracker, as deployed)
        ("sns", "Publish", None),  # one notification per run that wrote or failed
    } <= dataset_job
    leases = {
        (c.params["TableName"], c.params["Key"]["table_id"])
        for c in recorded.of(aws_calls.DATASET_JOB)
        if c.operation == "UpdateItem"
    }
    assert ("odp-sandbox-processing-tracker", "dataset:trips_clean") in leases


@pytest.mark.spark
@pytest.mark.slow
def test_the_datasets_state_machine_runs_as_production_starts_it(recorded: RecordedFlow) -> None:
    """stepfunctions/datasets.glue.asl.json on moto, started with the trips' File Processor execution event:
    a failed fail rule ends it in NotifyFailure (SNS) with nothing written; as shipped, it refreshes both."""
    runs = recorded.datasets
    assert (runs.failed.status, runs.failed.error) == ("FAILED", "DatasetsFailed")
    subjects = [alert["subject"] for alert in runs.failed.alerts]
    assert "ODP datasets failed" in subjects  # the state machine's NotifyFailure
    assert "ODP dataset trips_clean: quality_failed" in subjects  # the job's own notification
    failure = next(a["message"] for a in runs.failed.alerts if a["subject"] == "ODP datasets failed")
    assert "cheap_trips_only" in json.dumps(failure)
    assert runs.strict_left_nothing
    assert runs.succeeded.status == "SUCCEEDED", runs.succeeded
    assert runs.written == {"trips_clean": True, "revenue_per_vendor_day": True}
    assert sorted(runs.history["trips_clean"]) == ["quality_failed", "written"]
    assert "written" in runs.history["revenue_per_vendor_day"]


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_every_call_is_allowed_by_the_principals_policies(
    synthesized: SynthesizedApp, config: OdpConfig, recorded: RecordedFlow, environment: str
) -> None:
    """And reachable (issue 24, item 2): the jobs run in isolated subnets; every service they call has an
    endpoint there."""
    template = synthesized.data_lakes[environment]
    failures = _failures(synthesized, config, recorded, environment, template)
    failures += _unreachable(config, recorded, environment, template)
    assert failures == [], "\n".join(failures)


def _unreachable(config: OdpConfig, recorded: RecordedFlow, environment: str, template: dict) -> list[str]:
    settings = config.environments.environments[environment]
    resolver = Resolver(template, Deployment(environment, settings.account, settings.region))
    calls = {name: calls for name, calls in recorded.calls.items() if name in (SANDBOX, environment)}
    return check_reachability(resolver, calls, tables=config.tables, datasets=config.datasets)


@pytest.mark.spark
@pytest.mark.slow
def test_removing_the_sns_endpoint_fails_naming_the_dataset_jobs_publish(
    synthesized: SynthesizedApp, config: OdpConfig, recorded: RecordedFlow
) -> None:
    template = synthesized.data_lakes["dev"]
    settings = config.environments.environments["dev"]
    changed = without_endpoint(
        template, Resolver(template, Deployment("dev", settings.account, settings.region)), "sns"
    )

    failures = _unreachable(config, recorded, "dev", changed)

    assert len(failures) == 2  # one per subnet of the dataset job's two connections
    for failure in failures:
        assert failure.startswith("dataset-job (Glue job odp-dev-dataset-job) cannot reach sns from subnet "), failure
        assert failure.endswith(
            ": no VPC endpoint com.amazonaws.eu-west-1.sns in or for the subnet and no NAT route: needed by "
            "sns.Publish from etl/jobs/dataset_job.py (record)"
        ), failure


def _without_action(template: dict, config: OdpConfig, principal: str, action: str) -> dict:
    settings = config.environments.environments["dev"]
    return without_action(Resolver(template, Deployment("dev", settings.account, settings.region)), principal, action)


@pytest.mark.spark
@pytest.mark.slow
def test_removing_the_config_loaders_scan_grant_fails_naming_principal_action_and_resource(
    synthesized: SynthesizedApp, config: OdpConfig, recorded: RecordedFlow
) -> None:
    """Item 2 of issue 10: the Configuration Manager scans table_config, batch_config and dataset_config."""
    template = _without_action(synthesized.data_lakes["dev"], config, "config-loader", "dynamodb:Scan")

    failures = _failures(synthesized, config, recorded, "dev", template)

    assert failures == [
        "config-loader (role odp-dev-config-loader) is not allowed dynamodb:Scan on "
        "arn:aws:dynamodb:eu-west-1:111111111111:table/odp-dev-table-config: needed by dynamodb.Scan from "
        "odp/config/manager.py (_scan_all)",
        "config-loader (role odp-dev-config-loader) is not allowed dynamodb:Scan on "
        "arn:aws:dynamodb:eu-west-1:111111111111:table/odp-dev-batch-config: needed by dynamodb.Scan from "
        "odp/config/manager.py (_scan_all)",
        "config-loader (role odp-dev-config-loader) is not allowed dynamodb:Scan on "
        "arn:aws:dynamodb:eu-west-1:111111111111:table/odp-dev-dataset-config: needed by dynamodb.Scan from "
        "odp/config/manager.py (_scan_all)",
    ]


SM_10 = "state-machine odp-dev-file-processor-every_10_minutes"
SM_HOURLY = "state-machine odp-dev-file-processor-hourly"
SM_DATASETS = "state-machine odp-dev-datasets"
CONFORMED_ARN = "arn:aws:s3:::odp-dev-conformed-111111111111-eu-west-1/"
RAW_ARN = "arn:aws:s3:::odp-dev-raw-111111111111-eu-west-1/"
STAGING_ARN = "arn:aws:s3:::odp-dev-staging-111111111111-eu-west-1/"
ARTIFACTS_ARN = "arn:aws:s3:::odp-dev-artifacts-111111111111-eu-west-1/glue/"
# (principal, action removed from its role's policies, part of a resource the failure must name)
REMOVALS = [
    ("file-manager", "dynamodb:PutItem", ":table/odp-dev-file-tracker"),
    ("file-manager", "kms:Decrypt", ":key/"),
    (
        "file-manager",
        "sqs:ReceiveMessage",
        ":sqs:eu-west-1:111111111111:odp-dev-file-manager",
    ),
    ("file-manager", "logs:PutLogEvents", ":log-group:/aws/lambda/odp-dev-file-manager:"),
    ("batch-manager", "dynamodb:Query", ":table/odp-dev-"),
    ("batch-manager", "dynamodb:Scan", ":table/odp-dev-file-tracker/index/pending_by_table"),  # its plan's one read
    ("file-processor-job", "s3:PutObject", RAW_ARN),
    ("file-processor-job", "s3:GetObject", STAGING_ARN),
    ("file-processor-job", "s3:GetObject", ARTIFACTS_ARN),
    ("file-processor-job", "s3:ListBucket", RAW_ARN[:-1]),
    ("file-processor-job", "dynamodb:UpdateItem", ":table/odp-dev-processing-tracker"),
    ("file-processor-job", "cloudwatch:PutMetricData", "*"),
    ("file-processor-job", "glue:CreateTable", ":glue:eu-west-1:111111111111:table/inventory_raw/products_rt"),
    # the post-deploy canary's table: its catalog entries removed (etl/jobs/canary_table.py)
    ("file-processor-job", "glue:DeleteTable", ":table/inventory_raw/_odp_canary_file_processor_"),
    ("config-loader", "dynamodb:BatchWriteItem", ":table/odp-dev-table-config"),
    ("config-loader", "dynamodb:DescribeTable", ":table/odp-dev-file-tracker"),
    ("config-loader", "states:DescribeStateMachine", ":stateMachine:odp-dev-file-processor-"),
    ("config-loader", "glue:StartJobRun", ":job/odp-dev-dataset-job"),  # the canary's own calls
    ("config-loader", "glue:GetJobRun", ":job/odp-dev-file-processor-hourly"),
    (SM_10, "glue:StartJobRun", ":job/odp-dev-file-processor-every_10_minutes"),
    (SM_10, "glue:GetJobRun", ":job/odp-dev-file-processor-every_10_minutes"),
    (SM_10, "sns:Publish", ":odp-dev-alerts"),
    (SM_10, "kms:GenerateDataKey", ":key/"),
    (SM_10, "logs:CreateLogDelivery", "*"),
    (SM_10, "states:ListExecutions", ":stateMachine:odp-dev-file-processor-every_10_minutes"),
    (SM_HOURLY, "lambda:InvokeFunction", ":function:odp-dev-batch-manager"),
    ("dataset-job", "s3:PutObject", CONFORMED_ARN),
    ("dataset-job", "s3:GetObject", RAW_ARN),
    ("dataset-job", "dynamodb:Scan", ":table/odp-dev-dataset-config"),  # its configuration
    ("dataset-job", "dynamodb:GetItem", ":table/odp-dev-table-config"),
    ("dataset-job", "dynamodb:PutItem", ":table/odp-dev-dataset-run-history"),
    ("dataset-job", "dynamodb:UpdateItem", ":table/odp-dev-processing-tracker"),  # the datasets' leases
    ("dataset-job", "sns:Publish", ":odp-dev-alerts"),
    ("dataset-job", "glue:CreateTable", ":table/taxi_trips_dms_conformed/trips_clean"),
    (SM_DATASETS, "glue:StartJobRun", ":job/odp-dev-dataset-job"),
    (SM_DATASETS, "glue:GetJobRun", ":job/odp-dev-dataset-job"),
    (SM_DATASETS, "sns:Publish", ":odp-dev-alerts"),
]


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("case", REMOVALS, ids=[f"{principal}-{action}" for principal, action, _ in REMOVALS])
def test_removing_any_needed_grant_fails_naming_it(
    synthesized: SynthesizedApp,
    config: OdpConfig,
    recorded: RecordedFlow,
    case: tuple[str, str, str],
) -> None:
    """(principal, action removed from its role's policies, part of a resource the failure names)."""
    principal, action, resource = case
    template = _without_action(synthesized.data_lakes["dev"], config, principal, action)

    failures = _failures(synthesized, config, recorded, "dev", template)

    assert failures
    for failure in failures:
        assert failure.startswith(f"{principal} (role "), failure
        assert f" is not allowed {action} on " in failure, failure
    assert any(resource in failure.split(" on ", 1)[1] for failure in failures), failures


@pytest.mark.spark
@pytest.mark.slow
def test_a_key_policy_without_iam_delegation_or_a_bucket_policy_deny_fails_too(
    synthesized: SynthesizedApp, config: OdpConfig, recorded: RecordedFlow
) -> None:
    """Resource policies count: KMS needs the key policy's Allow (CDK's delegates to IAM); a Deny in a
    bucket policy refuses even what the role's policy allows."""
    settings = config.environments.environments["dev"]
    template = synthesized.data_lakes["dev"]
    resolver = Resolver(template, Deployment("dev", settings.account, settings.region))
    table_key = encryption_key_arn(
        resolver, find_by_name(resolver, "AWS::DynamoDB::GlobalTable", "odp-dev-table-config")
    )
    key_logical = table_key.rsplit("/", 1)[1]
    raw = find_bucket(resolver, "raw")

    changed = copy.deepcopy(template)
    key_policy = changed["Resources"][key_logical]["Properties"]["KeyPolicy"]
    key_policy["Statement"] = [s for s in key_policy["Statement"] if "AWS" not in s.get("Principal", {})]
    for resource in changed["Resources"].values():
        if resource["Type"] == "AWS::S3::BucketPolicy" and resource["Properties"]["Bucket"] == {"Ref": raw}:
            resource["Properties"]["PolicyDocument"]["Statement"].append(
                {
                    "Sid": "NoWrites",
                    "Effect": "Deny",
                    "Principal": {"AWS": "*"},
                    "Action": "s3:PutObject",
                    "Resource": "*",
                }
            )

    failures = _failures(synthesized, config, recorded, "dev", changed)

    key_failures = [f for f in failures if f" on {table_key} by the key policy of {key_logical}, " in f]
    assert {f.split(" (role ")[0] for f in key_failures} >= {
        "config-loader",
        "file-manager",
        "batch-manager",
        "file-processor-job",
    }
    assert all("which neither names the role nor delegates to IAM: needed by " in f for f in key_failures)
    writes = [f for f in failures if " is refused s3:PutObject on " in f]
    assert writes
    assert all(f.startswith("file-processor-job (role ") for f in writes)
    assert all(
        " by an explicit Deny in the bucket policy of odp-dev-raw-111111111111-eu-west-1 (NoWrites)" in f
        for f in writes
    )


# Issue 28: the stage with a cadence on EMR Serverless, Lake Formation on (a consumer role, two views):
# tests/support/emr_stage.py. The File Processor's recorded calls are the same code's on either engine; the
# stage's own configuration gives the catalog sync and the leases.
EMR = EMR_FILE_PROCESSOR
EMR_DATASET = EMR_DATASET_JOB
SM_EMR = f"state-machine odp-dev-file-processor-{EMR_CADENCE}"


def _emr_resolver(emr_stage: StreamingStage, template: dict[str, Any]) -> tuple[Resolver, OdpConfig]:
    config = load_config(emr_stage.config_dir)
    settings = config.environments.environments["dev"]
    return Resolver(template, Deployment("dev", settings.account, settings.region)), config


def _emr_canary_calls(emr_stage: StreamingStage) -> list[aws_calls.AwsCall]:
    """The post-deploy canary's EMR Serverless runs of the stage (as the config-loader role): for the EMR cadence's
    and the datasets state machine, the definition read back, the run started and polled (botocore stubs answering
    as the services would)."""
    resolver, config = _emr_resolver(emr_stage, emr_stage.template)
    settings = config.environments.environments["dev"]
    machines = emr_canary_machines(config, "dev", settings.account, settings.region)
    stepfunctions = boto3.client("stepfunctions", region_name=settings.region)
    emr = boto3.client("emr-serverless", region_name=settings.region)
    with aws_calls.CallRecorder() as recorder:
        for arn in machines:
            logical = find_by_name(resolver, "AWS::StepFunctions::StateMachine", arn.rsplit(":", 1)[1])
            definition = json.dumps(state_machine_definition(resolver, logical, emr_stage.asset_text))
            with Stubber(stepfunctions) as states, Stubber(emr) as runs:
                states.add_response(
                    "describe_state_machine",
                    {
                        "stateMachineArn": arn,
                        "name": "m",
                        "definition": definition,
                        "roleArn": "arn:aws:iam::111111111111:role/states",
                        "type": "STANDARD",
                        "creationDate": datetime(2026, 1, 1),
                    },
                )
                with aws_calls.acting_as(aws_calls.CONFIG_LOADER):
                    described = stepfunctions.describe_state_machine(stateMachineArn=arn)["definition"]
                    request = emr_canary_request(described)
                    stub_job_run(runs, request, [("SUCCESS", "succeeded")])
                    assert run_emr_canary(emr, [request], timeout_seconds=60, sleep=lambda _: None) == []
    assert [(c.service, c.operation) for c in recorder.calls] == [
        ("stepfunctions", "DescribeStateMachine"),
        ("emr-serverless", "StartJobRun"),
        ("emr-serverless", "GetJobRun"),
    ] * len(machines)
    assert [c.params["stateMachineArn"].rsplit(":", 1)[1] for c in recorder.calls[::3]] == [
        SM_EMR.split(" ", 1)[1],
        SM_DATASETS.split(" ", 1)[1],
    ]
    return recorder.calls


def _emr_calls(resolver: Resolver, recorded: RecordedFlow, canary: list[aws_calls.AwsCall] = ()) -> dict:
    """The local flow's calls of the principals this stage deploys, and the canary's."""
    present = set(principals(resolver))
    return {SANDBOX: [call for call in recorded.calls[SANDBOX] if call.principal in present], "dev": list(canary)}


@pytest.fixture(scope="module")
def emr_canary(emr_stage: StreamingStage) -> list[aws_calls.AwsCall]:
    return _emr_canary_calls(emr_stage)


def _emr_failures(
    emr_stage: StreamingStage, recorded: RecordedFlow, template: dict[str, Any], canary: list[aws_calls.AwsCall] = ()
) -> list[str]:
    resolver, config = _emr_resolver(emr_stage, template)
    calls = _emr_calls(resolver, recorded, canary)
    return check_template(
        resolver, calls, recorded.translations, emr_stage.asset_text, tables=config.tables, datasets=config.datasets
    )


def _emr_unreachable(emr_stage: StreamingStage, recorded: RecordedFlow, template: dict[str, Any]) -> list[str]:
    resolver, config = _emr_resolver(emr_stage, template)
    return check_reachability(resolver, _emr_calls(resolver, recorded), tables=config.tables, datasets=config.datasets)


@pytest.mark.spark
@pytest.mark.slow
def test_the_emr_stage_allows_and_reaches_everything_its_file_processor_does_with_lake_formation_on(
    emr_stage: StreamingStage, recorded: RecordedFlow, emr_canary: list[aws_calls.AwsCall]
) -> None:
    resolver, config = _emr_resolver(emr_stage, emr_stage.template)
    assert lake_formation_on(resolver)
    assert config.access.consumers
    views = [t["Properties"]["TableInput"] for t in resolver.of_type("AWS::Glue::Table").values()]
    assert sorted(v["Name"] for v in views if v["TableType"] == "VIRTUAL_VIEW") == sorted(VIEWS)
    machine = {
        name: find_by_name(resolver, "AWS::StepFunctions::StateMachine", name.split(" ", 1)[1])
        for name in (SM_EMR, SM_DATASETS)
    }
    assert {(run.state_machine, run.principal) for run in emr_serverless_runs(resolver)} == {
        (machine[SM_EMR], EMR),
        (machine[SM_DATASETS], EMR_DATASET),
    }
    (role,) = principals(resolver)[EMR]
    assert principals(resolver)[EMR_DATASET] == [role]  # one execution role runs both jobs' code
    assert "emr-serverless.amazonaws.com" in json.dumps(resolver.resources[role.logical_id]["Properties"])
    assert {c.principal for c in _emr_calls(resolver, recorded)[SANDBOX]} >= {
        aws_calls.FILE_PROCESSOR_JOB,
        aws_calls.DATASET_JOB,
    }

    failures = _emr_failures(emr_stage, recorded, emr_stage.template, emr_canary)
    failures += _emr_unreachable(emr_stage, recorded, emr_stage.template)

    assert failures == [], "\n".join(failures)


# (principal, action removed from its role's policies, part of a resource a failure of that principal names)
EMR_REMOVALS = [
    (EMR, "s3:PutObject", "arn:aws:s3:::odp-dev-raw-"),  # the File Processor's recorded calls
    (EMR, "s3:GetObject", "arn:aws:s3:::odp-dev-staging-"),
    (EMR, "dynamodb:UpdateItem", ":table/odp-dev-processing-tracker"),
    (EMR, "cloudwatch:PutMetricData", "*"),
    (EMR, "glue:CreateTable", ":table/shop_raw/invoices"),  # Hudi's catalog sync
    (EMR, "lakeformation:GetDataAccess", "*"),  # Lake Formation on
    (EMR, "emr-serverless:GetJobRun", ":/applications/"),  # a lease held by an EMR Serverless run
    (EMR, "glue:GetJobRun", ":job/odp-dev-file-processor-"),  # a lease held by a Glue run (cadence moved)
    (EMR, "s3:GetObject", "/emr/emr_serverless.py"),  # EMR Serverless loads the entry point
    (EMR, "logs:PutLogEvents", ":log-group:/aws/emr-serverless/odp-dev:log-stream:"),
    (EMR, "logs:DescribeLogGroups", ":log-group:/aws/emr-serverless/odp-dev"),
    (aws_calls.FILE_PROCESSOR_JOB, "lakeformation:GetDataAccess", "*"),
    (aws_calls.FILE_PROCESSOR_JOB, "emr-serverless:GetJobRun", "/jobruns/"),
    (SM_EMR, "emr-serverless:StartJobRun", ":/applications/"),
    (SM_EMR, "emr-serverless:CancelJobRun", "/jobruns/"),
    (SM_EMR, "iam:PassRole", ":role/"),
    (SM_EMR, "events:PutRule", ":rule/StepFunctionsGetEventsForEMRServerlessJobRule"),
    # the post-deploy canary's run on the application (odp/operations/canary.py)
    (aws_calls.CONFIG_LOADER, "emr-serverless:StartJobRun", ":/applications/"),
    (aws_calls.CONFIG_LOADER, "iam:PassRole", ":role/EmrServerlessExecutionRole"),
    (aws_calls.CONFIG_LOADER, "emr-serverless:GetJobRun", f"/jobruns/{RUN_ID}"),
    # the datasets state machine's RefreshDatasetsOnEmr: the dataset job's code on the execution role
    (EMR_DATASET, "dynamodb:UpdateItem", ":table/odp-dev-processing-tracker"),  # the datasets' leases
    (EMR_DATASET, "dynamodb:PutItem", ":table/odp-dev-dataset-run-history"),  # recorded calls of the dataset job
    (EMR_DATASET, "sns:Publish", ":odp-dev-alerts"),
    (EMR_DATASET, "s3:PutObject", "arn:aws:s3:::odp-dev-purpose-built-"),
    (EMR_DATASET, "dynamodb:Scan", ":table/odp-dev-dataset-config"),  # its configuration
    (EMR_DATASET, "glue:GetJobRun", ":job/odp-dev-dataset-job"),  # a dataset's lease held by a Glue run
    (EMR_DATASET, "glue:CreateTable", f":table/shop_purpose_built/{EMR_DATASET_NAME}"),  # Hudi's catalog sync
    (EMR_DATASET, "lakeformation:GetDataAccess", "*"),
    (aws_calls.DATASET_JOB, "dynamodb:UpdateItem", ":table/odp-dev-processing-tracker"),  # the Glue dataset job's
    (aws_calls.DATASET_JOB, "emr-serverless:GetJobRun", "/jobruns/"),  # a dataset's lease held by an EMR run
    (SM_DATASETS, "emr-serverless:StartJobRun", ":/applications/"),
    (SM_DATASETS, "emr-serverless:GetJobRun", "/jobruns/"),
    (SM_DATASETS, "emr-serverless:CancelJobRun", "/jobruns/"),
    (SM_DATASETS, "iam:PassRole", ":role/EmrServerlessExecutionRole"),
    (aws_calls.CONFIG_LOADER, "states:DescribeStateMachine", ":stateMachine:odp-dev-datasets"),  # its EMR canary
]


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("case", EMR_REMOVALS, ids=[f"{principal}-{action}" for principal, action, _ in EMR_REMOVALS])
def test_removing_a_grant_the_emr_stage_needs_fails_naming_it(
    emr_stage: StreamingStage, recorded: RecordedFlow, emr_canary: list[aws_calls.AwsCall], case: tuple[str, str, str]
) -> None:
    principal, action, resource = case
    resolver, _ = _emr_resolver(emr_stage, emr_stage.template)
    template = without_action(resolver, principal, action)

    failures = _emr_failures(emr_stage, recorded, template, emr_canary)

    assert failures
    assert all(f" is not allowed {action} on " in failure for failure in failures), failures
    named = [f.split(" on ", 1)[1] for f in failures if f.startswith(f"{principal} (role ")]
    assert any(resource in failure for failure in named), failures


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize(
    ("service", "needed_by"),
    [
        ("lakeformation", "lakeformation:GetDataAccess (Lake Formation is on"),
        ("emr-serverless", "emr-serverless:GetJobRun (a lease held by a run of EMR Serverless application"),
        ("monitoring", "cloudwatch.PutMetricData from "),  # a recorded call of the File Processor
    ],
)
def test_removing_an_endpoint_the_emr_stage_needs_fails_for_both_engines(
    emr_stage: StreamingStage, recorded: RecordedFlow, service: str, needed_by: str
) -> None:
    resolver, _ = _emr_resolver(emr_stage, emr_stage.template)
    changed = without_endpoint(emr_stage.template, resolver, service)

    failures = _emr_unreachable(emr_stage, recorded, changed)

    assert failures
    assert all(f" cannot reach {service} from subnet " in f for f in failures), failures
    assert all(f": needed by {needed_by}" in f for f in failures), failures
    assert {f.split(" (", 1)[0] for f in failures} == {
        aws_calls.FILE_PROCESSOR_JOB,
        EMR,
        *(() if service == "monitoring" else (aws_calls.DATASET_JOB, EMR_DATASET)),  # the dataset job sends no metric
    }
    assert any("(EMR Serverless application odp-dev-spark)" in f for f in failures), failures
