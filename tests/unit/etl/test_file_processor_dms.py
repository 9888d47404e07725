"""Golden scenarios of the File Processor on DMS files: real Spark + Hudi 1.0.2, trackers in moto."""

from __future__ import annotations

import pyarrow as pa
import pytest

from odp.config.models import TableMode, TableType
from odp.faults import on_fault
from odp.tracker import ProcessingTracker, RunStatus
from tests.support.lake import CrashAfterCommit, Lake, hudi_rs_rows, rows_of, small_table_config, table_config

CDC = pa.schema(
    [("Op", pa.string()), ("SEQ", pa.string()), ("ID", pa.int32()), ("NAME", pa.string()), ("REGION", pa.string())]
)
LOAD = pa.schema([("SEQ", pa.string()), ("ID", pa.int32()), ("NAME", pa.string()), ("REGION", pa.string())])


def _c(op: str, seq: str, key: int, name: str, region: str = "eu") -> dict:
    return {"Op": op, "SEQ": seq, "ID": key, "NAME": name, "REGION": region}


def _history(lake: Lake, table_id: str) -> list:
    tracker = ProcessingTracker(lake.tables["processing_tracker"], lake.tables["processing_tracker_history"])
    return sorted(tracker.history(table_id), key=lambda run: run.run_at)


