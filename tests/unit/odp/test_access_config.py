"""config/access.yaml: validated against the tables and datasets; turned into Lake Formation grants."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from odp.config.access import (
    DatabaseResource,
    DataCellsFilterResource,
    TableResource,
    TableWithColumnsResource,
    TagPolicyResource,
    plan_grants,
)
from odp.config.loader import ConfigError, load_config
from tests.support.config_files import valid_files, with_order_totals, write_config
from tests.support.paths import REPO_ROOT

ANALYST_ROLE = "arn:aws:iam::111111111111:role/analyst"
GROUP = "arn:aws:identitystore:::group/1234abcd-5678"
EMEA_ROLE = "arn:aws:iam::333333333333:role/emea-analyst"


def _files(access: object) -> dict[str, object]:
    files = with_order_totals(valid_files())
    files["access.yaml"] = access
    return files


def _issues(tmp_path: Path, access: object) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        load_config(write_config(tmp_path, _files(access)))
    return [str(issue) for issue in raised.value.issues]


ACCESS = {
    "databases": {"shop_raw": "confidential"},
    "consumers": {
        "analysts": {
            "role_name": "analyst",
            "read": [
                {"table": "shop.public.orders", "columns": {"exclude": ["amount"]}},
                {"dataset": "order_totals"},
            ],
        },
        "emea": {
            "role_arn": EMEA_ROLE,
            "environments": ["prod"],
            "read": [
                {
                    "table": "shop.public.orders",
                    "row_filter": "region = 'emea'",
                    "columns": {"include": ["id", "region"]},
                }
            ],
        },
        "bi": {"role_arn": ANALYST_ROLE, "read": [{"tags": {"zone": ["purpose_built"], "sensitivity": ["public"]}}]},
        "ops": {"role_name": "ops", "read": [{"database": "shop_raw"}]},
    },
}


def _plan(tmp_path: Path, environment: str = "prod", account: str = "333333333333"):
    config = load_config(write_config(tmp_path, _files(ACCESS)))
    return plan_grants(config.access, config.tables, config.datasets, environment=environment, account=account)


def test_a_consumer_gets_only_the_tables_the_file_names(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    analysts = plan.grants_of("analysts")
    assert {g.principal for g in analysts} == {"arn:aws:iam::333333333333:role/analyst"}
    assert [g.resource for g in analysts] == [
        TableWithColumnsResource("shop_raw", "orders", excluded=("amount",)),
        TableResource("shop_purpose_built", "order_totals"),
    ]
    # customers is configured in the same database but not named: no grant reaches it.
    named = {getattr(g.resource, "table", None) for g in plan.grants}
    assert "customers" not in named
    assert not any(isinstance(g.resource, TableResource) and g.resource.table is None for g in analysts)


def test_an_excluded_column_is_excluded_and_an_included_list_is_exact(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    (orders,) = [g for g in plan.grants_of("analysts") if g.resource.table == "orders"]
    assert orders.resource.excluded == ("amount",)
    assert orders.resource.columns == ()
    assert orders.permissions == ("SELECT",)


def test_a_row_filter_becomes_a_data_cells_filter(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    expected = DataCellsFilterResource(
        "shop_raw", "orders", "odp_emea_orders_0", "region = 'emea'", columns=("id", "region")
    )
    assert plan.filters == (expected,)
    (grant,) = plan.grants_of("emea")
    assert grant.principal == EMEA_ROLE
    assert grant.resource == expected
    assert grant.permissions == ("SELECT",)


def test_environments_restrict_a_consumer(tmp_path: Path) -> None:
    plan = _plan(tmp_path, environment="dev", account="111111111111")
    assert plan.grants_of("emea") == []
    assert plan.filters == ()


def test_tags_databases_and_tag_grants(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    assert plan.database_tags == {
        "shop_raw": {"zone": "raw", "sensitivity": "confidential"},
        "shop_purpose_built": {"zone": "purpose_built"},
    }
    assert plan.tags["zone"] == ("raw", "conformed", "purpose_built")
    (bi,) = plan.grants_of("bi")
    assert bi.resource == TagPolicyResource((("zone", ("purpose_built",)), ("sensitivity", ("public",))))
    assert [g.resource for g in plan.grants_of("ops")] == [
        DatabaseResource("shop_raw"),
        TableResource("shop_raw", None),
    ]


def test_merge_on_read_grants_both_catalog_tables(tmp_path: Path) -> None:
    files = _files({"consumers": {"a": {"role_name": "a", "read": [{"table": "shop.public.orders"}]}}})
    files["tables/shop.yaml"]["tables"][0]["table_type"] = "MERGE_ON_READ"
    config = load_config(write_config(tmp_path, files))
    plan = plan_grants(config.access, config.tables, config.datasets, environment="dev", account="111111111111")
    assert [g.resource.table for g in plan.grants] == ["orders_ro", "orders_rt"]


@pytest.mark.parametrize(
    ("grant", "message"),
    [
        (
            {"table": "shop.public.nope"},
            "access.yaml: consumers.c.read[0].table: consumer 'c': unknown table 'shop.public.nope'",
        ),
        (
            {"database": "nope_raw"},
            "access.yaml: consumers.c.read[0].database: consumer 'c': unknown database 'nope_raw'",
        ),
        ({"dataset": "nope"}, "access.yaml: consumers.c.read[0].dataset: consumer 'c': unknown dataset 'nope'"),
        (
            {"table": "shop.public.orders", "columns": {"exclude": ["amout"]}},
            "access.yaml: consumers.c.read[0].columns.exclude: consumer 'c': unknown column 'amout' of table "
            "shop.public.orders",
        ),
        (
            {"table": "shop.public.customers", "columns": {"include": ["id"]}},
            "access.yaml: consumers.c.read[0].columns.include: consumer 'c': table shop.public.customers declares no "
            "columns",
        ),
        (
            {"tags": {"zone": ["gold"]}},
            "access.yaml: consumers.c.read[0].tags.zone: consumer 'c': unknown zone value 'gold'",
        ),
        (
            {"database": "shop_raw", "row_filter": "id = 1"},
            "access.yaml: consumers.c.read[0]: columns and row_filter apply to a table or a dataset only",
        ),
        (
            {"table": "shop.public.orders", "columns": {"include": ["id"], "exclude": ["amount"]}},
            "access.yaml: consumers.c.read[0].columns: set exactly one of include or exclude",
        ),
    ],
)
def test_bad_grants_name_the_file_the_principal_and_the_item(tmp_path: Path, grant: dict, message: str) -> None:
    issues = _issues(tmp_path, {"consumers": {"c": {"role_name": "c", "read": [grant]}}})
    assert any(issue.startswith(message) for issue in issues), issues


def test_a_consumer_needs_exactly_one_principal(tmp_path: Path) -> None:
    issues = _issues(
        tmp_path,
        {"consumers": {"c": {"role_name": "c", "role_arn": ANALYST_ROLE, "read": [{"database": "shop_raw"}]}}},
    )
    assert issues == [
        "access.yaml: consumers.c: set exactly one of role_name, role_arn or group_arn, found ['role_name', 'role_arn']"
    ]


def test_an_identity_center_group_consumer_is_refused_until_supported(tmp_path: Path) -> None:
    """Nothing sets up Lake Formation's Identity Center integration or the BI workgroup's trusted identity
    propagation: a group's grants would deploy and apply to no query, so validate refuses the consumer."""
    issues = _issues(tmp_path, {"consumers": {"bi": {"group_arn": GROUP, "read": [{"database": "shop_raw"}]}}})
    assert issues == [
        "access.yaml: consumers.bi.group_arn: IAM Identity Center group consumers are not supported yet: nothing "
        "sets up Lake Formation's Identity Center integration and the BI workgroup has no trusted identity "
        "propagation, so the group's grants would reach no query. Use role_name or role_arn instead (e.g. the IAM "
        "role of the group's permission set, AWSReservedSSO_<permission set>_<id>)"
    ]


