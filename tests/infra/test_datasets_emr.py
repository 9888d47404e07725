"""A dataset on EMR Serverless (``engine: emr_serverless`` in its file), every cadence on Glue, synthesized with
cdk-nag: the application exists for the dataset alone, the datasets state machine runs the Glue dataset job for the
Glue datasets and then ``emr-serverless:startJobRun.sync`` of the dataset job (same contract, same entry point and
library) for the EMR ones, its role may start, watch and cancel those runs and pass only the execution role, and the
execution role holds what the dataset job needs; cfn-lint over the template."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Match, Template

from infrastructure.jobs.engines.emr_serverless import HUDI_BUNDLE, SERVICE
from odp.contracts.state_machines import DatasetsOnEmrServerless
from tests.support.streaming_stage import CONFIG as STREAMING_CONFIG
from tests.support.streaming_stage import StreamingStage, build_stage
from tests.support.synth import resources_of, role_statements_of

CONFIG: dict[str, Any] = {
    "environments.yaml": STREAMING_CONFIG["environments.yaml"],
    "cadences.yaml": STREAMING_CONFIG["cadences.yaml"],
    "tables/shop.yaml": STREAMING_CONFIG["tables/shop.yaml"],
    "datasets/invoices_clean.yaml": {
        "name": "invoices_clean",
        "zone": "conformed",
        "database": "shop_conformed",
        "sources": [{"name": "invoices", "table": "shop.public.invoices"}],
        "key": ["id"],
    },
    "datasets/invoice_ids.yaml": {
        "name": "invoice_ids",
        "zone": "purpose_built",
        "database": "shop_purpose_built",
        "sources": [{"name": "clean", "dataset": "invoices_clean"}],
        "key": ["id"],
        "refresh": "full",
        "engine": "emr_serverless",
    },
    # one consumer, so that Lake Formation (and its grants to the execution role) is in the stage
    "access.yaml": {
        "consumers": {
            "auditors": {"role_arn": "arn:aws:iam::111111111111:role/odp-auditor", "read": [{"database": "shop_raw"}]}
        }
    },
}
SQL = {"datasets/invoices_clean.sql": "SELECT id FROM invoices", "datasets/invoice_ids.sql": "SELECT id FROM clean"}


@pytest.fixture(scope="module")
def stage(tmp_path_factory: pytest.TempPathFactory) -> StreamingStage:
    config_dir = tmp_path_factory.mktemp("emr-datasets-config")
    for name, text in SQL.items():
        (config_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (config_dir / name).write_text(text + "\n", encoding="utf-8")
    return build_stage(CONFIG, config_dir, tmp_path_factory.mktemp("emr-datasets-cdk.out"))  # cdk-nag: raises


@pytest.fixture(scope="module")
def template(stage: StreamingStage) -> dict[str, Any]:
    return stage.template


def _logical(template: dict[str, Any], kind: str, **properties: Any) -> str:
    (logical,) = [
        k
        for k, v in resources_of(template, kind).items()
        if all(v["Properties"].get(name) == value for name, value in properties.items())
    ]
    return logical


def _actions(statements: list[dict[str, Any]], resource_text: str) -> set[str]:
    """Every action of the statements whose resources mention ``resource_text``."""
    found: set[str] = set()
    for statement in statements:
        if resource_text in json.dumps(statement.get("Resource")):
            actions = statement["Action"]
            found |= {actions} if isinstance(actions, str) else set(actions)
    return found


def _execution_role(template: dict[str, Any]) -> str:
    return next(
        k
        for k, r in resources_of(template, "AWS::IAM::Role").items()
        if SERVICE in json.dumps(r["Properties"]["AssumeRolePolicyDocument"])
    )


def _datasets_machine(template: dict[str, Any]) -> dict[str, Any]:
    logical = _logical(template, "AWS::StepFunctions::StateMachine", StateMachineName="odp-dev-datasets")
    return template["Resources"][logical]["Properties"]


def test_the_application_exists_for_a_dataset_alone(template) -> None:
    Template.from_json(template).resource_count_is("AWS::EMRServerless::Application", 1)
    assert _execution_role(template)


def test_the_datasets_on_emr_run_after_the_glue_run_through_the_entry_point_with_the_contract(template) -> None:
    values = _datasets_machine(template)["DefinitionSubstitutions"]
    assert values["JobName"] == "odp-dev-dataset-job"
    # the Glue run, then the EMR run: stepfunctions/datasets.emr_serverless.asl.json's placeholders
    assert set(values) == set(DatasetsOnEmrServerless.placeholders())
    state = json.dumps(values)
    for expected in (
        "emr/emr_serverless.py",
        "States.Array('dataset_job'",
        "'--odp_table_config', 'odp-dev-table-config'",  # the job's configuration, from DynamoDB
        "'--odp_dataset_config', '",
        "'--odp_ledger_tracker', '",
        "'--odp_ledger_history', '",
        "'--odp_catalog_sync', 'true'",
        "'--odp_engine', 'emr_serverless', '--odp_changed_tables', States.JsonToString($.table_ids))",
        "--py-files s3://",
        "glue/file_processor/odp_etl.zip",  # the same etl/odp zip as the Glue jobs (--extra-py-files)
        f"spark.driver.extraClassPath={HUDI_BUNDLE}",
        f"spark.executor.extraClassPath={HUDI_BUNDLE}",
    ):
        assert expected in state, expected
    assert "spark.jars" not in state
    assert "--odp_config_dir" not in state  # the configuration is read from DynamoDB, not from S3


def test_the_datasets_state_machine_may_run_watch_and_cancel_emr_runs_and_pass_only_the_execution_role(
    template,
) -> None:
    role = _datasets_machine(template)["RoleArn"]["Fn::GetAtt"][0]
    by_sid = {s.get("Sid"): s for s in role_statements_of(template, role)}
    application = _logical(template, "AWS::EMRServerless::Application", Name="odp-dev-spark")
    assert by_sid["RunEmrServerlessJob"]["Resource"] == {"Fn::GetAtt": [application, "Arn"]}
    assert sorted(by_sid["WatchEmrServerlessJob"]["Action"]) == [
        "emr-serverless:CancelJobRun",
        "emr-serverless:GetJobRun",
    ]
    passing = by_sid["PassEmrExecutionRole"]
    assert passing["Resource"] == {"Fn::GetAtt": [_execution_role(template), "Arn"]}
    assert passing["Condition"] == {"StringEquals": {"iam:PassedToService": SERVICE}}
    assert "glue:StartJobRun" in by_sid["RunDatasetJob"]["Action"]  # the Glue datasets still run on Glue


def test_the_execution_role_holds_what_the_dataset_job_needs(template) -> None:
    statements = role_statements_of(template, _execution_role(template))
    by_sid = {s.get("Sid"): s for s in statements}
    buckets = {
        zone: _logical(template, "AWS::S3::Bucket", BucketName=f"odp-dev-{zone}-111111111111-eu-west-1")
        for zone in ("raw", "conformed", "purpose-built")
    }
    for zone in ("conformed", "purpose-built"):  # writes every dataset of both zones
        assert {"s3:PutObject", "s3:DeleteObject"} <= _actions(statements, buckets[zone]), zone
    history = _logical(template, "AWS::DynamoDB::GlobalTable", TableName="odp-dev-dataset-run-history")
    tracker = _logical(template, "AWS::DynamoDB::GlobalTable", TableName="odp-dev-processing-tracker")
    assert "dynamodb:PutItem" in _actions(statements, history)
    assert "dynamodb:UpdateItem" in _actions(statements, tracker)  # the datasets' leases
    (topic,) = resources_of(template, "AWS::SNS::Topic")
    assert "sns:Publish" in _actions(statements, topic)
    # its configuration: the datasets in dataset_config, their raw tables in table_config; no config/ in S3
    dataset_config = _logical(template, "AWS::DynamoDB::GlobalTable", TableName="odp-dev-dataset-config")
    assert _actions(statements, dataset_config) == {"dynamodb:Scan"}
    assert "dynamodb:GetItem" in _actions(statements, "odp-dev-table-config") | _actions(
        statements, _logical(template, "AWS::DynamoDB::GlobalTable", TableName="odp-dev-table-config")
    )
    assert _actions(statements, "/glue/datasets/") == set()
    catalog = json.dumps(by_sid["GlueCatalogSync"]["Resource"])
    for database in ("shop_raw", "shop_purpose_built"):
        assert f"table/{database}/*" in catalog, database
    assert by_sid["LeaseHolderDatasetJobRuns"]["Action"] == "glue:GetJobRun"
    assert "job/odp-dev-dataset-job" in json.dumps(by_sid["LeaseHolderDatasetJobRuns"]["Resource"])


def test_the_glue_dataset_job_leases_its_datasets_and_asks_either_engine_about_a_holder(template) -> None:
    Template.from_json(template).has_resource_properties(
        "AWS::Glue::Job",
        Match.object_like(
            {
                "Name": "odp-dev-dataset-job",
                "ExecutionProperty": {"MaxConcurrentRuns": 1},
                "DefaultArguments": Match.object_like({"--odp_ledger_tracker": {"Ref": Match.any_value()}}),
            }
        ),
    )
    job = template["Resources"][_logical(template, "AWS::Glue::Job", Name="odp-dev-dataset-job")]["Properties"]
    role = job["Role"]["Fn::GetAtt"][0]
    by_sid = {s.get("Sid"): s for s in role_statements_of(template, role)}
    assert by_sid["LeaseHolderDatasetJobRuns"]["Action"] == "glue:GetJobRun"
    assert by_sid["LeaseHolderEmrJobRuns"]["Action"] == "emr-serverless:GetJobRun"
    tracker = _logical(template, "AWS::DynamoDB::GlobalTable", TableName="odp-dev-processing-tracker")
    history = _logical(template, "AWS::DynamoDB::GlobalTable", TableName="odp-dev-processing-tracker-history")
    assert job["DefaultArguments"]["--odp_ledger_tracker"] == {"Ref": tracker}
    assert job["DefaultArguments"]["--odp_ledger_history"] == {"Ref": history}
    assert "dynamodb:UpdateItem" in _actions(role_statements_of(template, role), tracker)  # leases and run summaries
    assert "dynamodb:PutItem" in _actions(role_statements_of(template, role), history)  # each refresh's row


def test_cfn_lint_finds_no_error_in_the_emr_datasets_stage(template, tmp_path: Path) -> None:
    from tests.support.synth import cfn_lint_problems

    assert cfn_lint_problems(template, tmp_path) == []


def test_lake_formation_gives_the_execution_role_the_catalog_sync_on_the_emr_datasets_database(template) -> None:
    role = _execution_role(template)
    databases = {
        p["Properties"]["Resource"]["Database"]["Name"]
        for p in resources_of(template, "AWS::LakeFormation::PrincipalPermissions").values()
        if p["Properties"]["Principal"]["DataLakePrincipalIdentifier"] == {"Fn::GetAtt": [role, "Arn"]}
        and "Database" in p["Properties"]["Resource"]
    }
    assert databases == {"shop_raw", "shop_purpose_built"}  # not shop_conformed: its dataset runs on Glue


def test_the_dataset_jobs_reach_emr_serverless_from_the_isolated_subnets(template) -> None:
    """Both dataset roles ask emr-serverless:GetJobRun about a lease's holder: the interface endpoint exists."""
    endpoints = [
        json.dumps(r["Properties"]["ServiceName"]) for r in resources_of(template, "AWS::EC2::VPCEndpoint").values()
    ]
    assert any("emr-serverless" in name for name in endpoints), endpoints
