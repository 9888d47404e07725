"""Item 8: the datasets state machine (stepfunctions/datasets.glue.asl.json, the real file) executed by moto with the
EventBridge event the trigger rule forwards. A File Processor execution that ended before planning (the
overlap guard's PreviousRunStillRunning: its output has no ``summary``) refreshes nothing and succeeds; an event
without the output (Step Functions leaves it out past 256 KB) fails with a clear error; an output whose summary
names changed tables starts one dataset job run with their table ids.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws

from odp.contracts.datasets import DatasetJobArgs
from odp.contracts.state_machines import DatasetsOnGlue
from sandbox.datasets_flow import file_processor_event
from sandbox.moto_patches import GlueRunResult, ServiceBindings, bound_services

JOB = "odp-dev-dataset-job"
EXECUTION = "arn:aws:states:eu-west-1:123456789012:execution:odp-dev-file-processor-hourly:run-1"


@pytest.fixture
def run(aws_env: None) -> Iterator[object]:
    bindings = ServiceBindings(glue_jobs={JOB: lambda name, run_id, arguments: GlueRunResult("SUCCEEDED")})
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}), bound_services(bindings):
        sfn = boto3.client("stepfunctions", region_name="eu-west-1")
        boto3.client("glue", region_name="eu-west-1").create_job(
            Name=JOB,
            Role="arn:aws:iam::123456789012:role/job",
            Command={"Name": "glueetl", "ScriptLocation": "s3://b/k"},
        )
        topic = boto3.client("sns", region_name="eu-west-1").create_topic(Name="alerts")["TopicArn"]
        definition = DatasetsOnGlue(alerts_topic_arn=topic, job_name=JOB).render()
        machine = sfn.create_state_machine(
            name="odp-dev-datasets", definition=json.dumps(definition), roleArn="arn:aws:iam::123456789012:role/sfn"
        )["stateMachineArn"]

        def execute(event: dict) -> tuple[str, list[str], list]:
            execution = sfn.start_execution(stateMachineArn=machine, input=json.dumps(event))["executionArn"]
            for _ in range(200):
                described = sfn.describe_execution(executionArn=execution)
                if described["status"] != "RUNNING":
                    break
                time.sleep(0.05)
            events = sfn.get_execution_history(executionArn=execution)["events"]
            visited = [e["stateEnteredEventDetails"]["name"] for e in events if "stateEnteredEventDetails" in e]
            return described["status"], visited, list(bindings.glue_calls)

        yield execute


def test_an_execution_that_ended_before_planning_refreshes_nothing(run) -> None:
    # PreviousRunStillRunning ends with the guard's own output: no "plan" key.
    status, visited, glue_calls = run(file_processor_event(EXECUTION, {"running": {"executions": []}}))
    assert status == "SUCCEEDED", visited
    assert visited == ["HasOutput", "ChangedTables", "HasPlan", "NothingChanged"]
    assert glue_calls == []


def test_a_plan_without_batches_refreshes_nothing(run) -> None:
    status, visited, glue_calls = run(file_processor_event(EXECUTION, {"plan": {"batches": 0}}))
    assert status == "SUCCEEDED", visited
    assert visited[-1] == "NothingChanged"
    assert glue_calls == []


def test_an_event_without_the_output_fails_with_a_clear_error(run) -> None:
    event = file_processor_event(EXECUTION, {})
    event["detail"]["output"] = None
    event["detail"]["outputDetails"] = {"included": False}
    status, visited, glue_calls = run(event)
    assert status == "FAILED"
    assert visited == ["HasOutput", "OutputNotInEvent"]
    assert glue_calls == []


def test_the_planned_tables_go_to_one_dataset_job_run(run) -> None:
    # the summary names the planned tables (["*"] past its bound: every dataset)
    output = {"plan": {"batches": 2}, "summary": {"changed_tables": ["a.b.c", "d.e.f", "g.h.i"]}}
    status, visited, glue_calls = run(file_processor_event(EXECUTION, output))
    assert status == "SUCCEEDED", visited
    assert "RefreshDatasets" in visited
    ((job, arguments),) = glue_calls
    assert job == JOB
    assert json.loads(arguments[DatasetJobArgs.option("changed_tables")]) == ["a.b.c", "d.e.f", "g.h.i"]
