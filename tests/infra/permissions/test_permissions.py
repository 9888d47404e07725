"""Permissions proven offline: every AWS call each deployed principal's code made in the local flow,
and every service integration of the state machines, is allowed by that principal's policies in the
synthesized template of every environment; removing a needed grant fails with a sentence naming the
principal, the action and the resource.

The flow runs once per module (real handlers, real job on Spark + Hudi, real config loader; the smoke
check against moto per environment); the app is synthesized once per session (tests/infra/conftest.py).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from moto import mock_aws

from infrastructure.smoke import check_environment
from odp.config.loader import OdpConfig
from odp.naming import TrackerTableNames
from odp.tracker.schema import create_tables
from sandbox import aws_calls
from sandbox.account import RAW_BUCKET, STAGING_BUCKET, SandboxLayout
from sandbox.demo_data import DemoGenerator
from sandbox.runner import run_sandbox
from tests.infra.conftest import SynthesizedApp
from tests.infra.permissions.check import check_template
from tests.infra.permissions.requirements import Translation
from tests.infra.permissions.template import Deployment, Resolver

PRODUCTS = "inventory_debezium.inventory.products"
SANDBOX = "sandbox"
ENVIRONMENTS = ("dev", "test", "prod")


@dataclass(frozen=True)
class RecordedFlow:
    """Calls by the environment they ran in, and how that environment's names map to a deployed one."""

    calls: dict[str, list[aws_calls.AwsCall]]
    translations: dict[str, Translation]

    def of(self, principal: str) -> list[aws_calls.AwsCall]:
        return [call for calls in self.calls.values() for call in calls if call.principal == principal]


def _smoke_check_calls(config: OdpConfig, environment: str) -> list[aws_calls.AwsCall]:
    """The smoke check of ``environment`` against moto holding that environment's tables."""
    region = config.environments.environments[environment].region
    account = config.environments.environments[environment].account
    with mock_aws(), aws_calls.CallRecorder() as recorder:
        dynamodb = boto3.client("dynamodb", region_name=region)
        create_tables(dynamodb, TrackerTableNames.for_environment(environment))
        with aws_calls.acting_as(aws_calls.CONFIG_LOADER):
            failures = check_environment(
                config, environment, dynamodb, boto3.client("stepfunctions", region_name=region), account
            )
    assert failures, "moto has no state machines and no config items: the smoke check must report them"
    return recorder.calls


@pytest.fixture(scope="module")
def recorded(config: OdpConfig, spark: Any, tmp_path_factory: pytest.TempPathFactory) -> RecordedFlow:
    """A full load then a CDC round of one table through the sandbox, every principal's calls recorded."""
    work = tmp_path_factory.mktemp("permissions")
    layout = SandboxLayout(lake=work / "lake", staging=work / "staging")
    layout.staging.mkdir()
    generator = DemoGenerator(config, layout.staging, table_ids=(PRODUCTS,))
    with aws_calls.CallRecorder() as recorder:
        generator.generate_round(0)
        first = run_sandbox(config, layout, spark)
        generator.generate_round(1)
        second = run_sandbox(config, layout, spark, cadence="every_15_minutes")
    assert first.ok, first
    assert second.ok, second
    assert second.table(PRODUCTS).files >= 1
    calls = {SANDBOX: recorder.calls}
    translations = {SANDBOX: Translation(SANDBOX, {STAGING_BUCKET: "staging", RAW_BUCKET: "raw"})}
    for environment in ENVIRONMENTS:
        calls[environment] = _smoke_check_calls(config, environment)
        translations[environment] = Translation(environment, {})
    return RecordedFlow(calls, translations)


def _failures(
    synthesized: SynthesizedApp, config: OdpConfig, recorded: RecordedFlow, environment: str, template: dict
) -> list[str]:
    """Every refusal in ``template`` (an environment's DataLake stack, or a changed copy of it)."""
    settings = config.environments.environments[environment]
    resolver = Resolver(template, Deployment(environment, settings.account, settings.region))
    calls = {name: calls for name, calls in recorded.calls.items() if name in (SANDBOX, environment)}
    return check_template(resolver, calls, recorded.translations, synthesized.asset_text)


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
        )
    }
    assert ("dynamodb", "TransactWriteItems") in operations[aws_calls.FILE_MANAGER]
    assert ("dynamodb", "Query") in operations[aws_calls.BATCH_MANAGER]
    assert {("dynamodb", "UpdateItem"), ("s3", "GetObject"), ("s3", "PutObject")} <= operations[
        aws_calls.FILE_PROCESSOR_JOB
    ]
    assert {("dynamodb", "Scan"), ("dynamodb", "BatchWriteItem"), ("dynamodb", "DescribeTable")} <= operations[
        aws_calls.CONFIG_LOADER
    ]
    scans = {(c.params["TableName"], c.origin) for c in recorded.of(aws_calls.CONFIG_LOADER) if c.operation == "Scan"}
    origin = "odp/config/manager.py (_scan_all)"
    assert scans == {("odp-sandbox-table-config", origin), ("odp-sandbox-batch-config", origin)}


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_every_call_is_allowed_by_the_principals_policies(
    synthesized: SynthesizedApp, config: OdpConfig, recorded: RecordedFlow, environment: str
) -> None:
    failures = _failures(synthesized, config, recorded, environment, synthesized.data_lakes[environment])
    assert failures == [], "\n".join(failures)


