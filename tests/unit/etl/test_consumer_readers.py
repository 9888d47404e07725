"""The consumers' engines read what ODP writes: Hudi table version 6, read back by Hudi 0.15.0 (the reader Athena
documents) row for row as Hudi 1.0.2 reads it, registered in the catalog as Athena reads it, and a table at version 8
refused until an operator converts it with the command the refusal names.

The tables are written by the project's own jobs (the File Processor, the dataset refresher) on the shared session;
the 0.15.0 reads run in one child JVM (``sandbox.consumer_reader``) for every table of the test, and the catalog is
read from the tables' first writes, which run Hudi's sync.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

import etl.hudi.options
import etl.hudi.table_version
from etl.datasets.refresh import DatasetRefresher
from etl.file_processor.processor import run_file_processor
from etl.file_processor.run_context import job_write_profile
from odp.config.datasets import DatasetConfig, DatasetSource, Refresh, Zone
from odp.config.models import TableConfig, TableMode, TableType
from odp.contracts.datasets import LakeRoots
from odp.tracker import RunStatus
from sandbox.consumer_reader import ConsumerRead, QueryType, ReadBack, TableRows, mismatches_of, read_back
from tests.support.lake import Lake, patch_write_profile, rows_of, table_config

COLUMNS = {
    "seq": "bigint",
    "id": "bigint",
    "region": "string",
    "amount": "decimal(12,2)",
    "born": "date",
    "updated_at": "timestamp",
    "payload": "string",  # a string-encoded JSON document, as DynamoDB maps and Debezium structs arrive
}
SCHEMA = pa.schema(
    [
        ("Op", pa.string()),
        ("seq", pa.int64()),
        ("id", pa.int64()),
        ("region", pa.string()),
        ("amount", pa.decimal128(12, 2)),
        ("born", pa.date32()),
        ("updated_at", pa.timestamp("us", tz="UTC")),
        ("payload", pa.string()),
    ]
)
REGIONS = ("eu/west", "o'brien", "us")  # URL-encoded in the partition paths: eu%2Fwest, o%27brien


def change(op: str, seq: int, key: int, region: str | None = None) -> dict:
    """One DMS change of key ``key`` at event sequence ``seq``; every value depends on both."""
    return {
        "Op": op,
        "seq": seq,
        "id": key,
        "region": region or REGIONS[key % len(REGIONS)],
        "amount": Decimal(f"{key * 100 + seq}.{seq % 100:02d}"),
        "born": dt.date(1990, 1, 1) + dt.timedelta(days=key * 37 + seq),
        "updated_at": dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.UTC) + dt.timedelta(seconds=seq, microseconds=key),
        "payload": f'{{"key": {key}, "tags": ["a", "b{seq}"], "nested": {{"seq": {seq}}}}}',
    }


# Rounds of changes per table: a load, then CDC. The MERGE_ON_READ table's second round logs out-of-order changes:
# an update older than the stored row (it must lose), two updates of one key in reverse order in one file, a delete,
# and a delete older than the stored row (it must lose too: ODP drops it, docs/decisions/022); its third round logs
# another late update and a delete, then the compaction scheduled at that delta commit merges every log. The other
# tables take two: the load and one round of CDC over it.
ROUNDS: dict[str, list[list[dict]]] = {
    "cow": [
        [change("I", 10, key) for key in range(1, 10)],
        [
            change("U", 20, 1),
            change("U", 20, 2, "eu/west"),
            change("D", 20, 3),
            change("U", 30, 4),
            change("I", 30, 10),
        ],
    ],
    "mor": [
        [change("I", 10, key) for key in range(1, 13)],
        [
            change("U", 5, 1),  # older than the stored row
            change("U", 22, 2),
            change("U", 21, 2),  # the same key, out of order in its file: 22 wins
            change("D", 20, 3),
            change("D", 5, 8),  # older than the stored row
            change("U", 20, 5, "us"),  # changes partition
            change("I", 20, 13),
        ],
        [change("U", 15, 2), change("U", 30, 6), change("D", 30, 7)],  # 2: older than round 2's 22
    ],
    "history": [
        [change("I", 10, key) for key in range(1, 5)],
        [change("U", 20, 1), change("D", 20, 2), change("U", 30, 1)],
    ],
}


def _tables(lake: Lake) -> dict[str, TableConfig]:
    return {
        "cow": lake.configure(table_config("cow_orders", columns=COLUMNS, partition_by=("region",))),
        "mor": lake.configure(
            table_config("mor_orders", columns=COLUMNS, partition_by=("region",), table_type=TableType.MERGE_ON_READ)
        ),
        "history": lake.configure(table_config("order_history", columns=COLUMNS, mode=TableMode.HISTORICAL)),
    }


def _dataset(source: TableConfig) -> DatasetConfig:
    return DatasetConfig(
        name="orders_by_region",
        zone=Zone.CONFORMED,
        database="conformed_db",
        sources=(DatasetSource(name="orders", table=source.table_id),),
        sql="SELECT region, COUNT(*) AS orders, CAST(SUM(amount) AS DECIMAL(18, 2)) AS revenue, "
        "MAX(updated_at) AS last_update, MIN(born) AS first_born FROM orders GROUP BY region",
        key=("region",),
        partition_by=(),
        table_type=TableType.COPY_ON_WRITE,
        refresh=Refresh.FULL,
        quality=(),
        file="datasets/orders_by_region.yaml",
    )


def _properties(base_path: str, *, metadata: bool = False) -> str:
    folder = Path(base_path.removeprefix("file://")) / ".hoodie"
    return ((folder / "metadata" / ".hoodie" if metadata else folder) / "hoodie.properties").read_text()


def _columns(table: TableRows, *names: str) -> list[tuple]:
    """The given columns of a read's rows (Spark's JSON of each row), sorted."""
    return sorted(tuple(json.loads(row)[name] for name in names) for row in table.rows)


def _log_files(base_path: str) -> list[Path]:
    root = Path(base_path.removeprefix("file://"))
    return [path for path in root.rglob("*.log.*") if ".hoodie" not in path.relative_to(root).parts]


@pytest.mark.spark
@pytest.mark.slow
def test_every_kind_of_table_reads_the_same_with_the_consumers_hudi_0_15_and_is_registered_as_athena_reads_it(
    spark, lake: Lake, local_metastore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The partitioned tables' first writes run Hudi's hms sync (what the Glue jobs run against the Glue catalog)
    into an embedded metastore: the COPY_ON_WRITE table, and the MERGE_ON_READ table as ``<table>`` and
    ``<table>_rt`` (snapshot) and ``<table>_ro`` (read-optimized), with Athena's formats, the declared types and the
    partition values decoded. Every table then reads the same with Hudi 0.15.0 as with Hudi 1.0.2."""
    # MERGE_ON_READ: updates and deletes of every base file go to logs (as a real table's above 4 MiB), and the third
    # delta commit schedules a compaction of every file group with a log
    patch_write_profile(
        monkeypatch, merge_on_read_small_file_bytes=1, compaction_delta_commits=3, compaction_log_share=0.0
    )
    tables = _tables(lake)
    dataset = _dataset(tables["cow"])
    roots = LakeRoots(lake.raw_root, (tmp_path / "conformed").as_uri(), (tmp_path / "purpose_built").as_uri())
    refresher = DatasetRefresher(
        spark,
        roots,
        {tables["cow"].table_id: tables["cow"]},
        {dataset.name: dataset},
        profile=job_write_profile(spark, lake.args()),
    )
    paths = {name: roots.table_path(config) for name, config in tables.items()}
    before_compaction = f"file://{tmp_path / 'mor_before_compaction'}"
    synced = (tables["cow"].table_id, tables["mor"].table_id)
    for number in range(3):
        landed = {name: config for name, config in tables.items() if number < len(ROUNDS[name])}
        for name, config in landed.items():
            lake.land_parquet(config, f"20260101-{number:03d}.parquet", ROUNDS[name][number], SCHEMA)
        if number == 0:  # the partitioned tables' first write with the catalog sync on
            args = replace(lake.args(*synced), catalog_sync=True)
            runs = run_file_processor(spark, args, dynamodb=lake.dynamodb, resolve_uri=lake.resolve).tables
            runs += lake.run(spark, tables["history"].table_id).tables
        else:
            runs = lake.run(spark, *(config.table_id for config in landed.values())).tables
        assert all(run.status is RunStatus.COMPLETED for run in runs), runs
        if "cow" in landed:  # the dataset over the COPY_ON_WRITE table, refreshed after each of its rounds
            refreshed = refresher.refresh(dataset)
            assert refreshed.status is RunStatus.WRITTEN, refreshed.error
        if number == 1:  # the logs hold round 2's out-of-order changes: keep the table as it is now
            assert _log_files(paths["mor"])
            shutil.copytree(paths["mor"].removeprefix("file://"), before_compaction.removeprefix("file://"))

    registered = {
        name: _registered(local_metastore, "lake_db", name) for name in local_metastore.getAllTables("lake_db")
    }
    # MERGE_ON_READ: Hudi 1.0.2's sync (table strategy ALL) registers the snapshot twice, as <table> and <table>_rt
    expected = {
        "cow_orders": "snapshot",
        "mor_orders": "real_time",
        "mor_orders_ro": "read_optimized",
        "mor_orders_rt": "real_time",
    }
    assert registered == {name: _athena_definition(kind) for name, kind in expected.items()}

    dataset_path = roots.dataset_path(dataset)
    written = [*paths.values(), before_compaction, dataset_path]
    for path in written:
        assert "hoodie.table.version=6" in _properties(path), path
    assert "hoodie.table.version=6" in _properties(paths["mor"], metadata=True)

    snapshot, optimized = QueryType.SNAPSHOT, QueryType.READ_OPTIMIZED
    logged = ConsumerRead("MERGE_ON_READ, out-of-order changes in its logs", before_compaction, snapshot)
    compacted = ConsumerRead("MERGE_ON_READ, compacted", paths["mor"], snapshot)
    compacted_base = ConsumerRead("MERGE_ON_READ, compacted", paths["mor"], optimized)
    reads = [
        ConsumerRead("COPY_ON_WRITE", paths["cow"]),
        logged,
        ConsumerRead("MERGE_ON_READ, out-of-order changes in its logs", before_compaction, optimized),
        compacted,
        compacted_base,
        ConsumerRead("historical", paths["history"]),
        ConsumerRead("dataset", dataset_path),
    ]
    backs = read_back(spark, reads)
    mismatches = [str(mismatch) for mismatch in mismatches_of(backs)]
    assert not mismatches, "\n".join(mismatches)
    # each table read in this session too (Hudi 1.0.2): those rows serve the checks below
    writer = {back.read: back.writer for back in backs}

    # the compaction merged every log into base files: the read-optimized view (base files only) is the snapshot
    assert _columns(writer[compacted_base], "id", "seq") == _columns(writer[compacted], "id", "seq")
    # late changes lost (the update of 1, the delete of 8), the last of two updates won, the delete of 3 applied
    stored = _columns(writer[logged], "id", "seq", "region")
    assert stored[:5] == [(1, 10, "o'brien"), (2, 22, "us"), (4, 10, "o'brien"), (5, 20, "us"), (6, 10, "eu/west")]
    assert (8, 10, "us") in stored
    assert (8, 10, "us") in _columns(writer[compacted], "id", "seq", "region")  # and the compaction kept it


