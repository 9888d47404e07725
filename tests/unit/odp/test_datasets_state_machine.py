"""stepfunctions/datasets.<engine>.asl.json: every transition leads to a state, and the job is started with the
table ids of the File Processor execution that triggered it, on Glue and (datasets with ``engine: emr_serverless``)
on EMR Serverless with the same contract."""

from __future__ import annotations

from odp.contracts.base import LedgerTables
from odp.contracts.datasets import DatasetJobArgs, LakeRoots, config_tables
from odp.contracts.job_kinds import DATASET_JOB
from odp.contracts.state_machines import (
    DatasetsOnEmrServerless,
    DatasetsOnGlue,
    EmrServerlessRun,
    entry_point_arguments,
)

ON_GLUE = DatasetsOnGlue(alerts_topic_arn="arn:aws:sns:eu-west-1:111111111111:alerts", job_name="odp-dev-dataset-job")


def test_every_transition_leads_to_a_state() -> None:
    for definition in (ON_GLUE.render(), _on_emr().render()):
        states = definition["States"]
        targets = {definition["StartAt"]}
        for state in states.values():
            targets |= {state.get("Next"), state.get("Default")} - {None}
            targets |= {choice["Next"] for choice in state.get("Choices", [])}
            targets |= {catch["Next"] for catch in state.get("Catch", [])}
        assert targets <= set(states)
        assert set(states) - targets == set()


def test_the_job_gets_the_changed_tables_under_the_contract_name() -> None:
    states = ON_GLUE.render()["States"]
    arguments = states["RefreshDatasets"]["Parameters"]["Arguments"]
    assert arguments == {
        DatasetJobArgs.option("engine"): "glue",  # the Glue run refreshes the datasets on Glue only
        DatasetJobArgs.option("changed_tables") + ".$": "States.JsonToString($.table_ids)",
    }
    assert states["RefreshDatasets"]["Next"] == "Done"
    assert states["RefreshDatasets"]["Parameters"]["JobName"] == "odp-dev-dataset-job"
    # the File Processor summary names the planned tables (["*"]: every dataset, odp.config.datasets.ALL_TABLES)
    assert states["TableIds"]["Parameters"]["table_ids.$"] == "$.output.summary.changed_tables"


def _on_emr() -> DatasetsOnEmrServerless:
    static = DatasetJobArgs.static_arguments(
        roots=LakeRoots("s3://raw", "s3://conformed", "s3://purpose"),
        ledger=LedgerTables("odp-dev-pt", "odp-dev-pth"),
        **config_tables("dev"),
    )
    run = EmrServerlessRun(
        application_id="00fapp",
        execution_role_arn="arn:aws:iam::111111111111:role/emr",
        entry_point="s3://artifacts/emr/emr_serverless.py",
        entry_point_arguments=entry_point_arguments(DATASET_JOB, static),
        spark_submit_parameters="--py-files s3://artifacts/glue/file_processor/odp.zip",
        execution_timeout_minutes=120,
    )
    return DatasetsOnEmrServerless(alerts_topic_arn=ON_GLUE.alerts_topic_arn, job_name=ON_GLUE.job_name, **run.fields())


def test_the_datasets_on_emr_serverless_run_after_the_glue_run_with_the_same_contract() -> None:
    states = _on_emr().render()["States"]
    assert states["RefreshDatasets"]["Next"] == "RefreshDatasetsOnEmr"
    emr = states["RefreshDatasetsOnEmr"]
    assert emr["Resource"] == "arn:aws:states:::emr-serverless:startJobRun.sync"
    assert emr["Next"] == "Done"
    assert emr["Catch"][0]["Next"] == "NotifyFailure"
    submit = emr["Parameters"]["JobDriver"]["SparkSubmit"]
    assert submit["EntryPoint"] == "s3://artifacts/emr/emr_serverless.py"
    arguments = submit["EntryPointArguments.$"]
    assert arguments.startswith("States.Array('dataset_job', ")
    assert "'--odp_ledger_tracker', 'odp-dev-pt'" in arguments
    assert "'--odp_raw_root', 's3://raw'" in arguments
    assert "'--odp_dataset_config', 'odp-dev-dataset-config'" in arguments  # its configuration, from DynamoDB
    assert arguments.endswith(
        "'--odp_engine', 'emr_serverless', '--odp_changed_tables', States.JsonToString($.table_ids))"
    )
