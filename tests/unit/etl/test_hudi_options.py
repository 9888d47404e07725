"""The one function that makes Hudi write options from a table config."""

from __future__ import annotations

import json

from etl.hudi_options import WriteOperation, hudi_write_options, key_generator
from etl.tombstones import tombstone_write_options
from odp.config.models import TableMode, TableType
from odp.naming import tombstone_path
from tests.unit.etl.conftest import table_config


def test_key_generator_choice() -> None:
    assert key_generator(["id"], []) == ("org.apache.hudi.keygen.NonpartitionedKeyGenerator", "")
    assert key_generator(["id", "k"], []) == ("org.apache.hudi.keygen.NonpartitionedKeyGenerator", "")
    assert key_generator(["id"], ["region"]) == ("org.apache.hudi.keygen.SimpleKeyGenerator", "region")
    assert key_generator(["id", "k"], ["a", "b"]) == ("org.apache.hudi.keygen.ComplexKeyGenerator", "a,b")
    # never a one-field ComplexKeyGenerator (HUDI-9666 key encoding regression)
    assert key_generator(["id"], ["a", "b"]) == ("org.apache.hudi.keygen.CustomKeyGenerator", "a:SIMPLE,b:SIMPLE")


def test_current_cow_partitioned_options() -> None:
    config = table_config("orders", partition_by=("region",))
    options = hudi_write_options(
        config,
        operation=WriteOperation.UPSERT,
        catalog_sync=False,
        metadata_table=False,
        file_ids=["b", "a"],
        run_id="r1",
    )
    assert options["hoodie.table.name"] == "orders"
    assert options["hoodie.datasource.write.table.type"] == "COPY_ON_WRITE"
    assert options["hoodie.datasource.write.operation"] == "upsert"
    assert options["hoodie.datasource.write.recordkey.field"] == "id"
    assert options["hoodie.datasource.write.precombine.field"] == "_odp_seq"
    assert options["hoodie.record.merge.mode"] == "EVENT_TIME_ORDERING"
    assert options["hoodie.datasource.write.keygenerator.class"] == "org.apache.hudi.keygen.SimpleKeyGenerator"
    assert options["hoodie.datasource.write.partitionpath.field"] == "region"
    assert options["hoodie.datasource.write.hive_style_partitioning"] == "true"
    assert json.loads(options["_odp_file_ids"]) == ["a", "b"]
    assert options["_odp_run_id"] == "r1"
    assert options["hoodie.datasource.write.commitmeta.key.prefix"] == "_odp_"
    assert not any(name.startswith("hoodie.datasource.hive_sync") for name in options)
    assert "hoodie.compact.inline" not in options
    # partitioned current tables use a global index so a row whose partition value changes moves
    assert options["hoodie.index.type"] == "GLOBAL_SIMPLE"
    assert options["hoodie.simple.index.update.partition.path"] == "true"


def test_unpartitioned_and_historical_tables_keep_the_default_index() -> None:
    for config in (
        table_config("plain"),
        table_config("history", partition_by=("region",), mode=TableMode.HISTORICAL),
    ):
        options = hudi_write_options(config, operation=WriteOperation.UPSERT, catalog_sync=False, metadata_table=False)
        assert "hoodie.index.type" not in options, config.table


def test_historical_mor_with_glue_sync() -> None:
    config = table_config(
        "events", mode=TableMode.HISTORICAL, table_type=TableType.MERGE_ON_READ, primary_key=("a", "b")
    )
    options = hudi_write_options(config, operation=WriteOperation.BULK_INSERT, catalog_sync=True, metadata_table=True)
    assert options["hoodie.datasource.write.recordkey.field"] == "a,b,_odp_seq"
    assert options["hoodie.datasource.write.table.type"] == "MERGE_ON_READ"
    assert options["hoodie.compact.inline"] == "true"
    assert options["hoodie.metadata.enable"] == "true"
    assert options["hoodie.datasource.hive_sync.enable"] == "true"
    assert options["hoodie.datasource.hive_sync.database"] == "lake_db"
    assert options["hoodie.datasource.hive_sync.table"] == "events"
    assert (
        options["hoodie.datasource.hive_sync.partition_extractor_class"]
        == "org.apache.hudi.hive.NonPartitionedExtractor"
    )


def test_tombstone_options_and_path() -> None:
    config = table_config(
        "orders", partition_by=("region",), table_type=TableType.MERGE_ON_READ, primary_key=("a", "b")
    )
    for metadata_table in (False, True):
        options = tombstone_write_options(config, operation=WriteOperation.UPSERT, metadata_table=metadata_table)
        assert options["hoodie.metadata.enable"] == ("true" if metadata_table else "false")
    assert options["hoodie.table.name"] == "orders_odp_tombstones"
    assert options["hoodie.datasource.write.table.type"] == "COPY_ON_WRITE"  # whatever the table's type
    assert options["hoodie.datasource.write.operation"] == "upsert"
    assert options["hoodie.datasource.write.recordkey.field"] == "a,b"
    assert options["hoodie.datasource.write.precombine.field"] == "_odp_seq"
    assert options["hoodie.record.merge.mode"] == "EVENT_TIME_ORDERING"
    # keyed by the primary key alone, not partitioned: a key has one tombstone, whatever its partition
    assert options["hoodie.datasource.write.keygenerator.class"] == "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
    assert options["hoodie.datasource.write.partitionpath.field"] == ""
    assert options["hoodie.upsert.shuffle.parallelism"] == "2"
    # never synced to a catalog, and nothing lands in the commit's extra metadata
    assert options["hoodie.datasource.meta.sync.enable"] == "false"
    assert options["hoodie.datasource.hive_sync.enable"] == "false"
    assert not any(name.startswith("_") for name in options)
    assert tombstone_path("s3://raw/", "lake_db", "orders") == "s3://raw/lake_db/_odp_tombstones/orders"