def _athena_formats(kind: str) -> tuple[str, str, str]:
    """(input format, output format, serde) Athena's "Query Apache Hudi datasets" page gives for Hudi tables: the
    COPY_ON_WRITE and read-optimized tables read base files with HoodieParquetInputFormat, the real-time table merges
    logs with HoodieParquetRealtimeInputFormat; Parquet's Hive serde and output format for both."""
    input_format = {
        "snapshot": "org.apache.hudi.hadoop.HoodieParquetInputFormat",
        "read_optimized": "org.apache.hudi.hadoop.HoodieParquetInputFormat",
        "real_time": "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat",
    }[kind]
    return (
        input_format,
        "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
    )


def _registered(metastore, database: str, name: str) -> dict:
    """What a catalog reader sees of one table: its type, formats, serde, the types of the columns Athena users hit,
    its partition keys and each partition's values, folder and input format."""
    table = metastore.getTable(database, name)
    storage = table.getSd()
    columns = {column.getName(): column.getType() for column in storage.getCols()}
    partitions = metastore.listPartitions(database, name, -1)
    return {
        "type": table.getTableType(),
        "formats": (storage.getInputFormat(), storage.getOutputFormat(), storage.getSerdeInfo().getSerializationLib()),
        "columns": {key: columns.get(key) for key in ("id", "amount", "born", "updated_at", "payload")},
        "partition_keys": [key.getName() for key in table.getPartitionKeys()],
        "partitions": sorted(
            (tuple(p.getValues()), p.getSd().getLocation().rsplit("/", 1)[-1], p.getSd().getInputFormat())
            for p in partitions
        ),
    }


