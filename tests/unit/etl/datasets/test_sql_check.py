"""Dataset SQL on Spark's parser and analyzer (no job runs): every shipped dataset, and broken ones."""

from __future__ import annotations

from dataclasses import replace

import pytest

from etl.datasets.sql_check import check_all_sql, check_dataset_sql, declared_schema
from odp.config import load_config
from odp.config.datasets import DatasetConfig, ExpressionRule, NotNullRule, Refresh
from odp.config.loader import OdpConfig
from tests.support.paths import REPO_ROOT


@pytest.fixture(scope="module")
def shipped() -> OdpConfig:
    return load_config(REPO_ROOT / "config")


def source_schemas(spark, config: OdpConfig, dataset: DatasetConfig, outputs: dict) -> dict:
    schemas = {}
    for source in dataset.sources:
        if source.table is not None:
            schema = declared_schema(config.table(source.table))
            assert schema is not None, f"{source.table} declares no columns: its datasets cannot be checked"
            schemas[source.name] = schema
        else:
            schemas[source.name] = outputs[source.dataset]
    return schemas


def test_every_shipped_dataset_parses_and_produces_its_key(spark, shipped: OdpConfig) -> None:
    assert shipped.datasets, "config/datasets/ ships the demo datasets"
    assert [str(issue) for issue in check_all_sql(spark, shipped)] == []


def test_a_source_without_declared_columns_is_reported_not_checked(spark, shipped: OdpConfig) -> None:
    trips = "taxi_trips_dms.taxi_trips.table_1"
    tables = tuple(t.model_copy(update={"columns": None}) if t.table_id == trips else t for t in shipped.tables)
    assert [str(issue) for issue in check_all_sql(spark, replace(shipped, tables=tables))] == [
        f"datasets/trips_clean.yaml: sources[0]: SQL not checked: raw table {trips} declares no columns",
        "datasets/revenue_per_vendor_day.yaml: sources[0]: SQL not checked: dataset trips_clean was not checked",
    ]


def broken(shipped: OdpConfig, sql: str, **update) -> DatasetConfig:
    return shipped.datasets[0].model_copy(update={"sql": sql, **update})


def issues_of(spark, shipped: OdpConfig, dataset: DatasetConfig) -> list[str]:
    schemas = source_schemas(spark, shipped, dataset, {})
    return [str(issue) for issue in check_dataset_sql(spark, dataset, schemas)[0]]


def test_sql_that_does_not_parse(spark, shipped: OdpConfig) -> None:
    [issue] = issues_of(spark, shipped, broken(shipped, "SELEC pk_id FROM trips"))
    assert issue.startswith(
        "datasets/trips_clean.yaml: sql: datasets/trips_clean.sql does not parse: [PARSE_SYNTAX_ERROR]"
    )


def test_sql_reading_a_catalog_table(spark, shipped: OdpConfig) -> None:
    assert issues_of(spark, shipped, broken(shipped, "SELECT pk_id FROM taxi_trips_raw.table_1")) == [
        "datasets/trips_clean.yaml: sql: datasets/trips_clean.sql reads 'taxi_trips_raw.table_1' by its catalog "
        "name: declare it in sources"
    ]


def test_sql_reading_an_undeclared_source(spark, shipped: OdpConfig) -> None:
    [issue] = issues_of(spark, shipped, broken(shipped, "SELECT pk_id FROM other"))
    assert issue.startswith("datasets/trips_clean.yaml: sql: datasets/trips_clean.sql is not valid over its sources:")
    assert issue.endswith("(not a source: other)")


def test_sql_without_the_key_and_rule_columns(spark, shipped: OdpConfig) -> None:
    dataset = broken(
        shipped,
        "SELECT vendorid FROM trips",
        refresh=Refresh.FULL,
        quality=(
            NotNullRule(type="not_null", columns=["pickup_at"]),
            ExpressionRule(type="expression", expression="vendorid >>> 1"),
        ),
    )
    assert issues_of(spark, shipped, dataset)[:2] == [
        "datasets/trips_clean.yaml: key[0]: column 'pk_id' is not produced by datasets/trips_clean.sql "
        "(it produces: vendorid)",
        "datasets/trips_clean.yaml: quality[0]: rule not_null_pickup_at: no column pickup_at in the output",
    ]
    assert issues_of(spark, shipped, dataset)[2].startswith(
        "datasets/trips_clean.yaml: quality[1].expression: not a valid expression:"
    )


def test_incremental_sql_that_is_not_one_row_per_source_row(spark, shipped: OdpConfig) -> None:
    sql = "SELECT pk_id, COUNT(*) AS n FROM trips GROUP BY pk_id"
    assert issues_of(spark, shipped, broken(shipped, sql, quality=())) == [
        "datasets/trips_clean.yaml: refresh: incremental needs one output row per source row; "
        "datasets/trips_clean.sql has Aggregate: use full"
    ]
    window = "SELECT pk_id, row_number() OVER (PARTITION BY vendorid ORDER BY pk_id) AS n FROM trips"
    assert issues_of(spark, shipped, broken(shipped, window, quality=())) == [
        "datasets/trips_clean.yaml: refresh: incremental needs one output row per source row; "
        "datasets/trips_clean.sql has Window: use full"
    ]
