"""The File Processor's overlap guard, executed by moto: while an execution of a cadence runs, a younger
one ends at PreviousRunStillRunning without planning; alone, an execution goes on to PlanBatches.

moto runs the AWS SDK integration only with the sandbox's patch (sandbox/moto_patches.py, 4.). The guard
states are taken from stepfunctions/file_processor.glue.asl.json as written; PlanBatches is replaced
by a Wait so that the first execution is still running when the second starts.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws
from moto.core.responses import ActionResult
from moto.stepfunctions.responses import StepFunctionResponse

from odp.contracts.batches import PlanAnswer, PlanLocation
from odp.contracts.state_machines import FileProcessorOnGlue
from sandbox.moto_patches import ServiceBindings, bound_services

GUARD_STATES = (
    "FindRunningExecutions",
    "AnyExecutionListed",
    "OldestListedExecution",
    "OldestRunningExecution",
    "PreviousRunStillRunning",
)
LISTED = ["FindRunningExecutions", "AnyExecutionListed", "OldestListedExecution", "OldestRunningExecution"]
SUBSTITUTIONS = FileProcessorOnGlue(
    alerts_topic_arn="arn:aws:sns:eu-west-1:123456789012:alerts",
    batch_manager_function_arn="arn:aws:lambda:eu-west-1:123456789012:function:batch-manager",
    cadence="hourly",
    max_concurrency=1,
    job_name="odp-dev-file-processor-hourly",
    plan_bucket="odp-dev-artifacts",
)


def guard_definition(wait_seconds: int) -> dict:
    definition = SUBSTITUTIONS.render()
    assert definition["StartAt"] == "FindRunningExecutions"
    states = {name: definition["States"][name] for name in GUARD_STATES}
    states["PlanBatches"] = {"Type": "Wait", "Seconds": wait_seconds, "Next": "Planned"}
    states["Planned"] = {"Type": "Succeed"}
    states["NotifyFailure"] = {"Type": "Fail", "Error": "GuardFailed"}
    return {"StartAt": "FindRunningExecutions", "States": states}


@pytest.fixture
def sfn(aws_env: None) -> Iterator[object]:
    # bound_services: the sandbox's moto patches, among them the AWS SDK integration's parameter names.
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}), bound_services(ServiceBindings()):
        yield boto3.client("stepfunctions", region_name="eu-west-1")


def _machine(sfn, wait_seconds: int) -> str:
    return sfn.create_state_machine(
        name="odp-dev-file-processor-hourly",
        definition=json.dumps(guard_definition(wait_seconds)),
        roleArn="arn:aws:iam::123456789012:role/sfn",
    )["stateMachineArn"]


def _finish(sfn, execution_arn: str) -> dict:
    for _ in range(200):
        described = sfn.describe_execution(executionArn=execution_arn)
        if described["status"] != "RUNNING":
            return described
        time.sleep(0.05)
    raise AssertionError(f"{execution_arn} still running")


def _visited(sfn, execution_arn: str) -> list[str]:
    events = sfn.get_execution_history(executionArn=execution_arn)["events"]
    return [e["stateEnteredEventDetails"]["name"] for e in events if "stateEnteredEventDetails" in e]


def test_an_execution_alone_goes_on_to_plan(sfn) -> None:
    machine = _machine(sfn, wait_seconds=0)
    execution = sfn.start_execution(stateMachineArn=machine, name="alone", input="{}")["executionArn"]
    assert _finish(sfn, execution)["status"] == "SUCCEEDED"
    assert _visited(sfn, execution) == [*LISTED, "PlanBatches", "Planned"]


def test_a_younger_execution_ends_while_the_older_one_runs(sfn) -> None:
    machine = _machine(sfn, wait_seconds=2)
    older = sfn.start_execution(stateMachineArn=machine, name="older", input="{}")["executionArn"]
    time.sleep(0.3)
    younger = sfn.start_execution(stateMachineArn=machine, name="younger", input="{}")["executionArn"]
    assert _finish(sfn, younger)["status"] == "SUCCEEDED"
    assert _visited(sfn, younger) == [*LISTED, "PreviousRunStillRunning"]
    assert _finish(sfn, older)["status"] == "SUCCEEDED"
    assert "PlanBatches" in _visited(sfn, older)


def _whole_run(name: str) -> tuple[str, list[str], list[dict]]:
    """The real file, unchanged, on moto: (status, states visited, Batch Manager events)."""
    calls: list[dict] = []

    def batch_manager(event: dict, context: object) -> dict:
        calls.append(event)
        location = PlanLocation.for_execution("odp-dev-artifacts", "hourly", event["execution_name"])
        pending = {"files": 0, "bytes": 0, "tables": 0, "oldest_age_seconds": 0}
        return PlanAnswer(location=location, batches=0, tables=0, pending=pending).model_dump(mode="json")

    bindings = ServiceBindings(lambdas={"batch-manager": batch_manager})
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}), bound_services(bindings):
        sfn = boto3.client("stepfunctions", region_name="eu-west-1")
        machine = sfn.create_state_machine(
            name="odp-dev-file-processor-hourly",
            definition=json.dumps(SUBSTITUTIONS.render()),
            roleArn="arn:aws:iam::123456789012:role/sfn",
        )["stateMachineArn"]
        execution = sfn.start_execution(stateMachineArn=machine, name=name, input="{}")["executionArn"]
        return _finish(sfn, execution)["status"], _visited(sfn, execution), calls


def test_the_whole_definition_passes_the_guard_then_plans(aws_env) -> None:
    """An execution alone passes the guard and asks the Batch Manager for a plan."""
    status, visited, calls = _whole_run("whole")
    assert status == "SUCCEEDED"
    assert visited == [*LISTED, "PlanBatches", "AnyWork", "NothingToDo"]
    assert [call["action"] for call in calls] == ["plan"]


def test_an_empty_listing_goes_on_to_plan_instead_of_failing(aws_env, monkeypatch) -> None:
    """Issue 24, item 8: ListExecutions is eventually consistent; a fresh execution may not list itself.
    Before the Choice on the count, States.ArrayGetItem(..., -1) failed the execution (NotifyFailure)."""

    def nothing_listed_yet(self: StepFunctionResponse) -> ActionResult:
        return ActionResult({"executions": []})

    monkeypatch.setattr(StepFunctionResponse, "list_executions", nothing_listed_yet)
    status, visited, calls = _whole_run("unlisted")
    assert status == "SUCCEEDED"
    assert visited == ["FindRunningExecutions", "AnyExecutionListed", "PlanBatches", "AnyWork", "NothingToDo"]
    assert [call["action"] for call in calls] == ["plan"]
