"""stepfunctions/datasets.asl.json: every placeholder filled, every transition leads to a state, and the
job is started with the table ids of the File Processor execution that triggered it."""

from __future__ import annotations

from odp.contracts.datasets import DatasetJobArgs, LakeRoots
from odp.contracts.state_machines import (
    NO_DATASETS_ON_EMR,
    EmrJobRunSettings,
    datasets_emr_state,
    placeholders_in,
    render_definition,
)
from tests.support.paths import REPO_ROOT

DEFINITION = REPO_ROOT / "stepfunctions" / "datasets.asl.json"
VALUES = {
    "DatasetJobName": "odp-dev-dataset-job",
    "AlertsTopicArn": "arn:aws:sns:eu-west-1:111111111111:alerts",
    "RefreshOnEmr": NO_DATASETS_ON_EMR,
}


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
    assert arguments == {
        DatasetJobArgs.option("engine"): "glue",  # the Glue run refreshes the datasets on Glue only
        DatasetJobArgs.option("changed_tables") + ".$": "States.JsonToString($.table_ids)",
    }
    assert states["RefreshDatasets"]["Next"] == "RefreshDatasetsOnEmr"
    assert states["RefreshDatasetsOnEmr"] == {
        "Type": "Pass",
        "Comment": "No dataset runs on EMR Serverless (config/datasets/*.yaml engine:).",
        "Next": "Done",
    }
    assert states["RefreshDatasets"]["Parameters"]["JobName"] == "odp-dev-dataset-job"
    assert states["TableIds"]["Parameters"]["table_ids.$"] == "$.output.plan.batches[*].table_ids[*]"


def test_the_datasets_on_emr_serverless_run_after_the_glue_run_with_the_same_contract() -> None:
    static = DatasetJobArgs(LakeRoots("s3://raw", "s3://conformed", "s3://purpose"), lease_table="odp-dev-pt")
    static_arguments = DatasetJobArgs.static_arguments(roots=static.roots, lease_table=static.lease_table)
    settings = EmrJobRunSettings(
        application_id="00fapp",
        execution_role_arn="arn:aws:iam::111111111111:role/emr",
        entry_point="s3://artifacts/emr/emr_serverless.py",
        spark_submit_parameters="--py-files s3://artifacts/glue/file_processor/odp.zip",
        timeout_minutes=120,
    )
    state = datasets_emr_state(settings, static_arguments)
    definition = render_definition({**VALUES, "RefreshOnEmr": state}, DEFINITION.read_text(encoding="utf-8"))
    emr = definition["States"]["RefreshDatasetsOnEmr"]
    assert emr["Resource"] == "arn:aws:states:::emr-serverless:startJobRun.sync"
    assert emr["Next"] == "Done"
    assert emr["Catch"][0]["Next"] == "NotifyFailure"
    submit = emr["Parameters"]["JobDriver"]["SparkSubmit"]
    assert submit["EntryPoint"] == "s3://artifacts/emr/emr_serverless.py"
    arguments = submit["EntryPointArguments.$"]
    assert arguments.startswith("States.Array('dataset_job', ")
    assert "'--odp_lease_table', 'odp-dev-pt'" in arguments
    assert "'--odp_raw_root', 's3://raw'" in arguments
    assert arguments.endswith(
        "'--odp_engine', 'emr_serverless', '--odp_changed_tables', States.JsonToString($.table_ids))"
    )
