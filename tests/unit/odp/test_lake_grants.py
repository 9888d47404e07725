"""python -m odp lake-grants (odp/operations/lake_grants.py): the consumers' grants on one table, applied once the
table exists. Glue and Lake Formation's grants run on moto (it stores GrantPermissions and lists them); moto 5.2.5
does not implement CreateDataCellsFilter, GetDataCellsFilter nor UpdateDataCellsFilter (its ListDataCellsFilter
always answers an empty list), so the data cells filter path runs on botocore's Stubber answering as Lake Formation
documents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws
from moto.core import DEFAULT_ACCOUNT_ID

from odp.__main__ import main as odp_main
from odp.config.access import plan_grants
from odp.config.loader import load_config
from odp.operations import lake_grants
from odp.operations.lake_grants import apply_table_grants
from tests.support.config_files import valid_files, with_order_totals, write_config

ACCOUNT = DEFAULT_ACCOUNT_ID
REGION = "eu-west-1"
ANALYST = f"arn:aws:iam::{ACCOUNT}:role/analyst"
EMEA = f"arn:aws:iam::{ACCOUNT}:role/emea-analyst"
ACCESS = {
    "consumers": {
        "analysts": {
            "role_name": "analyst",
            "read": [
                {"table": "shop.public.orders", "columns": {"exclude": ["amount"]}},
                {"dataset": "order_totals"},
            ],
        },
        "emea": {
            "role_arn": EMEA,
            "environments": ["prod"],
            "read": [
                {
                    "table": "shop.public.orders",
                    "row_filter": "region = 'emea'",
                    "columns": {"include": ["id", "region"]},
                }
            ],
        },
        "ops": {"role_name": "ops", "read": [{"database": "shop_raw"}]},  # a stack grant: never applied here
    },
}
ORDERS_COLUMNS = ["id", "region", "amount", "_hoodie_commit_time"]


def _plan(tmp_path: Path, environment: str):
    files = with_order_totals(valid_files())
    files["access.yaml"] = ACCESS
    config = load_config(write_config(tmp_path, files))
    return plan_grants(config.access, config.tables, config.datasets, environment=environment, account=ACCOUNT)


def _catalog(glue: Any, tables: dict[tuple[str, str], list[str]]) -> None:
    for database in sorted({d for d, _ in tables}):
        glue.create_database(DatabaseInput={"Name": database})
    for (database, table), columns in tables.items():
        glue.create_table(
            DatabaseName=database,
            TableInput={
                "Name": table,
                "StorageDescriptor": {"Columns": [{"Name": c, "Type": "string"} for c in columns]},
            },
        )


def _listed(lakeformation: Any) -> list[dict[str, Any]]:
    return sorted(
        (p for p in lakeformation.list_permissions()["PrincipalResourcePermissions"]), key=lambda p: str(p["Resource"])
    )


ORDERS_GRANT = {
    "Principal": {"DataLakePrincipalIdentifier": ANALYST},
    "Resource": {
        "TableWithColumns": {
            "CatalogId": ACCOUNT,
            "DatabaseName": "shop_raw",
            "Name": "orders",
            "ColumnWildcard": {"ExcludedColumnNames": ["amount"]},
        }
    },
    "Permissions": ["SELECT"],
    "PermissionsWithGrantOption": [],
}


def test_grants_wait_for_their_table_and_a_second_run_changes_nothing(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "dev")  # no emea (prod only): no data cells filter
    with mock_aws():
        glue = boto3.client("glue", region_name=REGION)
        lakeformation = boto3.client("lakeformation", region_name=REGION)
        _catalog(glue, {("shop_raw", "orders"): ORDERS_COLUMNS})  # order_totals: its dataset never ran

        planned = apply_table_grants(plan, ACCOUNT, glue, lakeformation, apply=False)
        assert lakeformation.list_permissions()["PrincipalResourcePermissions"] == []  # without --yes: nothing
        first = apply_table_grants(plan, ACCOUNT, glue, lakeformation, apply=True)
        second = apply_table_grants(plan, ACCOUNT, glue, lakeformation, apply=True)

        assert _listed(lakeformation) == [ORDERS_GRANT]  # once, after two runs; never the database grant of ops
        _catalog(glue, {("shop_purpose_built", "order_totals"): ["customer", "total"]})
        third = apply_table_grants(plan, ACCOUNT, glue, lakeformation, apply=True)
        totals = {
            "Principal": {"DataLakePrincipalIdentifier": ANALYST},
            "Resource": {"Table": {"CatalogId": ACCOUNT, "DatabaseName": "shop_purpose_built", "Name": "order_totals"}},
            "Permissions": ["SELECT", "DESCRIBE"],
            "PermissionsWithGrantOption": [],
        }
        assert _listed(lakeformation) == [totals, ORDERS_GRANT]

    grant = f"grant SELECT on shop_raw.orders every column but amount to {ANALYST} (consumer 'analysts' (consumers.analysts.read[0]))"
    waiting = (
        "table shop_purpose_built.order_totals does not exist yet (the first run of its job creates it): 1 grant(s) "
        "wait, for analysts (consumers.analysts.read[1]); run this again then"
    )
    assert (planned.done, planned.pending, planned.failures) == ([grant], [waiting], [])
    assert first == second == planned
    assert third.pending == []
    assert third.failures == []
    assert planned.render("dev", applied=False).splitlines() == [
        f"would: {grant}",
        f"pending: {waiting}",
        "lake-grants of dev: 1 to apply, 1 table(s) not created yet, 0 failure(s); nothing changed: run again "
        "with --yes to do this",
    ]


def test_a_column_the_table_lacks_fails_naming_the_consumer_and_its_entry(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "dev")
    with mock_aws():
        glue = boto3.client("glue", region_name=REGION)
        lakeformation = boto3.client("lakeformation", region_name=REGION)
        _catalog(glue, {("shop_raw", "orders"): ["id", "region"], ("shop_purpose_built", "order_totals"): ["total"]})
        report = apply_table_grants(plan, ACCOUNT, glue, lakeformation, apply=True)
        listed = _listed(lakeformation)
    assert report.failures == [
        "consumer 'analysts' (consumers.analysts.read[0]): table shop_raw.orders has no column amount (it has id, "
        "region): fix access.yaml or the table's columns"
    ]
    assert [p["Resource"] for p in listed] == [
        {"Table": {"CatalogId": ACCOUNT, "DatabaseName": "shop_purpose_built", "Name": "order_totals"}}
    ]  # the other grant went on


def _not_found(stub: Stubber, operation: str) -> None:
    stub.add_client_error(operation, service_error_code="EntityNotFoundException", http_status_code=400)


FILTER_KEY = {"TableCatalogId": ACCOUNT, "DatabaseName": "shop_raw", "TableName": "orders", "Name": "odp_emea_orders_0"}
FILTER = {**FILTER_KEY, "RowFilter": {"FilterExpression": "region = 'emea'"}, "ColumnNames": ["id", "region"]}


def _grants_of_prod(stub: Stubber) -> None:
    """The two grants on shop_raw.orders, in the plan's order (order_totals does not exist here)."""
    stub.add_response("grant_permissions", {}, {"CatalogId": ACCOUNT, **ORDERS_GRANT})
    stub.add_response(
        "grant_permissions",
        {},
        {
            "CatalogId": ACCOUNT,
            "Principal": {"DataLakePrincipalIdentifier": EMEA},
            "Resource": {"DataCellsFilter": FILTER_KEY},
            "Permissions": ["SELECT"],
            "PermissionsWithGrantOption": [],
        },
    )


