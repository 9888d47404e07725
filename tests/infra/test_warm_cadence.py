"""A warm cadence (``mode: warm``, docs/decisions/032) in the EMR Serverless stage's one synth (tests/support/
emr_stage.py): its job allows one run with the cadence's timeout, its state machine only starts the warm run (the
warm definition, ``glue:StartJobRun`` alone), the schedule starts it every tick, the job role may read its own
job's definition and the pending index and put its ticks' datasets events, nothing more than a scheduled cadence's
besides, and those events start the datasets state machine."""

from __future__ import annotations

import json
from typing import Any

import pytest

from odp.contracts.datasets_trigger import WARM_TICK_DETAIL_TYPE, WARM_TICK_SOURCE
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.contracts.state_machines import FileProcessorWarmOnGlue
from odp.naming import datasets_state_machine_name, file_processor_job_name, state_machine_name
from tests.support.emr_stage import GLUE_CADENCE, WARM_CADENCE
from tests.support.streaming_stage import StreamingStage
from tests.support.synth import resources_of, role_statements_of


@pytest.fixture(scope="module")
def template(emr_stage: StreamingStage) -> dict[str, Any]:
    return emr_stage.template


def _job(template: dict[str, Any], cadence: str) -> dict[str, Any]:
    name = file_processor_job_name("dev", cadence)
    return next(
        r["Properties"] for r in resources_of(template, "AWS::Glue::Job").values() if r["Properties"]["Name"] == name
    )


def _machine(template: dict[str, Any], cadence: str) -> tuple[str, dict[str, Any]]:
    return next(
        (logical, r["Properties"])
        for logical, r in resources_of(template, "AWS::StepFunctions::StateMachine").items()
        if r["Properties"]["StateMachineName"] == state_machine_name("dev", cadence)
    )


def test_the_warm_job_allows_one_run_with_the_cadence_timeout(template) -> None:
    warm, scheduled = _job(template, WARM_CADENCE), _job(template, GLUE_CADENCE)
    assert warm["ExecutionProperty"] == {"MaxConcurrentRuns": 1}
    assert warm["Timeout"] == 720
    assert scheduled["ExecutionProperty"]["MaxConcurrentRuns"] > 1  # a scheduled cadence keeps its Map concurrency


def test_the_warm_state_machine_starts_the_warm_run_every_tick_and_may_do_only_that(emr_stage, template) -> None:
    logical, props = _machine(template, WARM_CADENCE)
    definition = emr_stage.asset_text(props["DefinitionS3Location"]["Key"])
    assert definition == FileProcessorWarmOnGlue.DEFINITION.read_text(encoding="utf-8")
    assert set(props["DefinitionSubstitutions"]) == set(FileProcessorWarmOnGlue.placeholders())
    assert props["DefinitionSubstitutions"]["JobName"] == file_processor_job_name("dev", WARM_CADENCE)
    schedule = next(
        s["Properties"]
        for s in resources_of(template, "AWS::Scheduler::Schedule").values()
        if s["Properties"]["Target"]["Arn"] == {"Ref": logical}
    )
    assert schedule["ScheduleExpression"] == "rate(10 minutes)"
    statements = role_statements_of(template, props["RoleArn"]["Fn::GetAtt"][0])
    glue = [s for s in statements if s["Action"] == "glue:StartJobRun"]
    actions = sorted({a for s in statements for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])})
    assert [a for a in actions if not a.startswith(("logs:", "xray:"))] == [
        "glue:StartJobRun",
        "kms:Decrypt",
        "kms:GenerateDataKey",
        "sns:Publish",
    ]
    assert len(glue) == 1
    assert glue[0]["Resource"]["Fn::Join"][1][-1].endswith(f":job/{file_processor_job_name('dev', WARM_CADENCE)}")


def test_the_warm_definition_passes_the_contracts_warm_arguments() -> None:
    definition = json.loads(FileProcessorWarmOnGlue.DEFINITION.read_text(encoding="utf-8"))
    start = definition["States"]["StartWarmRun"]
    assert start["Resource"] == "arn:aws:states:::glue:startJobRun"  # started, not waited for
    assert start["Parameters"]["Arguments"] == FileProcessorJobArgs.warm_arguments()
    assert start["Catch"][0] == {
        "ErrorEquals": ["Glue.ConcurrentRunsExceededException"],
        "ResultPath": "$.error",
        "Next": "WarmRunAlreadyRunning",
    }


def test_the_job_role_may_read_the_warm_jobs_definition_and_the_pending_index(template) -> None:
    role = _job(template, WARM_CADENCE)["Role"]["Fn::GetAtt"][0]
    by_sid = {s.get("Sid"): s for s in role_statements_of(template, role)}
    get_job = by_sid["WarmRunJobVersion"]
    assert get_job["Action"] == "glue:GetJob"
    assert get_job["Resource"]["Fn::Join"][1][-1].endswith(f":job/{file_processor_job_name('dev', WARM_CADENCE)}")
    scans = [s for s in role_statements_of(template, role) if s["Action"] == "dynamodb:Scan"]
    assert len(scans) == 1
    resource = json.dumps(scans[0]["Resource"])  # the index alone, not the table
    assert resource.count("Fn::Join") == 1
    assert resource.endswith('/index/pending_by_table"]]}')


def test_a_warm_ticks_event_starts_the_datasets_as_an_executions_end_does(template) -> None:
    """No execution ends a warm tick: the run puts an event of its own (odp.contracts.datasets_trigger) on the default
    bus, which its role may do for that source only, and a rule of this environment forwards it to the datasets state
    machine (tests/e2e/test_warm_datasets_trigger.py runs that machine with it)."""
    role = _job(template, WARM_CADENCE)["Role"]["Fn::GetAtt"][0]
    put = {s.get("Sid"): s for s in role_statements_of(template, role)}["WarmTickEvents"]
    assert put["Action"] == "events:PutEvents"
    assert put["Condition"] == {"StringEquals": {"events:source": WARM_TICK_SOURCE}}
    assert put["Resource"]["Fn::Join"][1][-1].endswith(":event-bus/default")
    rules = [r["Properties"] for r in resources_of(template, "AWS::Events::Rule").values()]
    warm = [r for r in rules if r.get("EventPattern", {}).get("source") == [WARM_TICK_SOURCE]]
    assert len(warm) == 1
    assert warm[0]["EventPattern"]["detail-type"] == [WARM_TICK_DETAIL_TYPE]
    assert warm[0]["EventPattern"]["detail"] == {"environment": ["dev"]}
    machines = resources_of(template, "AWS::StepFunctions::StateMachine")
    (target,) = warm[0]["Targets"]
    assert machines[target["Arn"]["Ref"]]["Properties"]["StateMachineName"] == datasets_state_machine_name("dev")
