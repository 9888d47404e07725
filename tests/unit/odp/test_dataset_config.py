"""Dataset configuration (config/datasets/): every broken case fails with the exact file, path and reason."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from odp.config import ConfigError, load_config
from odp.config.datasets import ALL_TABLES, dependency_order, downstream_of
from tests.support.config_files import valid_files, write_config

ORDERS = "shop.public.orders"


def dataset(name: str, **overrides: object) -> dict[str, object]:
    base: dict[str, object] = {
        "name": name,
        "zone": "conformed",
        "database": "shop_conformed",
        "sources": [{"name": "orders", "table": ORDERS}],
        "key": ["id"],
    }
    return {**base, **overrides}


def files_with(*datasets: dict[str, object], sql: str = "SELECT id, amount FROM orders") -> dict[str, object]:
    files = valid_files()
    for entry in datasets:
        files[f"datasets/{entry['name']}.yaml"] = entry
        files[f"datasets/{entry['name']}.sql"] = sql
    return files


def errors(tmp_path: Path, files: dict[str, object]) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        load_config(write_config(tmp_path, files))
    return [str(issue) for issue in raised.value.issues]


def test_valid_datasets_load_in_dependency_order(tmp_path: Path) -> None:
    by_day = dataset(
        "by_day", zone="purpose_built", refresh="full", key=["day"], sources=[{"name": "o", "dataset": "orders_clean"}]
    )
    config = load_config(write_config(tmp_path, files_with(by_day, dataset("orders_clean"))))
    assert [d.name for d in config.datasets] == ["orders_clean", "by_day"]
    assert config.datasets[0].sql == "SELECT id, amount FROM orders"
    assert [d.name for d in downstream_of(config.datasets, [ORDERS])] == ["orders_clean", "by_day"]
    assert downstream_of(config.datasets, ["shop.public.customers"]) == []
    # past the File Processor summary's bound of table ids it hands over ["*"]: every dataset, in dependency order
    assert [d.name for d in downstream_of(config.datasets, [ALL_TABLES])] == [
        d.name for d in dependency_order(config.datasets)
    ]


def test_unknown_sources(tmp_path: Path) -> None:
    broken = dataset("a", sources=[{"name": "x", "table": "shop.public.nope"}, {"name": "y", "dataset": "ghost"}])
    broken["refresh"] = "full"
    assert errors(tmp_path, files_with(broken)) == [
        "datasets/a.yaml: sources[0].table: unknown raw table 'shop.public.nope' "
        "(a table id <source>.<schema>.<table> from tables/)",
        "datasets/a.yaml: sources[1].dataset: unknown dataset 'ghost'",
    ]


def test_cycle(tmp_path: Path) -> None:
    a = dataset("a", refresh="full", sources=[{"name": "b", "dataset": "b"}])
    b = dataset("b", refresh="full", sources=[{"name": "a", "dataset": "a"}])
    assert errors(tmp_path, files_with(a, b)) == [
        "datasets/a.yaml: sources: datasets read each other in a cycle: a -> b -> a",
        "datasets/b.yaml: sources: datasets read each other in a cycle: a -> b -> a",
    ]


def test_incremental_needs_one_source_with_the_same_key(tmp_path: Path) -> None:
    two = dataset("two", sources=[{"name": "o", "table": ORDERS}, {"name": "c", "table": "shop.public.customers"}])
    rekeyed = dataset("rekeyed", key=["region"])
    assert errors(tmp_path, files_with(two, rekeyed)) == [
        "datasets/rekeyed.yaml: key: incremental needs the source's record key ['id'] as the key, found ['region'] "
        "(an aggregate or re-keyed dataset is recomputed: use full)",
        "datasets/two.yaml: refresh: incremental needs exactly one source, found 2 (a join is recomputed: use full)",
    ]


def test_file_level_errors(tmp_path: Path) -> None:
    files = files_with(dataset("a"))
    files["datasets/a.yaml"] = dataset("b", quality=[{"type": "row_count"}, {"type": "nonsense"}])
    files["datasets/c.yaml"] = dataset("c", sql="other.sql", sources=[{"name": "o"}])
    assert errors(tmp_path, files) == [
        "datasets/a.yaml: quality[0].row_count: set min, max or both",
        "datasets/a.yaml: quality[1]: Input tag 'nonsense' found using 'type' does not match any of the expected "
        "tags: 'not_null', 'unique', 'accepted_values', 'row_count', 'expression'",
        "datasets/c.yaml: sources[0]: set exactly one of table (a raw table id) or dataset (a dataset name)",
    ]


def test_name_and_sql_file(tmp_path: Path) -> None:
    files = files_with(dataset("a"), dataset("b"))
    files["datasets/a.yaml"] = dataset("other")
    files["datasets/b.sql"] = "  ;\n"
    assert errors(tmp_path, files) == [
        "datasets/a.yaml: name: name 'other' must match the file name 'a'",
        "datasets/a.yaml: sql: SQL file datasets/other.sql not found",
        "datasets/b.yaml: sql: SQL file datasets/b.sql is empty",
    ]


def test_a_dataset_whose_dataset_config_item_exceeds_dynamodbs_item_limit_is_refused(tmp_path: Path) -> None:
    """The Configuration Manager stores a dataset, SQL included, as one DynamoDB item: at most 400 KB."""
    padding = " " * 40 + "-- padding\n"
    fits = "SELECT id, amount FROM orders\n" + padding * (399_000 // len(padding))
    too_large = "SELECT id, amount FROM orders\n" + padding * (410_000 // len(padding))
    assert load_config(write_config(tmp_path / "fits", files_with(dataset("a"), sql=fits))).datasets
    [issue] = errors(tmp_path / "large", files_with(dataset("a"), sql=too_large))
    assert re.fullmatch(
        r"datasets/a\.yaml: sql: its dataset_config item would be 410,\d{3} bytes, over DynamoDB's item size limit "
        r"of 400 KB \(409,600 bytes; the SQL is 410,\d{3} bytes of it\): shorten the SQL, or split the dataset into "
        r"datasets that read each other",
        issue,
    ), issue


def test_engine_of_a_cadence_defaults_to_glue_and_takes_emr_serverless(tmp_path: Path) -> None:
    files = valid_files()
    name = next(iter(files["cadences.yaml"]["cadences"]))
    assert load_config(write_config(tmp_path, files)).cadences.cadences[name].engine.value == "glue"
    files["cadences.yaml"]["cadences"][name]["engine"] = "emr_serverless"
    assert load_config(write_config(tmp_path, files)).cadences.cadences[name].engine.value == "emr_serverless"


def test_an_unknown_engine_is_refused(tmp_path: Path) -> None:
    files = files_with(dataset("a", engine="dataproc"))
    name = next(iter(files["cadences.yaml"]["cadences"]))
    files["cadences.yaml"]["cadences"][name]["engine"] = "dataproc"
    assert errors(tmp_path, files) == [
        f"cadences.yaml: cadences.{name}.engine: Input should be 'glue' or 'emr_serverless'",
        "datasets/a.yaml: engine: Input should be 'glue' or 'emr_serverless'",
    ]


def test_engine_of_a_dataset_defaults_to_glue_and_takes_emr_serverless(tmp_path: Path) -> None:
    files = files_with(dataset("a"), dataset("b", engine="emr_serverless"))
    engines = {d.name: d.engine.value for d in load_config(write_config(tmp_path, files)).datasets}
    assert engines == {"a": "glue", "b": "emr_serverless"}


def test_an_emr_dataset_may_read_a_glue_one_but_not_the_reverse(tmp_path: Path) -> None:
    first = dataset("first", engine="emr_serverless")
    then = dataset("then", refresh="full", sources=[{"name": "orders", "dataset": "first"}])
    assert errors(tmp_path, files_with(first, then)) == [
        "datasets/then.yaml: sources[0].dataset: dataset 'then' runs on glue and reads 'first', which runs on "
        "emr_serverless: the EMR Serverless run follows the Glue run, so move it to emr_serverless too (or its "
        "source to glue)"
    ]
    allowed = files_with(dataset("first"), {**then, "engine": "emr_serverless"})
    loaded = load_config(write_config(tmp_path / "ok", allowed)).datasets
    assert [(d.name, d.engine.value) for d in loaded] == [("first", "glue"), ("then", "emr_serverless")]
