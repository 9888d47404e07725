"""config/views/*.sql: parsed in Athena's dialect, resolved against the configuration, rendered for Glue."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from odp.config.loader import load_config
from odp.config.views import check_views, create_view_ddl, glue_view_table
from tests.support.config_files import ORDER_TOTALS_SQL, valid_files, with_order_totals, write_config
from tests.support.paths import REPO_ROOT

GOOD_VIEW = """-- big regions only
SELECT t.region, t.total, CAST(t.total / 100 AS DECIMAL(18, 2)) AS hundreds
FROM shop_purpose_built.order_totals t
JOIN shop_raw.orders o ON o.region = t.region
WHERE t.total > 1000;
"""


def _check(
    tmp_path: Path,
    views: dict[str, str],
    *,
    dataset_sql: str = ORDER_TOTALS_SQL,
    access: object = None,
):
    files = with_order_totals(valid_files(), dataset_sql)
    if access is not None:
        files["access.yaml"] = access
    files.update({f"views/{name}": sql for name, sql in views.items()})
    root = write_config(tmp_path, files)
    return check_views(root, load_config(root))


def test_a_view_resolves_tables_datasets_and_types(tmp_path: Path) -> None:
    views, issues = _check(tmp_path, {"shop_purpose_built.big_regions.sql": GOOD_VIEW})
    assert issues == []
    (view,) = views
    assert (view.database, view.name) == ("shop_purpose_built", "big_regions")
    assert [(c.name, c.athena_type, c.hive_type) for c in view.columns] == [
        ("region", "varchar", "string"),
        ("total", "decimal(38,2)", "decimal(38,2)"),
        ("hundreds", "decimal(18,2)", "decimal(18,2)"),
    ]
    assert view.sql.startswith("SELECT t.region")
    assert view.sql.endswith("t.total > 1000")


def test_the_glue_table_is_a_presto_view(tmp_path: Path) -> None:
    (view,), _ = _check(tmp_path, {"shop_purpose_built.big_regions.sql": GOOD_VIEW})
    table = glue_view_table(view)
    assert table["TableType"] == "VIRTUAL_VIEW"
    assert table["Parameters"]["presto_view"] == "true"
    text = table["ViewOriginalText"]
    assert text.startswith("/* Presto View: ")
    assert text.endswith(" */")
    definition = json.loads(base64.b64decode(text.removeprefix("/* Presto View: ").removesuffix(" */")))
    assert definition["originalSql"] == view.sql
    assert definition["schema"] == "shop_purpose_built"
    assert definition["catalog"] == "awsdatacatalog"
    assert definition["columns"][0] == {"name": "region", "type": "varchar"}
    assert table["StorageDescriptor"]["Columns"][1] == {"Name": "total", "Type": "decimal(38,2)"}
    assert create_view_ddl(view).startswith('CREATE OR REPLACE VIEW "shop_purpose_built"."big_regions" AS\nSELECT')


def test_bad_views_name_the_file_and_the_unknown_item_and_do_not_stop_the_rest(tmp_path: Path) -> None:
    views, issues = _check(
        tmp_path,
        {
            "shop_raw.a_unknown_table.sql": "SELECT id FROM shop_raw.ordrs",
            "shop_raw.b_unknown_column.sql": "SELECT id, amout FROM shop_raw.orders",
            "shop_raw.c_unknown_database.sql": "SELECT id FROM nope.orders",
            "shop_raw.d_not_sql.sql": "SELEC id FROM",
            "shop_raw.e_good.sql": "SELECT id, amount FROM shop_raw.orders",
            "shop_raw.f_undeclared.sql": "SELECT id FROM shop_raw.customers",
            "nope.g_view.sql": "SELECT 1 AS one",
            "shop_raw.h_unqualified.sql": "SELECT id FROM orders",
            "shop_raw.orders.sql": "SELECT id FROM shop_raw.orders",
        },
    )
    assert [v.name for v in views] == ["e_good"]
    messages = [str(issue) for issue in issues]
    assert messages[0].startswith("views/nope.g_view.sql: unknown database 'nope'")
    assert messages[1].startswith(
        "views/shop_raw.a_unknown_table.sql: unknown table shop_raw.ordrs (known in shop_raw:"
    )
    assert messages[2] == "views/shop_raw.b_unknown_column.sql: Column 'amout' could not be resolved"
    assert messages[3] == "views/shop_raw.c_unknown_database.sql: unknown database 'nope' (in nope.orders)"
    assert messages[4].startswith("views/shop_raw.d_not_sql.sql: does not parse as trino SQL")
    assert messages[5].startswith("views/shop_raw.f_undeclared.sql: reads a table whose columns are not declared")
    assert messages[6] == "views/shop_raw.h_unqualified.sql: table 'orders' must be named <database>.orders"
    assert messages[7] == "views/shop_raw.orders.sql: shop_raw.orders is already a table"
    assert len(messages) == 8


def test_a_view_reads_a_view_before_it(tmp_path: Path) -> None:
    views, issues = _check(
        tmp_path,
        {
            "shop_raw.a_base.sql": "SELECT id, region FROM shop_raw.orders",
            "shop_raw.b_top.sql": "SELECT region, COUNT(*) AS n FROM shop_raw.a_base GROUP BY region",
        },
    )
    assert issues == []
    assert [c.name for c in views[1].columns] == ["region", "n"]


def test_a_dataset_sql_naming_an_unknown_source_column_is_reported(tmp_path: Path) -> None:
    _, issues = _check(tmp_path, {}, dataset_sql="SELECT region, SUM(amont) AS total FROM orders GROUP BY region")
    assert [str(i) for i in issues] == ["datasets/order_totals.sql: Column 'amont' could not be resolved"]


def test_access_columns_of_a_dataset_are_checked_against_its_output(tmp_path: Path) -> None:
    access = {
        "consumers": {"c": {"role_name": "c", "read": [{"dataset": "order_totals", "columns": {"exclude": ["totl"]}}]}}
    }
    _, issues = _check(tmp_path, {}, access=access)
    assert [str(i) for i in issues] == [
        "access.yaml: consumers.c.read[0].columns.exclude: consumer 'c': unknown column 'totl' of dataset order_totals"
    ]


def test_the_shipped_views_are_valid() -> None:
    root = REPO_ROOT / "config"
    views, issues = check_views(root, load_config(root))
    assert issues == []
    assert {f"{v.database}.{v.name}" for v in views} == {
        "taxi_trips_dms_purpose_built.vendor_daily_summary",
        "taxi_trips_dms_conformed.trips_without_tips",
    }


def test_a_row_filter_naming_an_unknown_column_is_reported(tmp_path: Path) -> None:
    access = {
        "consumers": {
            "c": {
                "role_name": "c",
                "read": [
                    {"table": "shop.public.orders", "row_filter": "regoin = 'emea'"},
                    {"table": "shop.public.orders", "row_filter": "region = 'emea' AND amount > 10"},
                    {"dataset": "order_totals", "row_filter": "total >"},
                ],
            }
        }
    }
    _, issues = _check(tmp_path, {}, access=access)
    messages = [str(i) for i in issues]
    assert messages[0] == (
        "access.yaml: consumers.c.read[0].row_filter: consumer 'c': table shop.public.orders: "
        "Column 'regoin' could not be resolved"
    )
    assert messages[1].startswith(
        "access.yaml: consumers.c.read[2].row_filter: consumer 'c': dataset order_totals: not a condition: "
    )
    assert len(messages) == 2
