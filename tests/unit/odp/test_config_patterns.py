"""A whole source in one entry (include/exclude) and shards merged (from): the loader, the pure placement of a
staging key's table, and the Configuration Manager's items for both, on moto."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from odp.config import ConfigError, load_config
from odp.config.items import table_config_from_item, table_config_item
from odp.config.manager import load_into_dynamodb
from odp.config.models import ShardFrom, TableMode, TableType
from odp.config.patterns import SourceRule, glob_matches, onboarded_table, place, rule_item_key
from odp.config.store import TableConfigStore
from tests.support.config_files import valid_files, write_config

PG_SOURCE = {
    "source": "pg",
    "format": "debezium",
    "defaults": {
        "primary_key": ["id"],
        "cadence": "fast",
        "database": "pg_raw",
        "table_type": "MERGE_ON_READ",
        "mode": "current",
    },
    "include": ["public.*", "billing.invoice_?"],
    "exclude": ["public.tmp_*"],
    "tables": [
        {"schema": "public", "table": "events", "mode": "historical"},  # an entry overrides the pattern
        {"from": "shard_*.orders", "target_table": "orders", "primary_key": ["order_id"]},
    ],
}


def with_pg(tmp_path: Path, change: Callable[[dict], None] | None = None) -> Path:
    files = valid_files()
    files["tables/pg.yaml"] = copy.deepcopy(PG_SOURCE)
    if change is not None:
        change(files["tables/pg.yaml"])
    return write_config(tmp_path, files)


def errors_of(tmp_path: Path, change: Callable[[dict], None]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config(with_pg(tmp_path, change))
    return [str(issue) for issue in caught.value.issues]


def test_one_entry_takes_a_whole_source_and_entries_override_it(tmp_path: Path) -> None:
    config = load_config(with_pg(tmp_path))
    [rule] = config.rules
    assert (rule.source, rule.include, rule.exclude) == ("pg", ("public.*", "billing.invoice_?"), ("public.tmp_*",))
    events = config.table("pg.public.events")
    assert (events.mode, events.table_type, events.primary_key) == (
        TableMode.HISTORICAL,
        TableType.MERGE_ON_READ,
        ("id",),
    )
    assert rule.merged[0].glob == "shard_*.orders"
    assert rule.merged[0].table_id == "pg.shard_*.orders"


def test_a_merged_table_puts_its_shard_first_in_its_key(tmp_path: Path) -> None:
    orders = load_config(with_pg(tmp_path)).table("pg.shard_*.orders")
    assert (orders.primary_key, orders.shard_column, orders.shard_from) == (
        ("shard", "order_id"),
        "shard",
        ShardFrom.SCHEMA,
    )
    assert (orders.database, orders.target_table) == ("pg_raw", "orders")
    assert orders.as_read().primary_key == ("order_id",)  # the reader never sees the key segment's column
    assert table_config_from_item(table_config_item(orders)) == orders


@pytest.mark.parametrize(
    ("glob", "schema_name", "table", "matches"),
    [
        ("public.*", "public", "orders", True),
        ("public.*", "Public", "orders", False),  # case-sensitive, as S3 keys are
        ("public.*", "billing", "orders", False),
        ("*.orders", "shard_007", "orders", True),
        ("shard_00[1-4].orders", "shard_005", "orders", False),
        ("billing.invoice_?", "billing", "invoice_1", True),
        ("billing.invoice_?", "billing", "invoice_12", False),
    ],
)
def test_globs_match_the_schema_and_table_segments(glob: str, schema_name: str, table: str, matches: bool) -> None:
    assert glob_matches(glob, schema_name, table) is matches


def test_a_file_is_placed_by_merged_globs_then_include_then_nowhere(tmp_path: Path) -> None:
    [rule] = load_config(with_pg(tmp_path)).rules
    assert place(rule, "pg", "shard_003", "orders").table_id == "pg.shard_*.orders"
    assert place(rule, "pg", "shard_003", "orders").onboard is None
    onboarded = place(rule, "pg", "public", "line_items")
    assert onboarded.table_id == "pg.public.line_items"
    assert onboarded.onboard is not None
    assert (onboarded.onboard.target_table, onboarded.onboard.primary_key, onboarded.onboard.onboarded) == (
        "public_line_items",
        ("id",),
        True,
    )
    assert (onboarded.onboard.cadence, onboarded.onboard.table_type) == ("fast", TableType.MERGE_ON_READ)
    assert onboarded.onboard.columns is None  # taken from the files by the reader
    assert place(rule, "pg", "public", "tmp_load").table_id is None  # excluded
    assert place(rule, "pg", "audit", "log").table_id is None  # no glob matches
    assert place(None, "pg", "public", "x").table_id is None  # a source without a rule
    retired = rule.model_copy(update={"is_active": False})
    assert place(retired, "pg", "public", "x").table_id is None


def test_a_rule_survives_its_table_config_item(tmp_path: Path) -> None:
    [rule] = load_config(with_pg(tmp_path)).rules
    item = rule.to_item()
    assert item["table_id"] == rule_item_key("pg") == "rule#pg"
    assert SourceRule.from_item(item) == rule


@pytest.mark.parametrize(
    ("case", "change", "expected"),
    [
        (
            "include without a key in defaults",
            lambda f: f["defaults"].pop("primary_key"),
            "tables/pg.yaml: defaults.primary_key: required (here or in defaults) (include onboards tables from "
            "defaults)",
        ),
        (
            "include with an unknown default cadence",
            lambda f: f["defaults"].update(cadence="weekly"),
            "tables/pg.yaml: defaults.cadence: unknown cadence 'weekly' (known: fast) (include onboards tables from "
            "defaults)",
        ),
        (
            "include with a default stream",
            lambda f: f["defaults"].update(stream="orders", cadence=None),
            "tables/pg.yaml: defaults.stream: include onboards batch tables: a streamed table needs an entry of its "
            "own (include onboards tables from defaults)",
        ),
        (
            "include glob without a dot",
            lambda f: f.update(include=["public"]),
            "tables/pg.yaml: include[0]: String should match pattern "
            "'^[A-Za-z0-9_$*?\\[\\]!-]{1,128}\\.[A-Za-z0-9_$*?\\[\\]!-]{1,128}$'",
        ),
        (
            "exclude without include",
            lambda f: f.pop("include"),
            "tables/pg.yaml: exclude applies to include: set include too",
        ),
        (
            "from and schema",
            lambda f: f["tables"][1].update(schema="shard_001"),
            "tables/pg.yaml: tables[1]: from replaces schema and table: set one or the other",
        ),
        (
            "from without target_table",
            lambda f: f["tables"][1].pop("target_table"),
            "tables/pg.yaml: tables[1]: target_table required with from (the one table every shard writes)",
        ),
        (
            "shard column in the key",
            lambda f: f["tables"][1].update(primary_key=["shard", "order_id"]),
            "tables/pg.yaml: tables[1].shard_column: 'shard' is in primary_key: a merged table puts its shard first "
            "itself",
        ),
        (
            "merged table on a stream",
            lambda f: f["tables"][1].update(stream="orders", cadence=None),
            "tables/pg.yaml: tables[1].stream: a merged table (from) is a batch table: the stream job writes one "
            "source table",
        ),
        (
            "shard settings without from",
            lambda f: f["tables"][0].update(shard_column="db"),
            "tables/pg.yaml: tables[0]: shard_column and shard_from apply to merged tables only (from: ...)",
        ),
        (
            "neither tables nor include",
            lambda f: (f.pop("include"), f.pop("exclude"), f.update(tables=[])),
            "tables/pg.yaml: tables: at least one entry required, or include: globs of the tables to onboard",
        ),
    ],
)
def test_pattern_refusals_name_file_path_and_reason(
    tmp_path: Path, case: str, change: Callable[[dict], None], expected: str
) -> None:
    assert expected in errors_of(tmp_path, change), case


def test_the_configuration_manager_writes_the_rule_and_keeps_onboarded_tables(
    tmp_path: Path, tracker_tables: dict
) -> None:
    config_dir = with_pg(tmp_path)

    def load() -> object:
        config = load_config(config_dir)
        return load_into_dynamodb(config, "test", tracker_tables["table_config"], tracker_tables["batch_config"])

    first = load()
    assert "rule#pg" in {change.key for change in first.changes if change.action == "added"}
    store = TableConfigStore(tracker_tables["table_config"])
    rule = store.rule("pg")
    assert rule is not None
    assert rule.includes("public", "orders")
    # The File Manager onboards two tables; the scan of table configurations never shows the rule item.
    for name in ("orders", "refunds"):
        assert store.onboard(onboarded_table(rule, "public", name))
    assert not store.onboard(onboarded_table(rule, "public", "orders"))  # written once
    assert "rule#pg" not in [t.table_id for t in store.scan()]
    assert store.get("pg.public.orders").onboarded

    second = load()
    assert second.changes == ()  # onboarded tables that still match are kept as they are

    # The defaults change: onboarded tables follow; a table excluded now is deactivated, never deleted.
    def exclude_refunds(f: dict) -> None:
        f["defaults"]["cadence"] = "fast"
        f["defaults"]["table_type"] = "COPY_ON_WRITE"
        f["exclude"] = ["public.tmp_*", "public.refunds"]

    with_pg(tmp_path, exclude_refunds)
    third = load()
    actions = {change.key: (change.action, change.changed_fields) for change in third.changes}
    assert actions["pg.public.orders"] == ("changed", ("table_type",))
    assert actions["pg.public.refunds"] == ("deactivated", ("is_active",))
    assert actions["rule#pg"] == ("changed", ("rule",))
    assert store.get("pg.public.orders").table_type is TableType.COPY_ON_WRITE
    assert store.get("pg.public.refunds").is_active is False


def test_the_400_table_example_of_config_readme_loads_as_written(tmp_path: Path, repo_root: Path) -> None:
    text = (repo_root / "config" / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n# file: (tables/\S+)\n(.*?)```", text, flags=re.DOTALL)
    assert [name for name, _ in blocks] == ["tables/appdb.yaml", "tables/notion.yaml", "tables/shop_ddb.yaml"]
    files = valid_files()
    files["cadences.yaml"]["cadences"]["hourly"] = {"schedule": "rate(1 hour)", "batch_size": 10}
    files.update(dict(blocks))
    config = load_config(write_config(tmp_path, files))
    rules = {rule.source: rule for rule in config.rules}
    assert rules["appdb"].includes("public", "documents")
    assert not rules["appdb"].includes("public", "orders_backup")
    assert rules["notion"].merged_table("shard_480", "block") == "notion.shard_*.block"
    assert config.table("notion.shard_*.block").primary_key == ("shard", "id")
    assert config.table("appdb.billing.invoice_lines").primary_key == ("invoice_id", "line_no")
    assert "shop_ddb" not in rules  # one entry per table: no rule item
