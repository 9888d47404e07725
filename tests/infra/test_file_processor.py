"""File Processor: one schedule and one state machine per cadence, wired to the right job, topic and function."""

from __future__ import annotations

import json

import pytest

from odp.naming import file_processor_job_name, state_machine_name


def _machines(synthesized, env: str) -> dict[str, tuple[str, dict]]:
    resources = synthesized.resources(synthesized.data_lakes[env], "AWS::StepFunctions::StateMachine")
    return {  # the datasets state machine is tested in test_datasets.py
        r["Properties"]["StateMachineName"]: (k, r["Properties"])
        for k, r in resources.items()
        if r["Properties"]["StateMachineName"] != f"odp-{env}-datasets"
    }


@pytest.mark.parametrize("env", ["dev", "test", "prod"])
def test_one_state_machine_and_one_schedule_per_cadence(synthesized, config, env) -> None:
    cadences = config.cadences.cadences
    machines = _machines(synthesized, env)
    assert set(machines) == {state_machine_name(env, c) for c in cadences}
    schedules = synthesized.resources(synthesized.data_lakes[env], "AWS::Scheduler::Schedule").values()
    by_target = {json.dumps(s["Properties"]["Target"]["Arn"]): s["Properties"] for s in schedules}
    assert len(by_target) == len(cadences)
    for name, cadence in cadences.items():
        logical, _ = machines[state_machine_name(env, name)]
        schedule = by_target[json.dumps({"Ref": logical})]
        assert schedule["ScheduleExpression"] == cadence.schedule
        assert schedule["Target"]["Input"] == "{}"


def test_substitutions_fill_map_concurrency_job_and_cadence(synthesized, config) -> None:
    machines = _machines(synthesized, "test")
    for name, cadence in config.cadences.cadences.items():
        _, props = machines[state_machine_name("test", name)]
        values = props["DefinitionSubstitutions"]
        assert values["MaxConcurrency"] == str(cadence.max_concurrency)
        assert values["JobName"] == file_processor_job_name("test", name)
        assert values["Cadence"] == name
        assert "Fn::GetAtt" in values["BatchManagerFunctionArn"]
        assert "Ref" in values["AlertsTopicArn"]


def test_logging_all_to_an_encrypted_group_and_tracing(synthesized) -> None:
    template = synthesized.data_lakes["prod"]
    groups = synthesized.resources(template, "AWS::Logs::LogGroup")
    for _, props in _machines(synthesized, "prod").values():
        assert props["TracingConfiguration"] == {"Enabled": True}
        logging = props["LoggingConfiguration"]
        assert logging["Level"] == "ALL"
        assert logging["IncludeExecutionData"] is True
        group = logging["Destinations"][0]["CloudWatchLogsLogGroup"]["LogGroupArn"]["Fn::GetAtt"][0]
        assert "KmsKeyId" in groups[group]["Properties"]


def test_state_machine_role_is_scoped_to_its_job_function_and_topic(synthesized) -> None:
    template = synthesized.data_lakes["dev"]
    policies = synthesized.resources(template, "AWS::IAM::Policy").values()
    for name, (_, props) in _machines(synthesized, "dev").items():
        role = props["RoleArn"]["Fn::GetAtt"][0]
        statements = [
            s
            for p in policies
            if {"Ref": role} in p["Properties"]["Roles"]
            for s in p["Properties"]["PolicyDocument"]["Statement"]
        ]
        glue = [s for s in statements if "glue:StartJobRun" in s["Action"]]
        assert len(glue) == 1
        assert sorted(glue[0]["Action"]) == [
            "glue:BatchStopJobRun",
            "glue:GetJobRun",
            "glue:GetJobRuns",
            "glue:StartJobRun",
        ]
        assert glue[0]["Resource"]["Fn::Join"][1][-1].endswith(f":job/{name}")
        publish = [s for s in statements if s["Action"] == "sns:Publish"]
        assert publish
        assert publish[0]["Resource"] != "*"
        invoke = [s for s in statements if s["Action"] == "lambda:InvokeFunction"]
        assert invoke
        assert "*" not in invoke[0]["Resource"]


def test_substitutions_refuse_a_changed_placeholder_list(monkeypatch, tmp_path) -> None:
    from odp.contracts.state_machines import FileProcessorOnGlue

    changed = tmp_path / "file_processor.glue.asl.json"
    changed.write_text(FileProcessorOnGlue.DEFINITION.read_text(encoding="utf-8") + "${NewPlaceholder}")
    monkeypatch.setattr(FileProcessorOnGlue, "DEFINITION", changed)
    substitutions = FileProcessorOnGlue(
        alerts_topic_arn="a",
        batch_manager_function_arn="b",
        cadence="c",
        max_concurrency=1,
        job_name="j",
        plan_bucket="p",
    )
    with pytest.raises(ValueError, match="NewPlaceholder"):
        substitutions.values()