def test_unknown_database_sensitivity_and_environment(tmp_path: Path) -> None:
    issues = _issues(
        tmp_path,
        {
            "databases": {"shop_raw": "secret", "other": "public"},
            "consumers": {"c": {"role_name": "c", "environments": ["qa"], "read": [{"database": "shop_raw"}]}},
        },
    )
    assert issues[0].startswith("access.yaml: databases.shop_raw: unknown sensitivity 'secret'")
    assert issues[1].startswith("access.yaml: databases.other: unknown database 'other'")
    assert issues[2] == "access.yaml: consumers.c.environments: unknown environment 'qa'"


def test_no_access_file_means_no_grants(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path, valid_files()))
    plan = plan_grants(config.access, config.tables, config.datasets, environment="dev", account="111111111111")
    assert plan.grants == ()
    assert plan.database_tags == {"shop_raw": {"zone": "raw"}}


def test_the_example_of_config_readme_is_valid(tmp_path: Path) -> None:
    example = re.search(r"```yaml\n(.*?)```", (REPO_ROOT / "config" / "README.md").read_text(), re.S)
    assert example is not None
    root = tmp_path / "config"
    shutil.copytree(REPO_ROOT / "config", root)
    (root / "access.yaml").write_text(example.group(1))
    config = load_config(root)
    plan = plan_grants(config.access, config.tables, config.datasets, environment="dev", account="111111111111")
    assert sorted(config.access.consumers) == ["analysts", "bi", "ops"]
    assert {g.consumer for g in plan.grants} == {"analysts"}  # bi and ops are prod only


def test_only_grants_that_reach_later_tables_go_to_the_stack(tmp_path: Path) -> None:
    """Issue 48 item 1: a grant on one table, its columns or a row filter waits for the table (python -m odp
    lake-grants); database, every-table and LF-Tag grants reach tables created later and stay in the stack."""
    plan = _plan(tmp_path)
    assert [(g.consumer, g.resource) for g in plan.stack_grants] == [
        ("bi", TagPolicyResource((("zone", ("purpose_built",)), ("sensitivity", ("public",))))),
        ("ops", DatabaseResource("shop_raw")),
        ("ops", TableResource("shop_raw", None)),
    ]
    assert [(g.consumer, g.source, g.table) for g in plan.table_grants] == [
        ("analysts", "consumers.analysts.read[0]", ("shop_raw", "orders")),
        ("analysts", "consumers.analysts.read[1]", ("shop_purpose_built", "order_totals")),
        ("emea", "consumers.emea.read[0]", ("shop_raw", "orders")),
    ]
    assert plan.table_databases == ("shop_purpose_built", "shop_raw")
    assert set(plan.stack_grants) | set(plan.table_grants) == set(plan.grants)
