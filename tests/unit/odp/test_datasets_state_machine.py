"""stepfunctions/datasets.asl.json: every placeholder filled, every transition leads to a state, and the
job is started with the table ids of the File Processor execution that triggered it."""

from __future__ import annotations

from odp.contracts.datasets import DatasetJobArgs
from odp.contracts.state_machines import placeholders_in, render_definition
from tests.support.paths import REPO_ROOT

DEFINITION = REPO_ROOT / "stepfunctions" / "datasets.asl.json"
VALUES = {"DatasetJobName": "odp-dev-dataset-job", "AlertsTopicArn": "arn:aws:sns:eu-west-1:111111111111:alerts"}


def test_placeholders_and_transitions() -> None:
    text = DEFINITION.read_text(encoding="utf-8")
    assert placeholders_in(text) == set(VALUES)
    definition = render_definition(VALUES, text)
    states = definition["States"]
    targets = {definition["StartAt"]}
    for state in states.values():
        targets |= {state.get("Next"), state.get("Default")} - {None}
        targets |= {choice["Next"] for choice in state.get("Choices", [])}
        targets |= {catch["Next"] for catch in state.get("Catch", [])}
    assert targets <= set(states)
    assert set(states) - targets == set()


def test_the_job_gets_the_changed_tables_under_the_contract_name() -> None:
    states = render_definition(VALUES, DEFINITION.read_text(encoding="utf-8"))["States"]
    arguments = states["RefreshDatasets"]["Parameters"]["Arguments"]
    assert arguments == {DatasetJobArgs.option("changed_tables") + ".$": "States.JsonToString($.table_ids)"}
    assert states["RefreshDatasets"]["Parameters"]["JobName"] == "odp-dev-dataset-job"
    assert states["TableIds"]["Parameters"]["table_ids.$"] == "$.output.plan.batches[*].table_ids[*]"
