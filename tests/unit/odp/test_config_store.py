"""The configuration stores: every reader of table_config and batch_config goes through them."""

from __future__ import annotations

from typing import Any

import pytest

from odp.config.items import BatchConfigRecord, batch_config_item, table_config_item
from odp.config.models import Cadence, SourceFormat, TableConfig
from odp.config.store import (
    BatchConfigStore,
    TableConfigNotFoundError,
    TableConfigStore,
    TableInfo,
    table_info_from_item,
)


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (None, TableInfo(is_active=False, source_format=None, found=False)),
        ({}, TableInfo(is_active=False, source_format=None, found=False)),
        ({"is_active": True, "format": "debezium"}, TableInfo(is_active=True, source_format=SourceFormat.DEBEZIUM)),
        ({"is_active": False, "format": "dms"}, TableInfo(is_active=False, source_format=SourceFormat.DMS)),
        ({"is_active": "true", "format": "dms"}, TableInfo(is_active=False, source_format=SourceFormat.DMS)),
        ({"is_active": True, "format": "avro"}, TableInfo(is_active=True, source_format=None)),
    ],
)
def test_table_info_from_item(item: dict[str, Any] | None, expected: TableInfo) -> None:
    assert table_info_from_item(item) == expected


def _table(name: str, cadence: str | None, *, active: bool = True) -> TableConfig:
    return TableConfig(
        source="shop",
        schema_name="public",
        table=name,
        format="dms",
        primary_key=["id"],
        database="raw_shop",
        cadence=cadence,
        is_active=active,
    )


@pytest.fixture
def table_store(tracker_tables: dict[str, Any]) -> TableConfigStore:
    tables = [_table("a", "hourly"), _table("b", "hourly", active=False), _table("c", "daily")]
    for table in tables:
        tracker_tables["table_config"].put_item(Item=table_config_item(table))
    return TableConfigStore(tracker_tables["table_config"])


def test_get_is_strict_and_names_the_missing_table(table_store: TableConfigStore) -> None:
    assert table_store.get("shop.public.a") == _table("a", "hourly")
    with pytest.raises(TableConfigNotFoundError, match=r"^shop\.public\.x: no table_config item; deploy the config"):
        table_store.get("shop.public.x")
    assert table_store.find("shop.public.x") is None


def test_info_active_ids_and_scan(table_store: TableConfigStore) -> None:
    assert table_store.info("shop.public.b") == TableInfo(is_active=False, source_format=SourceFormat.DMS)
    assert table_store.info("shop.public.x") == TableInfo(is_active=False, source_format=None, found=False)
    assert table_store.active_ids("hourly") == ["shop.public.a"]
    assert [t.table_id for t in table_store.scan(cadence="hourly")] == ["shop.public.a", "shop.public.b"]
    assert [t.table_id for t in table_store.scan()] == ["shop.public.a", "shop.public.b", "shop.public.c"]


def test_batch_config_store_reads_what_the_configuration_manager_writes(tracker_tables: dict[str, Any]) -> None:
    item = batch_config_item("test", "hourly", Cadence(schedule="rate(1 hour)", batch_size=7), is_active=False)
    tracker_tables["batch_config"].put_item(Item=item)
    store = BatchConfigStore(tracker_tables["batch_config"])
    found = store.find("hourly")
    assert found == BatchConfigRecord(
        cadence="hourly",
        schedule="rate(1 hour)",
        batch_size=7,
        worker_type="G.1X",
        number_of_workers=2,
        max_concurrency=2,
        job_timeout_minutes=60,
        job_name="odp-test-file-processor-hourly",
        is_active=False,
    )
    assert found.to_item() == item
    assert store.find("daily") is None
