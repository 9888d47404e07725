"""The configuration stores: every reader of table_config, batch_config and dataset_config goes through them."""

from __future__ import annotations

from typing import Any

import pytest

from odp.config.datasets import DatasetConfig, DatasetSource
from odp.config.items import BatchConfigRecord, DatasetConfigRecord, batch_config_item, table_config_item
from odp.config.models import Cadence, SourceFormat, TableConfig
from odp.config.store import (
    BatchConfigStore,
    DatasetConfigStore,
    TableConfigNotFoundError,
    TableConfigStore,
    TableInfo,
    dataset_job_config,
    table_info_from_item,
)
from odp.naming import DATASET_CONFIG
from odp.tracker.schema import create_tables


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


def _dataset(name: str, source: DatasetSource) -> DatasetConfig:
    return DatasetConfig(
        name=name,
        zone="conformed",
        database="shop_conformed",
        sources=(source,),
        sql=f"SELECT id FROM {source.name}",
        key=("id",),
        partition_by=(),
        table_type="COPY_ON_WRITE",
        refresh="full",
        quality=(),
        file=f"datasets/{name}.yaml",
    )


@pytest.fixture
def dataset_config(dynamodb: Any) -> Any:
    create_tables(dynamodb.meta.client, {DATASET_CONFIG: "odp-test-dataset-config"})
    return dynamodb.Table("odp-test-dataset-config")


def test_the_dataset_job_reads_the_active_datasets_in_dependency_order_and_only_their_tables(
    table_store: TableConfigStore, tracker_tables: dict[str, Any], dataset_config: Any
) -> None:
    later = _dataset("b_later", DatasetSource(name="first", dataset="z_first"))
    first = _dataset("z_first", DatasetSource(name="a", table="shop.public.a"))
    gone = _dataset("c_gone", DatasetSource(name="c", table="shop.public.c"))
    for dataset in (later, first):
        dataset_config.put_item(Item=DatasetConfigRecord.of(dataset).to_item())
    dataset_config.put_item(Item={**DatasetConfigRecord.of(gone).to_item(), "is_active": False})

    assert DatasetConfigStore(dataset_config).active() == [first, later]
    read = dataset_job_config(tracker_tables["table_config"], dataset_config)
    assert read.datasets == (first, later)
    assert read.tables == (_table("a", "hourly"),)  # not c: only the inactive dataset reads it


def test_a_raw_table_without_its_table_config_item_fails_the_read_naming_it(
    tracker_tables: dict[str, Any], dataset_config: Any
) -> None:
    dataset = _dataset("a_clean", DatasetSource(name="a", table="shop.public.a"))
    dataset_config.put_item(Item=DatasetConfigRecord.of(dataset).to_item())
    with pytest.raises(TableConfigNotFoundError, match=r"^shop\.public\.a: no table_config item; deploy the config"):
        dataset_job_config(tracker_tables["table_config"], dataset_config)


def test_a_dataset_config_item_holds_every_field_of_a_dataset() -> None:
    """The record spells the stored attributes: a field added to DatasetConfig must be added to it too."""
    stored = set(DatasetConfigRecord.model_fields) - {"dataset", "is_active"}
    assert stored == set(DatasetConfig.model_fields) - {"name"}