@pytest.mark.spark
def test_current_cow_partitioned_golden_scenario_a_moved_row_not_duplicated(spark, lake: Lake) -> None:
    config = lake.configure(table_config("customers", partition_by=("region",)))
    table_id = config.table_id
    # 1. first full load (no Op column): bulk_insert
    lake.land_parquet(
        config,
        "LOAD00000001.parquet",
        [
            {"SEQ": None, "ID": 1, "NAME": "ann", "REGION": "eu"},
            {"SEQ": None, "ID": 2, "NAME": "bob", "REGION": "us"},
            {"SEQ": None, "ID": 3, "NAME": "cid", "REGION": "eu"},
            {"SEQ": None, "ID": 6, "NAME": "fay", "REGION": "eu"},
            {"SEQ": None, "ID": 9, "NAME": "ivy", "REGION": "eu"},
        ],
        LOAD,
    )
    first = lake.run(spark, table_id).tables[0]
    assert first.status is RunStatus.COMPLETED
    assert first.files == 1
    assert first.rows == 5
    assert rows_of(spark, first.base_path, ["id", "name", "region"]) == [
        (1, "ann", "eu"),
        (2, "bob", "us"),
        (3, "cid", "eu"),
        (6, "fay", "eu"),
        (9, "ivy", "eu"),
    ]

    # 2. one CDC file with several changes to one key, insert+delete, delete+reinsert; a second file landed twice.
    # A row whose partition value changes moves instead of duplicating: fay moves from eu to us; then ivy is deleted
    # with an image that says "us" (stale: ivy is stored in eu)
    lake.land_parquet(
        config,
        "2026/01/01/20260101-000001.parquet",
        [
            _c("U", "00005", 1, "ann-1"),
            _c("U", "00006", 1, "ann-2"),
            _c("I", "00005", 4, "dan"),
            _c("D", "00006", 4, "dan"),
            _c("D", "00005", 2, "bob", "us"),
            _c("I", "00007", 2, "bob-again", "us"),
            _c("U", "00005", 6, "fay", "us"),
            _c("D", "00006", 9, "ivy", "us"),
        ],
        CDC,
    )
    for _ in range(2):
        lake.land_parquet(config, "2026/01/01/20260101-000002.parquet", [_c("I", "00008", 5, "eve", "us")], CDC)
    second = lake.run(spark, table_id).tables[0]
    assert second.status is RunStatus.COMPLETED
    assert second.files == 3
    assert second.rows == 10
    # each row once, in the file of its partition
    assert rows_of(spark, second.base_path, ["id", "name", "region", "_hoodie_partition_path"]) == [
        (1, "ann-2", "eu", "region=eu"),
        (2, "bob-again", "us", "region=us"),
        (3, "cid", "eu", "region=eu"),
        (5, "eve", "us", "region=us"),
        (6, "fay", "us", "region=us"),
    ]
    partitions = sorted(p.name for p in (lake.root / "raw" / "lake_db" / "customers").glob("region=*"))
    assert partitions == ["region=eu", "region=us"]

    # 3. a late file (older ordering values) lands after the newer changes were committed
    lake.land_parquet(
        config,
        "2026/01/01/20260101-000000.parquet",
        [
            _c("U", "00003", 1, "ann-late"),
            _c("D", "00004", 5, "eve", "us"),
            _c("U", "00009", 3, "cid-new"),
        ],
        CDC,
    )
    third = lake.run(spark, table_id).tables[0]
    assert third.status is RunStatus.COMPLETED
    expected = [(1, "ann-2", "eu"), (2, "bob-again", "us"), (3, "cid-new", "eu"), (5, "eve", "us"), (6, "fay", "us")]
    assert rows_of(spark, third.base_path, ["id", "name", "region"]) == expected
    assert hudi_rs_rows(third.base_path, ["id", "name", "region"]) == expected
    assert sorted(tuple(r) for r in spark.sql("SELECT id, name FROM lake_db.customers").collect()) == [
        (1, "ann-2"),
        (2, "bob-again"),
        (3, "cid-new"),
        (5, "eve"),
        (6, "fay"),
    ]

    # 4. a later full load replaces the table's contents
    lake.land_parquet(
        config,
        "LOAD00000002.parquet",
        [
            {"SEQ": None, "ID": 7, "NAME": "gus", "REGION": "eu"},
            {"SEQ": None, "ID": 8, "NAME": "hal", "REGION": "us"},
        ],
        LOAD,
    )
    fourth = lake.run(spark, table_id).tables[0]
    assert fourth.status is RunStatus.COMPLETED
    assert rows_of(spark, fourth.base_path, ["id", "name", "region"]) == [(7, "gus", "eu"), (8, "hal", "us")]

    # trackers: nothing landed, every file processed with the instant of the commit that applied it
    assert lake.landed(table_id) == []
    processed = lake.processed(table_id)
    assert len(processed) == 6
    assert {item["status"] for item in processed} == {"raw_file_processed"}
    assert {item["commit_instant"] for item in processed} == {
        first.commit_instant,
        second.commit_instant,
        third.commit_instant,
        fourth.commit_instant,
    }
    runs = _history(lake, table_id)
    assert [(run.status, run.files, run.rows) for run in runs] == [
        (RunStatus.COMPLETED, 1, 5),
        (RunStatus.COMPLETED, 3, 10),
        (RunStatus.COMPLETED, 1, 3),
        (RunStatus.COMPLETED, 1, 2),
    ]
    # Hudi's write statistics: the load inserts 5; run 2 updates keys 1 and 2 (fay's move is an insert and a
    # delete); the late file updates only key 3 (its older changes to keys 1 and 5 are dropped by event-time
    # ordering); the reload inserts 2.
    assert runs[0].inserts == 5
    assert runs[1].updates == 2
    assert (runs[2].inserts, runs[2].updates, runs[2].deletes) == (0, 1, 0)
    assert runs[3].inserts == 2