@pytest.mark.parametrize(
    ("existing", "expected_call", "done"),
    [
        (None, "create_data_cells_filter", "create"),
        (FILTER, None, None),  # the same filter: left alone
        (
            {**FILTER, "RowFilter": {"FilterExpression": "region = 'eu'"}, "VersionId": "7"},
            "update_data_cells_filter",
            "update",
        ),
    ],
    ids=["missing", "same", "changed"],
)
def test_a_row_filter_is_created_once_updated_when_changed_then_granted(
    tmp_path: Path, existing: dict | None, expected_call: str | None, done: str | None
) -> None:
    plan = _plan(tmp_path, "prod")
    with mock_aws():
        glue = boto3.client("glue", region_name=REGION)
        _catalog(glue, {("shop_raw", "orders"): ORDERS_COLUMNS})
        lakeformation = boto3.client("lakeformation", region_name=REGION)
        with Stubber(lakeformation) as stub:
            if existing is None:
                _not_found(stub, "get_data_cells_filter")
            else:
                stub.add_response("get_data_cells_filter", {"DataCellsFilter": existing}, FILTER_KEY)
            if expected_call == "create_data_cells_filter":
                stub.add_response(expected_call, {}, {"TableData": FILTER})
            if expected_call == "update_data_cells_filter":
                stub.add_response(expected_call, {}, {"TableData": {**FILTER, "VersionId": "7"}})
            _grants_of_prod(stub)
            report = apply_table_grants(plan, ACCOUNT, glue, lakeformation, apply=True)
            stub.assert_no_pending_responses()
    where = "data cells filter odp_emea_orders_0 on shop_raw.orders (rows: region = 'emea')"
    assert report.failures == []
    assert report.done[: 1 if done else 0] == ([f"{done} {where}"] if done else [])
    assert report.done[-1] == (
        f"grant SELECT on shop_raw.orders through data cells filter odp_emea_orders_0 to {EMEA} "
        "(consumer 'emea' (consumers.emea.read[0]))"
    )


