"""The Configuration Manager against moto DynamoDB: first load, idempotent reload, diff, deactivation."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from odp.config import load_config
from odp.config.__main__ import main
from odp.config.items import table_config_from_item
from odp.config.manager import load_into_dynamodb


@pytest.fixture
def config_dir(tmp_path: Path, repo_root: Path) -> Path:
    target = tmp_path / "config"
    shutil.copytree(repo_root / "config", target)
    return target


def load(config_dir: Path, tracker_tables: dict, *, dry_run: bool = False):
    return load_into_dynamodb(
        load_config(config_dir),
        "test",
        tracker_tables["table_config"],
        tracker_tables["batch_config"],
        dry_run=dry_run,
    )


def test_first_load_adds_every_table_and_cadence(config_dir: Path, tracker_tables: dict) -> None:
    plan = load(config_dir, tracker_tables)
    assert plan.count("added") == 22 + 3
    assert plan.count("changed") == plan.count("deactivated") == 0
    items = tracker_tables["table_config"].scan()["Items"]
    assert len(items) == 22
    orders = tracker_tables["table_config"].get_item(Key={"table_id": "orders_dynamodb.app.orders"})["Item"]
    assert orders["format"] == "dynamodb"
    assert orders["active_cadence"] == "hourly"
    cadence = tracker_tables["batch_config"].get_item(Key={"cadence": "every_10_minutes"})["Item"]
    assert cadence["batch_size"] == 5
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
    assert again.unchanged == 25


def test_diff_reports_changed_and_deactivated_and_never_deletes(config_dir: Path, tracker_tables: dict) -> None:
    load(config_dir, tracker_tables)
    tables_file = config_dir / "tables" / "taxi_trips_dms.yaml"
    document = yaml.safe_load(tables_file.read_text())
    document["tables"] = [t for t in document["tables"] if t["table"] != "table_2"]
    document["tables"][0]["mode"] = "historical"  # table_1
    tables_file.write_text(yaml.safe_dump(document, sort_keys=False))

    dry = load(config_dir, tracker_tables, dry_run=True)
    assert [(c.key, c.action) for c in dry.changes] == [
        ("taxi_trips_dms.taxi_trips.table_1", "changed"),
        ("taxi_trips_dms.taxi_trips.table_2", "deactivated"),
    ]
    assert dry.changes[0].changed_fields == ("mode",)
    stored = tracker_tables["table_config"].get_item(Key={"table_id": "taxi_trips_dms.taxi_trips.table_1"})["Item"]
    assert stored["mode"] == "current", "a dry run writes nothing"

    load(config_dir, tracker_tables)
    retired = tracker_tables["table_config"].get_item(Key={"table_id": "taxi_trips_dms.taxi_trips.table_2"})["Item"]
    assert retired["is_active"] is False
    assert "active_cadence" not in retired, "inactive tables leave the cadence index"
    assert len(tracker_tables["table_config"].scan()["Items"]) == 22, "nothing is deleted"
    assert load(config_dir, tracker_tables).changes == (), "a retired table stays retired without churn"


def test_load_cli_prints_the_diff(config_dir: Path, tracker_tables: dict, capsys: pytest.CaptureFixture) -> None:
    assert main(["load", "--env", "test", "--config-dir", str(config_dir), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("dry run, nothing written: added: 25, changed: 0, deactivated: 0, unchanged: 0")
    assert "+ table inventory_debezium.inventory.products" in out
    assert tracker_tables["table_config"].scan()["Items"] == []


def test_load_cli_rejects_an_unknown_environment(config_dir: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["load", "--env", "staging", "--config-dir", str(config_dir)]) == 2
    assert "unknown environment 'staging' (known: dev, prod, test)" in capsys.readouterr().err
