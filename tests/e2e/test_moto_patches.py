"""The sandbox's patches to moto 5.2.5's Step Functions interpreter (sandbox/moto_patches.py).

Each test runs a small ASL definition through moto's real interpreter with tiny bound handlers:
the subject is the patch (how tasks reach local code), not the Lambdas or the job.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import boto3
import moto
import pytest
from moto.stepfunctions.parser.asl.component.state.exec.state_task import lambda_eval_utils
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_glue import (
    StateTaskServiceGlue,
)
from moto.stepfunctions.parser.asl.utils import json_path

from sandbox import moto_patches
from sandbox.moto_patches import GlueRunResult, ServiceBindings, bound_services

ROLE = "arn:aws:iam::123456789012:role/test"
FUNCTION_ARN = "arn:aws:lambda:eu-west-1:123456789012:function:planner"


def run(definition: dict[str, Any], execution_input: dict[str, Any] | None = None) -> dict[str, Any]:
    sfn = boto3.client("stepfunctions")
    arn = sfn.create_state_machine(name="m", definition=json.dumps(definition), roleArn=ROLE)["stateMachineArn"]
    execution = sfn.start_execution(stateMachineArn=arn, name="e1", input=json.dumps(execution_input or {}))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        described = sfn.describe_execution(executionArn=execution["executionArn"])
        if described["status"] != "RUNNING":
            return described
        time.sleep(0.1)
    raise AssertionError("execution did not finish in 60 s")


def glue_job(default_arguments: dict[str, str] | None = None) -> str:
    boto3.client("glue").create_job(
        Name="job",
        Role=ROLE,
        Command={"Name": "glueetl", "ScriptLocation": "s3://scripts/job.py"},
        DefaultArguments=default_arguments or {},
        ExecutionProperty={"MaxConcurrentRuns": 4},
    )
    return "job"


def glue_task(catch: bool) -> dict[str, Any]:
    task: dict[str, Any] = {
        "Type": "Task",
        "Resource": "arn:aws:states:::glue:startJobRun.sync",
        "Parameters": {"JobName": "job", "Arguments.$": "$.arguments"},
        "ResultSelector": {"id.$": "$.Id", "state.$": "$.JobRunState"},
        "ResultPath": "$.result",
        "End": True,
    }
    if catch:
        task["Catch"] = [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "Caught"}]
        task.pop("End")
        task["Next"] = "Done"
    return task


def glue_definition(catch: bool = False) -> dict[str, Any]:
    states: dict[str, Any] = {"RunJob": glue_task(catch)}
    if catch:
        states["Caught"] = {"Type": "Pass", "End": True}
        states["Done"] = {"Type": "Pass", "End": True}
    return {"StartAt": "RunJob", "States": states}


def lambda_definition() -> dict[str, Any]:
    return {
        "StartAt": "Plan",
        "States": {
            "Plan": {
                "Type": "Task",
                "Resource": "arn:aws:states:::lambda:invoke",
                "Parameters": {
                    "FunctionName": FUNCTION_ARN,
                    "Payload": {"action": "plan", "name.$": "$$.Execution.Name"},
                },
                "ResultSelector": {"answer.$": "$.Payload"},
                "ResultPath": "$.plan",
                "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "Caught"}],
                "End": True,
            },
            "Caught": {"Type": "Pass", "End": True},
        },
    }


def test_the_patches_target_the_installed_moto() -> None:
    assert moto.__version__ == moto_patches.MOTO_VERSION == "5.2.5"
    moto_patches.check_moto_version()


def test_lambda_invoke_calls_the_bound_handler_in_process(sfn_aws: None) -> None:
    seen: list[tuple[dict[str, Any], Any]] = []

    def planner(event: dict[str, Any], context: Any) -> dict[str, Any]:
        seen.append((event, context))
        return {"batches": [], "echo": event["action"]}

    bindings = ServiceBindings(lambdas={"planner": planner})
    with bound_services(bindings):
        described = run(lambda_definition())
    assert described["status"] == "SUCCEEDED"
    assert json.loads(described["output"])["plan"] == {"answer": {"batches": [], "echo": "plan"}}
    event, context = seen[0]
    assert event == {"action": "plan", "name": "e1"}
    assert context.function_name == "planner"
    assert context.invoked_function_arn == FUNCTION_ARN
    assert bindings.lambda_calls == [("planner", {"action": "plan", "name": "e1"})]


def test_a_handler_exception_reaches_catch_as_the_lambda_error_type(sfn_aws: None) -> None:
    def planner(event: dict[str, Any], context: Any) -> dict[str, Any]:
        raise LookupError("cadence 'nightly' is not in batch_config")

    with bound_services(ServiceBindings(lambdas={"planner": planner})):
        described = run(lambda_definition())
    assert described["status"] == "SUCCEEDED"
    error = json.loads(described["output"])["error"]
    assert error["Error"] == "LookupError"
    cause = json.loads(error["Cause"])
    assert cause["errorType"] == "LookupError"
    assert cause["errorMessage"] == "cadence 'nightly' is not in batch_config"


def test_an_unbound_function_fails_the_task_with_its_name(sfn_aws: None) -> None:
    with bound_services(ServiceBindings()):
        described = run(lambda_definition())
    error = json.loads(described["output"])["error"]
    assert "no local handler bound to Lambda function" in error["Cause"]
    assert FUNCTION_ARN in error["Cause"]


def test_glue_sync_runs_the_bound_job_with_default_and_run_arguments_merged(sfn_aws: None) -> None:
    glue_job({"--static": "from-job", "--overridden": "default"})
    calls: list[tuple[str, str, dict[str, str]]] = []

    def job(job_name: str, run_id: str, arguments: dict[str, str]) -> GlueRunResult:
        calls.append((job_name, run_id, arguments))
        return GlueRunResult("SUCCEEDED")

    bindings = ServiceBindings(glue_jobs={"job": job})
    with bound_services(bindings):
        described = run(glue_definition(), {"arguments": {"--run": "r1", "--overridden": "run"}})
    assert described["status"] == "SUCCEEDED", described
    output = json.loads(described["output"])
    assert output["result"]["state"] == "SUCCEEDED"
    assert len(calls) == 1
    name, run_id, arguments = calls[0]
    assert (name, run_id) == ("job", output["result"]["id"])
    assert arguments == {"--static": "from-job", "--overridden": "run", "--run": "r1"}
    # moto's own GetJobRun now agrees with the bound job.
    job_run = boto3.client("glue").get_job_run(JobName="job", RunId=run_id)["JobRun"]
    assert job_run["JobRunState"] == "SUCCEEDED"


def test_a_failed_job_raises_states_task_failed_with_the_error_message(sfn_aws: None) -> None:
    glue_job()

    def job(job_name: str, run_id: str, arguments: dict[str, str]) -> GlueRunResult:
        return GlueRunResult("FAILED", "t1: unreadable Parquet")

    with bound_services(ServiceBindings(glue_jobs={"job": job})):
        described = run(glue_definition(catch=True), {"arguments": {}})
    assert described["status"] == "SUCCEEDED"
    error = json.loads(described["output"])["error"]
    assert error["Error"] == "States.TaskFailed"
    cause = json.loads(error["Cause"])
    assert cause["JobRunState"] == "FAILED"
    assert cause["ErrorMessage"] == "t1: unreadable Parquet"
    assert boto3.client("glue").get_job_run(JobName="job", RunId=cause["Id"])["JobRun"]["JobRunState"] == "FAILED"


def test_a_crashing_job_is_a_failed_run(sfn_aws: None) -> None:
    glue_job()

    def job(job_name: str, run_id: str, arguments: dict[str, str]) -> GlueRunResult:
        raise RuntimeError("the JVM went away")

    with bound_services(ServiceBindings(glue_jobs={"job": job})):
        described = run(glue_definition(catch=True), {"arguments": {}})
    cause = json.loads(json.loads(described["output"])["error"]["Cause"])
    assert cause["ErrorMessage"] == "RuntimeError: the JVM went away"


def test_unpatched_moto_fails_every_glue_sync_task(sfn_aws: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The gap patch 2 closes: without it, .sync ends in an AttributeError on the callback endpoint.

    When moto fixes this, this test fails: then drop _eval_glue_integration_pattern from the patches.
    """
    glue_job()
    monkeypatch.setattr(
        moto_patches,
        "_PATCHES",
        tuple(patch for patch in moto_patches._PATCHES if patch[1] != "_eval_integration_pattern"),
    )

    def job(job_name: str, run_id: str, arguments: dict[str, str]) -> GlueRunResult:
        return GlueRunResult("SUCCEEDED")

    with bound_services(ServiceBindings(glue_jobs={"job": job})):
        described = run(glue_definition(catch=True), {"arguments": {}})
    error = json.loads(described["output"])["error"]
    assert error["Error"] == "States.Runtime"
    assert "interrupt_all" in error["Cause"]


