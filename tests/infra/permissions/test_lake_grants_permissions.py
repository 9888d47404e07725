"""``python -m odp lake-grants`` (odp/operations/lake_grants.py) as the config-loader role, the pipeline's post-deploy
step, in the Lake Formation stage (tests/support/lake_formation_stage.py: a column exclude and a row filter on a
MERGE_ON_READ table, so two data cells filters and three table grants): every call it makes is allowed by the role,
the role holds no Lake Formation action it does not call, and removing one it calls fails naming it.

Glue runs on moto (the catalog tables the first run would have created); Lake Formation on botocore's Stubber, since
moto 5.2.5 implements none of the data cells filter calls. The calls are recorded with sandbox.aws_calls as in
test_permissions.py, and checked against the stage's synthesized template (its one synth per session)."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws

from odp.config.access import plan_grants
from odp.config.loader import load_config
from odp.operations.lake_grants import apply_table_grants
from sandbox import aws_calls
from tests.infra.permissions.check import refusals, unique, without_action
from tests.infra.permissions.iam_policy import as_list
from tests.infra.permissions.requirements import Translation, call_requirements
from tests.infra.permissions.template import Deployment, Resolver, principals, role_policies
from tests.support.lake_formation_stage import ACCOUNT, write_config

REGION = "eu-west-1"


@pytest.fixture(scope="module")
def lake_grant_calls(tmp_path_factory: pytest.TempPathFactory) -> list[aws_calls.AwsCall]:
    root = tmp_path_factory.mktemp("lake-grants-config")
    write_config(root)
    config = load_config(root)
    plan = plan_grants(config.access, config.tables, config.datasets, environment="dev", account=ACCOUNT)
    with mock_aws(), aws_calls.CallRecorder() as recorder:
        glue = boto3.client("glue", region_name=REGION)
        glue.create_database(DatabaseInput={"Name": "shop_raw"})
        for table in config.tables:  # what the first run's catalog sync registered (both views of MERGE_ON_READ)
            columns = [{"Name": name, "Type": "string"} for name in (*(table.columns or {}), "_hoodie_commit_time")]
            suffixes = ("_ro", "_rt") if table.table_type.value == "MERGE_ON_READ" else ("",)
            for suffix in suffixes:
                name = f"{table.target_table}{suffix}"
                glue.create_table(
                    DatabaseName="shop_raw", TableInput={"Name": name, "StorageDescriptor": {"Columns": columns}}
                )
        lakeformation = boto3.client("lakeformation", region_name=REGION)
        with Stubber(lakeformation) as stub:
            for _ in plan.filters:
                stub.add_client_error("get_data_cells_filter", "EntityNotFoundException", http_status_code=400)
                stub.add_response("create_data_cells_filter", {})
            for _ in plan.table_grants:
                stub.add_response("grant_permissions", {})
            with aws_calls.acting_as(aws_calls.CONFIG_LOADER):
                report = apply_table_grants(plan, ACCOUNT, glue, lakeformation, apply=True)
            stub.assert_no_pending_responses()
    assert (report.pending, report.failures) == ([], [])
    assert len(report.done) == len(plan.filters) + len(plan.table_grants) == 5
    return recorder.calls


def _refusals(template: dict[str, Any], calls: list[aws_calls.AwsCall]) -> list[str]:
    resolver = Resolver(template, Deployment("dev", ACCOUNT, REGION))
    translation = Translation("dev", {})
    requirements = unique(r for call in calls for r in call_requirements(call, resolver, translation))
    (role,) = principals(resolver)[aws_calls.CONFIG_LOADER]
    return refusals(resolver, role, role_policies(resolver, role), requirements)


def test_the_config_loader_may_make_every_call_of_lake_grants(lake_formation_template, lake_grant_calls) -> None:
    assert {(c.service, c.operation) for c in lake_grant_calls} == {
        ("glue", "GetTable"),
        ("lakeformation", "GetDataCellsFilter"),
        ("lakeformation", "CreateDataCellsFilter"),
        ("lakeformation", "GrantPermissions"),
    }
    assert _refusals(lake_formation_template, lake_grant_calls) == []


def test_the_config_loader_holds_only_the_lake_formation_actions_it_calls(
    lake_formation_template, lake_grant_calls
) -> None:
    resolver = Resolver(lake_formation_template, Deployment("dev", ACCOUNT, REGION))
    (role,) = principals(resolver)[aws_calls.CONFIG_LOADER]
    held = {
        action
        for document in role_policies(resolver, role)
        for statement in as_list(document.get("Statement"))
        for action in as_list(statement["Action"])
        if action.startswith("lakeformation:")
    }
    called = {f"lakeformation:{c.operation}" for c in lake_grant_calls if c.service == "lakeformation"}
    # UpdateDataCellsFilter: a filter access.yaml changed since the last run (tests/unit/odp/test_lake_grants.py)
    assert held == called | {"lakeformation:UpdateDataCellsFilter"}


@pytest.mark.parametrize(
    ("action", "resource"),
    [
        ("lakeformation:GrantPermissions", "*"),
        ("lakeformation:CreateDataCellsFilter", "*"),
        ("glue:GetTable", f"arn:aws:glue:{REGION}:{ACCOUNT}:table/shop_raw/orders_rt"),
    ],
)
def test_removing_a_grant_lake_grants_needs_fails_naming_it(
    lake_formation_template, lake_grant_calls, action: str, resource: str
) -> None:
    resolver = Resolver(lake_formation_template, Deployment("dev", ACCOUNT, REGION))
    failures = _refusals(without_action(resolver, aws_calls.CONFIG_LOADER, action), lake_grant_calls)
    assert failures
    assert all(
        f.startswith(f"config-loader (role odp-dev-config-loader) is not allowed {action} on ") for f in failures
    )
    assert any(f" {action} on {resource}: needed by " in f for f in failures), failures
    assert all("from odp/operations/lake_grants.py" in f for f in failures), failures