@pytest.mark.spark
def test_historical_mor_crash_between_commit_and_tracker_update(spark, lake: Lake) -> None:
    config = lake.configure(table_config("audit", mode=TableMode.HISTORICAL, table_type=TableType.MERGE_ON_READ))
    table_id = config.table_id
    lake.land_parquet(
        config,
        "20260101-000001.parquet",
        [
            _c("I", "00001", 1, "a"),
            _c("U", "00002", 1, "a2"),
            _c("I", "00001", 2, "b"),
        ],
        CDC,
    )
    with on_fault(CrashAfterCommit.POINT, CrashAfterCommit()) as crash:
        crashed = lake.run(spark, table_id).tables[0]
    assert crash.fired == 1
    assert crashed.status is RunStatus.REFRESH_ERROR
    assert "simulated crash" in crashed.error
    assert len(lake.landed(table_id)) == 1  # committed to Hudi, not yet moved

    rerun = lake.run(spark, table_id).tables[0]
    assert rerun.status is RunStatus.COMPLETED
    assert rerun.reconciled == 1
    assert rerun.files == 0
    assert lake.landed(table_id) == []
    assert lake.processed(table_id)[0]["commit_instant"] == rerun_commit(lake, table_id)

    lake.land_parquet(config, "20260101-000002.parquet", [_c("D", "00003", 2, "b"), _c("U", "00004", 1, "a3")], CDC)
    later = lake.run(spark, table_id).tables[0]
    assert later.status is RunStatus.COMPLETED
    assert later.files == 1
    history = rows_of(spark, later.base_path, ["id", "_odp_op", "_odp_ordering", "name"])
    # Digit-text orderings are stored padded to 35 digits (DMS's change-sequence width): they compare as numbers.
    assert history == [
        (1, "I", "00001".rjust(35, "0"), "a"),
        (1, "U", "00002".rjust(35, "0"), "a2"),
        (1, "U", "00004".rjust(35, "0"), "a3"),
        (2, "D", "00003".rjust(35, "0"), "b"),
        (2, "I", "00001".rjust(35, "0"), "b"),
    ]
    assert hudi_rs_rows(later.base_path, ["id", "_odp_op", "_odp_ordering", "name"]) == history  # MOR
    runs = _history(lake, table_id)
    assert [run.status for run in runs] == [RunStatus.REFRESH_ERROR, RunStatus.COMPLETED, RunStatus.COMPLETED]
    assert "simulated crash" in runs[0].error_trace


def rerun_commit(lake: Lake, table_id: str) -> str:
    """The instant recorded by the crashed run's commit, as the table state shows it."""
    return lake.processed(table_id)[0]["commit_instant"]


KINDS = pa.schema(
    [
        ("Op", pa.string()),
        ("SEQ", pa.string()),
        ("ID", pa.int32()),
        ("NAME", pa.string()),
        ("REGION", pa.string()),
        ("KIND", pa.string()),
    ]
)


@pytest.mark.spark
def test_current_mor_with_two_partition_columns(spark, lake: Lake) -> None:
    # the simple index (a small table's): the partition layout and the changes applied do not depend on the index
    config = lake.configure(
        small_table_config("items", partition_by=("region", "kind"), table_type=TableType.MERGE_ON_READ)
    )
    lake.land_parquet(
        config,
        "20260101-1.parquet",
        [
            {"Op": "I", "SEQ": "1", "ID": 1, "NAME": "a", "REGION": "eu", "KIND": "x"},
            {"Op": "I", "SEQ": "1", "ID": 2, "NAME": "b", "REGION": "us", "KIND": "y"},
            {"Op": "I", "SEQ": "1", "ID": 3, "NAME": "c", "REGION": "us", "KIND": "x"},
        ],
        KINDS,
    )
    assert lake.run(spark, config.table_id).tables[0].status is RunStatus.COMPLETED
    lake.land_parquet(
        config,
        "20260101-2.parquet",
        [
            {"Op": "U", "SEQ": "2", "ID": 1, "NAME": "a2", "REGION": "eu", "KIND": "x"},
            {"Op": "D", "SEQ": "2", "ID": 2, "NAME": "b", "REGION": "us", "KIND": "y"},
        ],
        KINDS,
    )
    result = lake.run(spark, config.table_id).tables[0]
    assert result.status is RunStatus.COMPLETED, result.error
    expected = [(1, "a2", "eu", "x"), (3, "c", "us", "x")]
    assert rows_of(spark, result.base_path, ["id", "name", "region", "kind"]) == expected
    assert (lake.root / "raw" / "lake_db" / "items" / "region=eu" / "kind=x").is_dir()
    # No hudi-rs read here: hudi-rs 0.5 rejects CustomKeyGenerator's `region:SIMPLE` partition fields.