def test_the_originals_come_back_after_the_block(sfn_aws: None) -> None:
    invoke = lambda_eval_utils._invoke_lambda_function
    sync = StateTaskServiceGlue._sync_to_start_job_run
    with bound_services(ServiceBindings()):
        assert lambda_eval_utils._invoke_lambda_function is moto_patches.invoke_bound_lambda
        assert "_eval_integration_pattern" in StateTaskServiceGlue.__dict__
    assert lambda_eval_utils._invoke_lambda_function is invoke
    assert StateTaskServiceGlue._sync_to_start_job_run is sync
    assert "_eval_integration_pattern" not in StateTaskServiceGlue.__dict__


def test_each_json_path_is_parsed_once_and_answers_as_moto_does(sfn_aws: None) -> None:
    data = {"plan": {"location": {"key": "plans/k"}, "batches": [1, 2]}}
    unpatched = [json_path.extract_json(path, data) for path in ("$.plan.location.key", "$.plan.batches[1]")]
    with bound_services(ServiceBindings()):
        before = moto_patches._parse_json_path_once.cache_info()
        for _ in range(3):
            patched = [json_path.extract_json(path, data) for path in ("$.plan.location.key", "$.plan.batches[1]")]
            assert patched == unpatched == ["plans/k", 2]
        after = moto_patches._parse_json_path_once.cache_info()
    assert after.hits - before.hits >= 4  # the second and third round parsed nothing
    assert json_path.parse is not moto_patches._parse_json_path_once