def _without_action(template: dict, role_name_part: str, action: str) -> dict:
    """A copy of the template in which no policy statement of roles whose logical id contains
    ``role_name_part`` grants ``action`` (a statement left with no action is deleted)."""
    changed = copy.deepcopy(template)
    removed = 0
    for resource in changed["Resources"].values():
        if resource["Type"] != "AWS::IAM::Policy":
            continue
        if not any(role_name_part in r.get("Ref", "") for r in resource["Properties"]["Roles"]):
            continue
        statements = []
        for statement in resource["Properties"]["PolicyDocument"]["Statement"]:
            actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
            kept = [a for a in actions if a != action]
            removed += len(actions) - len(kept)
            if kept:
                statements.append({**statement, "Action": kept})
        resource["Properties"]["PolicyDocument"]["Statement"] = statements
    assert removed, f"no statement of {role_name_part} granted {action}: nothing to remove"
    return changed


@pytest.mark.spark
@pytest.mark.slow
def test_removing_the_config_loaders_scan_grant_fails_naming_principal_action_and_resource(
    synthesized: SynthesizedApp, config: OdpConfig, recorded: RecordedFlow
) -> None:
    """Item 2 of issue 10: the Configuration Manager scans table_config and batch_config."""
    template = _without_action(synthesized.data_lakes["dev"], "ConfigLoaderRole", "dynamodb:Scan")

    failures = _failures(synthesized, config, recorded, "dev", template)

    assert failures == [
        "config-loader (role odp-dev-config-loader) is not allowed dynamodb:Scan on "
        "arn:aws:dynamodb:eu-west-1:111111111111:table/odp-dev-table-config: needed by dynamodb.Scan from "
        "odp/config/manager.py (_scan_all)",
        "config-loader (role odp-dev-config-loader) is not allowed dynamodb:Scan on "
        "arn:aws:dynamodb:eu-west-1:111111111111:table/odp-dev-batch-config: needed by dynamodb.Scan from "
        "odp/config/manager.py (_scan_all)",
    ]


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize(
    "case",
    [
        ("FileManagerFunctionRole", "dynamodb:PutItem", "file-manager", ":table/odp-dev-file-tracker"),
        ("FileManagerFunctionRole", "kms:Decrypt", "file-manager", ":key/"),
        ("BatchManagerFunctionRole", "dynamodb:Query", "batch-manager", ":table/odp-dev-"),
        ("GlueRole", "s3:PutObject", "file-processor-job", "arn:aws:s3:::odp-dev-raw-111111111111-eu-west-1/"),
        ("GlueRole", "s3:GetObject", "file-processor-job", "arn:aws:s3:::odp-dev-staging-111111111111-eu-west-1/"),
        ("GlueRole", "dynamodb:UpdateItem", "file-processor-job", ":table/odp-dev-processing-tracker"),
        ("ConfigLoaderRole", "dynamodb:BatchWriteItem", "config-loader", ":table/odp-dev-table-config"),
        ("ConfigLoaderRole", "states:DescribeStateMachine", "config-loader", ":stateMachine:odp-dev-file-processor-"),
        (
            "every10minutesStateMachineRole",
            "glue:StartJobRun",
            "state-machine odp-dev-file-processor-every_10_minutes",
            ":job/odp-dev-file-processor-every_10_minutes",
        ),
        (
            "every10minutesStateMachineRole",
            "sns:Publish",
            "state-machine odp-dev-file-processor-every_10_minutes",
            ":odp-dev-alerts",
        ),
        (
            "hourlyStateMachineRole",
            "lambda:InvokeFunction",
            "state-machine odp-dev-file-processor-hourly",
            ":function:odp-dev-batch-manager",
        ),
    ],
)
def test_removing_any_needed_grant_fails_naming_it(
    synthesized: SynthesizedApp,
    config: OdpConfig,
    recorded: RecordedFlow,
    case: tuple[str, str, str, str],
) -> None:
    """(role logical id part, action removed from its policies, principal named, part of a resource named)."""
    role, action, principal, resource = case
    template = _without_action(synthesized.data_lakes["dev"], role, action)

    failures = _failures(synthesized, config, recorded, "dev", template)

    assert failures
    for failure in failures:
        assert failure.startswith(f"{principal} (role "), failure
        assert f" is not allowed {action} on " in failure, failure
    assert any(resource in failure.split(" on ", 1)[1] for failure in failures), failures