def _athena_definition(kind: str) -> dict:
    formats = _athena_formats(kind)
    return {
        "type": "EXTERNAL_TABLE",
        "formats": formats,
        "columns": {
            "id": "bigint",
            "amount": "decimal(12,2)",
            "born": "date",
            "updated_at": "timestamp",  # hive_sync.support_timestamp: a timestamp, not Parquet's int64
            "payload": "string",
        },
        "partition_keys": ["region"],
        "partitions": [
            (("eu/west",), "region=eu%2Fwest", formats[0]),
            (("o'brien",), "region=o%27brien", formats[0]),
            (("us",), "region=us", formats[0]),
        ],
    }


@pytest.mark.spark
def test_a_table_at_version_8_is_refused_until_converted_with_the_named_command(
    spark, lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a name of its own: the session catalog outlives this test's lake, and the command names the catalog table
    config = lake.configure(table_config("v8_orders", columns=COLUMNS, partition_by=("region",)))
    # the table as an earlier release wrote it: Hudi 1.0.2's default table version, 8
    with monkeypatch.context() as patch:
        earlier = {"hoodie.write.table.version": "8", "hoodie.write.auto.upgrade": "true"}
        patch.setattr(etl.hudi.options, "TABLE_VERSION_OPTIONS", earlier)
        patch.setattr(etl.hudi.table_version, "TABLE_VERSION_OPTIONS", earlier)
        lake.land_parquet(config, "20260101-000.parquet", [change("I", 10, 1)], SCHEMA)
        first = lake.run(spark, config.table_id).tables[0]
    assert first.status is RunStatus.COMPLETED, first.error
    base_path = first.base_path
    assert "hoodie.table.version=8" in _properties(base_path)

    lake.land_parquet(config, "20260101-001.parquet", [change("I", 20, 2)], SCHEMA)
    refused = lake.run(spark, config.table_id).tables[0]
    assert refused.status is RunStatus.REFRESH_ERROR
    catalog_name = f"{config.database}.{config.target_table}"
    downgrade = f"CALL downgrade_table(table => '{catalog_name}', to_version => 'SIX')"
    assert f"{config.table_id}: the Hudi table at {base_path} is table version 8; ODP writes table version 6" in (
        refused.error
    )
    assert downgrade in refused.error
    assert f"python -m odp replay {config.table_id}" in refused.error
    assert "hoodie.table.version=8" in _properties(base_path)  # nothing written
    assert [file.key for file in lake.landed(config.table_id)] == [f"{config.staging_prefix}20260101-001.parquet"]

    spark.sql(downgrade)  # the operator's conversion, as the refusal words it (the table is in the catalog)
    assert "hoodie.table.version=6" in _properties(base_path)
    converted = lake.run(spark, config.table_id).tables[0]
    assert converted.status is RunStatus.COMPLETED, converted.error
    assert rows_of(spark, base_path, ["id", "region"]) == [(1, "o'brien"), (2, "us")]
    assert "hoodie.table.version=6" in _properties(base_path)


def test_a_read_that_differs_or_fails_with_the_consumer_is_a_mismatch_naming_it() -> None:
    table = ConsumerRead("orders", "file:///lake/orders")
    rows = TableRows(("id bigint",), ('{"id":1}', '{"id":2}'))
    same = ReadBack(table, rows, rows)
    fewer = ReadBack(ConsumerRead("fewer", "file:///lake/fewer"), rows, TableRows(("id bigint",), ('{"id":1}',)))
    failed = ReadBack(ConsumerRead("failed", "file:///lake/failed", QueryType.READ_OPTIMIZED), None, "boom")

    found = [str(mismatch) for mismatch in mismatches_of([same, fewer, failed])]

    assert found == [
        "fewer (snapshot): 1 rows, the writer reads 2: 1 missing (e.g. ['{\"id\":2}']), 0 not in the writer's read "
        "(e.g. [])",
        "failed (read_optimized): Hudi 0.15.0 could not read it: boom",
    ]