def distributed_map_definition(max_concurrency: int = 0) -> dict[str, Any]:
    """Items from S3 (ItemReader), one child execution each (a Pass), results to S3 (ResultWriter)."""
    return {
        "StartAt": "EachItem",
        "States": {
            "EachItem": {
                "Type": "Map",
                "ItemReader": {
                    "Resource": "arn:aws:states:::s3:getObject",
                    "ReaderConfig": {"InputType": "JSON"},
                    "Parameters": {"Bucket": "plans", "Key.$": "$.key"},
                },
                "ItemProcessor": {
                    "ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
                    "StartAt": "Double",
                    "States": {
                        "Double": {
                            "Type": "Pass",
                            "Parameters": {"n.$": "$.n", "twice.$": "States.MathAdd($.n, $.n)"},
                            "End": True,
                        }
                    },
                },
                "ResultWriter": {
                    "Resource": "arn:aws:states:::s3:putObject",
                    "Parameters": {"Bucket": "plans", "Prefix": "results"},
                },
                "ResultPath": "$.written",
                "MaxConcurrency": max_concurrency,
                "End": True,
            }
        },
    }


def map_results(described: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The manifest the ResultWriter named, and the records of its SUCCEEDED files."""
    details = json.loads(described["output"])["written"]["ResultWriterDetails"]
    s3 = boto3.client("s3")
    manifest = json.loads(s3.get_object(Bucket=details["Bucket"], Key=details["Key"])["Body"].read())
    records = [
        record
        for listed in manifest["ResultFiles"]["SUCCEEDED"]
        for record in json.loads(s3.get_object(Bucket=manifest["DestinationBucket"], Key=listed["Key"])["Body"].read())
    ]
    return manifest, records


def items_in_s3(count: int) -> None:
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket="plans", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
    s3.put_object(Bucket="plans", Key="items.json", Body=json.dumps([{"n": n} for n in range(count)]))


def test_the_result_writer_writes_every_child_executions_output_and_its_manifest(sfn_aws: None) -> None:
    items_in_s3(3)
    with bound_services(ServiceBindings()):
        described = run(distributed_map_definition(), {"key": "items.json"})
    assert described["status"] == "SUCCEEDED", described
    manifest, records = map_results(described)
    assert manifest["DestinationBucket"] == "plans"
    assert manifest["ResultFiles"]["SUCCEEDED"][0]["Key"].startswith("results/")
    assert sorted(json.loads(record["Output"])["twice"] for record in records) == [0, 2, 4]
    assert {record["Status"] for record in records} == {"SUCCEEDED"}


def test_unpatched_moto_writes_a_manifest_without_result_files(sfn_aws: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The gap patch 5 closes. When moto writes the result files itself, this test fails: drop the patch then."""
    items_in_s3(2)
    monkeypatch.setattr(
        moto_patches, "_PATCHES", tuple(patch for patch in moto_patches._PATCHES if patch[1] != "_handle_put_object")
    )
    with bound_services(ServiceBindings()):
        described = run(distributed_map_definition(), {"key": "items.json"})
    assert described["status"] == "SUCCEEDED", described
    manifest, records = map_results(described)
    assert manifest["ResultFiles"] == {"FAILED": [], "PENDING": [], "SUCCEEDED": []}
    assert records == []


def test_one_worker_runs_more_items_than_the_recursion_limit(sfn_aws: None) -> None:
    """moto's worker called itself once per item and died of RecursionError past about 1,000 (patch 8)."""
    items = sys.getrecursionlimit() + 200
    items_in_s3(items)
    with bound_services(ServiceBindings()):
        described = run(distributed_map_definition(max_concurrency=1), {"key": "items.json"})
    assert described["status"] == "SUCCEEDED", described
    _, records = map_results(described)
    assert sorted(json.loads(record["Output"])["twice"] for record in records) == [2 * n for n in range(items)]