def test_a_refused_filter_is_reported_and_its_grant_not_attempted(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "prod")
    with mock_aws():
        glue = boto3.client("glue", region_name=REGION)
        _catalog(glue, {("shop_raw", "orders"): ORDERS_COLUMNS})
        lakeformation = boto3.client("lakeformation", region_name=REGION)
        with Stubber(lakeformation) as stub:
            stub.add_client_error(
                "get_data_cells_filter",
                service_error_code="AccessDeniedException",
                service_message="Insufficient Lake Formation permission(s) on orders",
                http_status_code=400,
            )
            stub.add_response("grant_permissions", {}, {"CatalogId": ACCOUNT, **ORDERS_GRANT})  # the other grant
            report = apply_table_grants(plan, ACCOUNT, glue, lakeformation, apply=True)
            stub.assert_no_pending_responses()
    assert report.failures == [
        "data cells filter odp_emea_orders_0 on shop_raw.orders: AccessDeniedException: Insufficient Lake "
        "Formation permission(s) on orders",
        f"consumer 'emea' (consumers.emea.read[0]): not granted SELECT on shop_raw.orders through data cells filter "
        f"odp_emea_orders_0 to {EMEA}: its data cells filter failed (above)",
    ]


def test_the_command_exits_1_on_a_failure_and_calls_nothing_without_table_grants(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    files = valid_files()  # no access.yaml: nothing to grant, no AWS call (no credentials needed)
    none = str(write_config(tmp_path / "none", files))
    assert odp_main(["lake-grants", "--env", "dev", "--config-dir", none]) == 0  # python -m odp lake-grants
    assert capsys.readouterr().out == "lake-grants of dev: no grant names a table (nothing to apply)\n"
    files = with_order_totals(valid_files())
    files["access.yaml"] = ACCESS
    config_dir = write_config(tmp_path / "some", files)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():  # the tables exist, but orders lacks amount: a failure
        region = load_config(config_dir).environments.environments["dev"].region
        _catalog(boto3.client("glue", region_name=region), {("shop_raw", "orders"): ["id"]})
        assert lake_grants.main(["--env", "dev", "--config-dir", str(config_dir), "--yes"]) == 1
    out, err = capsys.readouterr()
    assert err.startswith("FAIL consumer 'analysts' (consumers.analysts.read[0]): table shop_raw.orders has no column")
    assert out.splitlines()[-1].startswith("lake-grants of dev: ")
