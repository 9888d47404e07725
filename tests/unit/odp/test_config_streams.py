"""streams.yaml and the per-table ``stream`` setting: a table is batch (cadence) or stream, never both."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from odp.config import ConfigError, load_config
from odp.config.items import ACTIVE_CADENCE_ATTRIBUTE, table_config_from_item, table_config_item
from odp.config.streams import streamed_tables
from tests.support.config_files import valid_files, write_config


def with_stream(files: dict) -> dict:
    files["streams.yaml"] = {"streams": {"shop_changes": {"window_seconds": 60}}}
    files["tables/app_dynamodb.yaml"] = {
        "source": "app_dynamodb",
        "format": "dynamodb",
        "defaults": {"stream": "shop_changes", "database": "app_raw"},
        "tables": [{"schema": "app", "table": "carts", "primary_key": ["id"]}],
    }
    return files


def stream_a_dms_table(files: dict) -> None:
    shop = files["tables/shop.yaml"]
    shop["defaults"].pop("cadence")
    shop["tables"][0]["cadence"] = "fast"
    shop["tables"][1]["stream"] = "shop_changes"


def errors_of(tmp_path: Path, change: Callable[[dict], None]) -> list[str]:
    files = with_stream(valid_files())
    change(files)
    write_config(tmp_path, files)
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    return [str(issue) for issue in caught.value.issues]


def test_a_streamed_table_has_a_stream_and_no_cadence(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path, with_stream(valid_files())))
    carts = config.table("app_dynamodb.app.carts")
    assert (carts.stream, carts.cadence) == ("shop_changes", None)
    stream = config.streams.streams["shop_changes"]
    assert (stream.window_seconds, stream.starting_position, stream.number_of_workers) == (60, "TRIM_HORIZON", 2)
    assert stream.checkpoint_key_prefix("shop_changes") == "streaming/shop_changes/checkpoint/"
    assert [t.table_id for t in streamed_tables(config.tables, "shop_changes")] == ["app_dynamodb.app.carts"]
    assert config.tables_for_cadence("fast") == [
        config.table("shop.public.orders"),
        config.table("shop.public.customers"),
    ]
    # The runtime copy: a streamed table is never in the Batch Manager's cadence index.
    item = table_config_item(carts)
    assert ACTIVE_CADENCE_ATTRIBUTE not in item
    assert "cadence" not in item
    assert table_config_from_item(item) == carts


def test_without_streams_yaml_no_table_is_streamed(tmp_path: Path) -> None:
    assert load_config(write_config(tmp_path, valid_files())).streams.streams == {}


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda f: f["tables/app_dynamodb.yaml"]["defaults"].update(cadence="fast"),
            [
                "tables/app_dynamodb.yaml: tables[0].stream: "
                "a table is either batch (cadence 'fast') or stream (stream 'shop_changes'), not both"
            ],
        ),
        (
            lambda f: f["tables/app_dynamodb.yaml"]["defaults"].pop("stream"),
            ["tables/app_dynamodb.yaml: tables[0].cadence: required (here or in defaults), or a stream"],
        ),
        (
            lambda f: f["tables/app_dynamodb.yaml"]["defaults"].update(stream="other"),
            [
                "tables/app_dynamodb.yaml: app_dynamodb.app.carts: unknown stream 'other' (known: shop_changes)",
                "streams.yaml: streams.shop_changes: no table names this stream "
                "(set `stream: <name>` on a dynamodb table, or remove the stream)",
            ],
        ),
        (
            lambda f: f["tables/app_dynamodb.yaml"]["defaults"].update(index_buckets=4),
            [
                "tables/app_dynamodb.yaml: tables[0].index_buckets: applies to batch tables only (a streamed table is "
                "written by its stream job)"
            ],
        ),
        (
            lambda f: f["tables/app_dynamodb.yaml"]["defaults"].update(index="simple"),
            [
                "tables/app_dynamodb.yaml: tables[0].index: applies to batch tables only (a streamed table is "
                "written by its stream job)"
            ],
        ),
        (
            stream_a_dms_table,
            [
                "tables/shop.yaml: shop.public.customers: only dynamodb tables can be streamed, "
                "this source's format is dms"
            ],
        ),
        (
            lambda f: f["streams.yaml"]["streams"]["shop_changes"].update(window_seconds=5),
            ["streams.yaml: streams.shop_changes.window_seconds: Input should be greater than or equal to 10"],
        ),
        (
            lambda f: f["streams.yaml"]["streams"]["shop_changes"].update(checkpoint_prefix="/abs"),
            [
                "streams.yaml: streams.shop_changes.checkpoint_prefix: "
                "String should match pattern '^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*/$'"
            ],
        ),
    ],
    ids=[
        "both",
        "neither",
        "unknown stream",
        "bucket index",
        "simple index",
        "not dynamodb",
        "window too short",
        "bad checkpoint prefix",
    ],
)
def test_broken_stream_configuration(tmp_path: Path, change: Callable[[dict], None], expected: list[str]) -> None:
    assert errors_of(tmp_path, change) == expected
