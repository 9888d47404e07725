"""The Configuration Manager against moto DynamoDB: first load, idempotent reload, diff, deactivation; tables,
cadences and datasets (dataset_config: every field and the SQL, read back by the dataset job's store)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from odp.config import load_config
from odp.config.__main__ import main
from odp.config.items import DatasetConfigRecord, table_config_from_item
from odp.config.manager import load_into_dynamodb
from odp.config.store import DatasetConfigStore, dataset_job_config
from odp.naming import DATASET_CONFIG, tracker_table_names
from odp.tracker.schema import create_tables

TABLES, CADENCES, DATASETS = 22, 3, 2  # in the repository's config/


@pytest.fixture
def config_dir(tmp_path: Path, repo_root: Path) -> Path:
    target = tmp_path / "config"
    shutil.copytree(repo_root / "config", target)
    return target


@pytest.fixture
def tracker_tables(tracker_tables: dict, dynamodb: object) -> dict:
    """The six tables and dataset_config, named as ``python -m odp.config load --env test`` names them."""
    name = tracker_table_names("test")[DATASET_CONFIG]
    create_tables(dynamodb.meta.client, {DATASET_CONFIG: name})
    return {**tracker_tables, DATASET_CONFIG: dynamodb.Table(name)}


def load(config_dir: Path, tracker_tables: dict, *, dry_run: bool = False):
    return load_into_dynamodb(
        load_config(config_dir),
        "test",
        tracker_tables["table_config"],
        tracker_tables["batch_config"],
        dataset_config_table=tracker_tables[DATASET_CONFIG],
        dry_run=dry_run,
    )


def test_first_load_adds_every_table_cadence_and_dataset(config_dir: Path, tracker_tables: dict) -> None:
    plan = load(config_dir, tracker_tables)
    assert plan.count("added") == TABLES + CADENCES + DATASETS
    assert plan.count("changed") == plan.count("deactivated") == 0
    items = tracker_tables["table_config"].scan()["Items"]
    assert len(items) == 22
    orders = tracker_tables["table_config"].get_item(Key={"table_id": "orders_dynamodb.app.orders"})["Item"]
    assert orders["format"] == "dynamodb"
    assert orders["active_cadence"] == "hourly"
    cadence = tracker_tables["batch_config"].get_item(Key={"cadence": "every_10_minutes"})["Item"]
    # as config/cadences.yaml says: the planning targets travel with the batch size (odp/planning.py)
    assert (cadence["batch_size"], cadence["target_run_minutes"], cadence["max_workers"]) == (200, 6, 10)
    assert cadence["job_name"] == "odp-test-file-processor-every_10_minutes"


def test_items_read_back_as_the_same_typed_table(config_dir: Path, tracker_tables: dict) -> None:
    load(config_dir, tracker_tables)
    config = load_config(config_dir)
    for table_id in ("taxi_trips_dms.taxi_trips.table_13", "inventory_debezium.inventory.products"):
        item = tracker_tables["table_config"].get_item(Key={"table_id": table_id})["Item"]
        assert table_config_from_item(item) == config.table(table_id)
    # Unset optional settings are left out of the item and come back as None.
    products = tracker_tables["table_config"].get_item(Key={"table_id": "inventory_debezium.inventory.products"})[
        "Item"
    ]
    assert "ordering_column" not in products
    assert table_config_from_item(products).ordering_column is None


def test_second_load_changes_nothing(config_dir: Path, tracker_tables: dict) -> None:
    load(config_dir, tracker_tables)
    again = load(config_dir, tracker_tables)
    assert again.changes == ()
    assert again.unchanged == TABLES + CADENCES + DATASETS


def test_diff_reports_changed_and_deactivated_and_never_deletes(config_dir: Path, tracker_tables: dict) -> None:
    load(config_dir, tracker_tables)
    tables_file = config_dir / "tables" / "taxi_trips_dms.yaml"
    document = yaml.safe_load(tables_file.read_text())
    document["tables"] = [t for t in document["tables"] if t["table"] != "table_2"]
    document["tables"][0]["mode"] = "historical"  # table_1
    tables_file.write_text(yaml.safe_dump(document, sort_keys=False))
    # The demo dataset trips_clean reads table_1 incrementally, which a historical table_1 refuses.
    (config_dir / "datasets" / "trips_clean.yaml").unlink()
    (config_dir / "datasets" / "revenue_per_vendor_day.yaml").unlink()

    dry = load(config_dir, tracker_tables, dry_run=True)
    assert [(c.kind, c.key, c.action) for c in dry.changes] == [
        ("table", "taxi_trips_dms.taxi_trips.table_1", "changed"),
        ("table", "taxi_trips_dms.taxi_trips.table_2", "deactivated"),
        ("dataset", "revenue_per_vendor_day", "deactivated"),
        ("dataset", "trips_clean", "deactivated"),
    ]
    # a historical table never chooses its index by size (odp.config.patterns.small_table_rows): that goes too
    assert dry.changes[0].changed_fields == ("mode", "small_table_rows")
    stored = tracker_tables["table_config"].get_item(Key={"table_id": "taxi_trips_dms.taxi_trips.table_1"})["Item"]
    assert stored["mode"] == "current", "a dry run writes nothing"

    load(config_dir, tracker_tables)
    retired = tracker_tables["table_config"].get_item(Key={"table_id": "taxi_trips_dms.taxi_trips.table_2"})["Item"]
    assert retired["is_active"] is False
    assert "active_cadence" not in retired, "inactive tables leave the cadence index"
    assert len(tracker_tables["table_config"].scan()["Items"]) == 22, "nothing is deleted"
    retired_dataset = tracker_tables[DATASET_CONFIG].get_item(Key={"dataset": "trips_clean"})["Item"]
    assert retired_dataset["is_active"] is False
    assert retired_dataset["sql"].startswith("SELECT"), "a retired dataset keeps its item"
    assert DatasetConfigStore(tracker_tables[DATASET_CONFIG]).active() == []
    assert load(config_dir, tracker_tables).changes == (), "a retired table stays retired without churn"


def test_load_cli_prints_the_diff(config_dir: Path, tracker_tables: dict, capsys: pytest.CaptureFixture) -> None:
    assert main(["load", "--env", "test", "--config-dir", str(config_dir), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("dry run, nothing written: added: 27, changed: 0, deactivated: 0, unchanged: 0")
    assert "+ table inventory_debezium.inventory.products" in out
    assert "+ dataset trips_clean" in out
    assert tracker_tables["table_config"].scan()["Items"] == []
    assert tracker_tables[DATASET_CONFIG].scan()["Items"] == []


def test_load_cli_rejects_an_unknown_environment(config_dir: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["load", "--env", "staging", "--config-dir", str(config_dir)]) == 2
    assert "unknown environment 'staging' (known: dev, prod, test)" in capsys.readouterr().err


def test_datasets_are_stored_whole_and_read_back_as_the_dataset_job_reads_them(
    config_dir: Path, tracker_tables: dict
) -> None:
    """One dataset_config item per dataset with every field and its SQL text; the dataset job's store reads back the
    same typed datasets, in dependency order, and the table_config items of the raw tables they read."""
    load(config_dir, tracker_tables)
    config = load_config(config_dir)
    item = tracker_tables[DATASET_CONFIG].get_item(Key={"dataset": "trips_clean"})["Item"]
    clean = next(d for d in config.datasets if d.name == "trips_clean")
    assert item["sql"] == clean.sql
    settings = (item["zone"], item["refresh"], item["engine"], item["is_active"])
    assert settings == ("conformed", "incremental", "glue", True)
    assert item["sources"] == [{"name": "trips", "table": "taxi_trips_dms.taxi_trips.table_1"}]
    assert DatasetConfigRecord.from_item(item).to_config() == clean

    read = dataset_job_config(tracker_tables["table_config"], tracker_tables[DATASET_CONFIG])
    assert read.datasets == config.datasets  # trips_clean, then revenue_per_vendor_day, which reads it
    assert read.tables == (config.table("taxi_trips_dms.taxi_trips.table_1"),)


def test_a_changed_dataset_names_its_fields_and_a_value_is_stored_as_written(
    config_dir: Path, tracker_tables: dict
) -> None:
    load(config_dir, tracker_tables)
    (config_dir / "datasets" / "trips_clean.sql").write_text("SELECT pk_id, vendorid AS vendor_id FROM trips\n")
    clean_file = config_dir / "datasets" / "trips_clean.yaml"
    document = yaml.safe_load(clean_file.read_text())
    document["quality"] = [{"type": "accepted_values", "column": "vendor_id", "values": [1.125, 2.0625, "x"]}]
    clean_file.write_text(yaml.safe_dump(document, sort_keys=False))

    plan = load(config_dir, tracker_tables)

    assert [(c.kind, c.key, c.action, c.changed_fields) for c in plan.changes] == [
        ("dataset", "trips_clean", "changed", ("quality", "sql"))
    ]
    stored = DatasetConfigStore(tracker_tables[DATASET_CONFIG]).active()
    assert stored[0].sql == "SELECT pk_id, vendorid AS vendor_id FROM trips"
    assert stored[0].quality[0].values == [1.125, 2.0625, "x"]  # not rounded to three decimals
    assert load(config_dir, tracker_tables).changes == ()
