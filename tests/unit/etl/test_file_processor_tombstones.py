"""A committed delete is newer data: a late, older change must not bring the deleted row back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import etl.raw_table.stored_keys
import etl.raw_table.writer
from etl.hudi.timeline import completed_commits, read_table_state
from etl.raw_table.late_deletes import read_stored_order
from etl.raw_table.tombstones import read_tombstones
from odp.config.models import TableType
from odp.faults import on_fault
from odp.tracker import RunStatus
from tests.support.lake import CrashBeforeCommit, Lake, hudi_rs_rows, patch_write_profile, rows_of, table_config
from tests.support.spark_work import SparkWork, spark_work

CDC = pa.schema([("Op", pa.string()), ("SEQ", pa.string()), ("ID", pa.int32()), ("NAME", pa.string())])
LOAD = pa.schema([("SEQ", pa.string()), ("ID", pa.int32()), ("NAME", pa.string())])


def _c(op: str, seq: str, key: int, name: str) -> dict:
    return {"Op": op, "SEQ": seq, "ID": key, "NAME": name}


@pytest.mark.spark
def test_a_crash_before_the_commit_reruns_and_a_late_change_older_than_its_delete_does_not_resurrect_the_row(
    spark, lake: Lake
) -> None:
    """A crash between the tombstones and the commit reruns to the right table; the delete it commits is newer data: a
    late, older change does not bring the row back, a re-insert newer than the delete does, a full load clears the
    tombstones."""
    config = lake.configure(table_config("deleted_stays"))
    table_id = config.table_id
    lake.land_parquet(config, "20260101-000001.parquet", [_c("I", "00001", 1, "ann"), _c("I", "00001", 2, "bob")], CDC)
    assert lake.run(spark, table_id).tables[0].status is RunStatus.COMPLETED
    lake.land_parquet(
        config, "20260101-000002.parquet", [_c("D", "00005", 1, "ann"), _c("U", "00006", 2, "bob-2")], CDC
    )
    with on_fault(CrashBeforeCommit.POINT, CrashBeforeCommit()) as crash:
        crashed = lake.run(spark, table_id).tables[0]
    assert crash.fired == 1
    assert crashed.status is RunStatus.REFRESH_ERROR
    assert "simulated crash before the commit" in crashed.error
    assert len(lake.landed(table_id)) == 1  # tombstones written, the table not committed
    assert rows_of(spark, crashed.base_path, ["id", "name"]) == [(1, "ann"), (2, "bob")]

    # the rerun applies the same file again: its own tombstone (already written) drops none of its changes
    rerun = lake.run(spark, table_id).tables[0]
    assert rerun.status is RunStatus.COMPLETED, rerun.error
    assert (rerun.files, rerun.reconciled, rerun.stale_dropped) == (1, 0, 0)
    assert rows_of(spark, rerun.base_path, ["id", "name"]) == [(2, "bob-2")]
    assert (rerun.deletes, rerun.updates) == (1, 1)
    assert lake.landed(table_id) == []
    # the tombstones live beside the table, not inside its base path
    tombstones = lake.root / "raw" / "lake_db" / "_odp_tombstones" / "deleted_stays"
    assert [p.name for p in tombstones.iterdir()] == ["log"]  # Parquet folders, no second Hudi table
    # one Parquet file a run: the crashed run's folder and the rerun's
    assert [len(list(run.glob("*.parquet"))) for run in (tombstones / "log").glob("run-*")] == [1, 1]
    assert not (lake.root / "raw" / "lake_db" / "deleted_stays" / "_odp_tombstones").exists()

    # a late file: an update of key 1 older than its committed delete (the tombstone holds), and a newer update of key 2
    lake.land_parquet(
        config, "20260101-000000.parquet", [_c("U", "00003", 1, "ann-stale"), _c("U", "00007", 2, "bob-3")], CDC
    )
    late = lake.run(spark, table_id).tables[0]
    assert late.status is RunStatus.COMPLETED, late.error
    assert rows_of(spark, late.base_path, ["id", "name"]) == [(2, "bob-3")]
    assert late.stale_dropped == 1
    assert (late.inserts, late.updates) == (0, 1)

    # a re-insert newer than the delete brings the key back with the new values
    lake.land_parquet(config, "20260101-000003.parquet", [_c("I", "00009", 1, "ann-again")], CDC)
    again = lake.run(spark, table_id).tables[0]
    assert again.status is RunStatus.COMPLETED
    assert again.stale_dropped == 0
    assert rows_of(spark, again.base_path, ["id", "name"]) == [(1, "ann-again"), (2, "bob-3")]
    assert sorted(tuple(r) for r in spark.sql("SELECT id, name FROM lake_db.deleted_stays").collect()) == [
        (1, "ann-again"),
        (2, "bob-3"),
    ]
    assert not spark.catalog.tableExists("lake_db._odp_tombstones")

    # a full load is the truth: it clears the tombstones, so a later change to key 1 applies again
    lake.land_parquet(config, "LOAD00000001.parquet", [{"SEQ": None, "ID": 1, "NAME": "ann-load"}], LOAD)
    loaded = lake.run(spark, table_id).tables[0]
    assert loaded.status is RunStatus.COMPLETED
    assert rows_of(spark, loaded.base_path, ["id", "name"]) == [(1, "ann-load")]
    assert not (lake.root / "raw" / "lake_db" / "_odp_tombstones" / "deleted_stays").exists()
    lake.land_parquet(config, "20260101-000004.parquet", [_c("U", "00004", 1, "ann-4")], CDC)
    after_load = lake.run(spark, table_id).tables[0]
    assert (after_load.status, after_load.stale_dropped) == (RunStatus.COMPLETED, 0)
    assert rows_of(spark, after_load.base_path, ["id", "name"]) == [(1, "ann-4")]


@pytest.mark.spark
def test_a_late_delete_loses_against_the_stored_row_of_a_merge_on_read_file_group_that_logs_it(
    spark, lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hudi's readers apply a logged delete to its base file's row without comparing orderings (1.0.2, and 0.15.0 as
    Athena reads), and the compaction keeps it: ODP drops a delete older than its key's stored row before the write."""
    # every base file above a 1-byte limit logs its changes (as every file group of a real table above 4 MiB does);
    # the third delta commit compacts every file group with a log
    patch_write_profile(
        monkeypatch, merge_on_read_small_file_bytes=1, compaction_delta_commits=3, compaction_log_share=0.0
    )
    config = lake.configure(table_config("late_delete", table_type=TableType.MERGE_ON_READ))
    table_id = config.table_id
    lake.land_parquet(config, "20260101-000001.parquet", [_c("I", "00010", k, f"n{k}") for k in (1, 2, 3)], CDC)
    assert lake.run(spark, table_id).tables[0].status is RunStatus.COMPLETED

    # a late file: a delete of key 1 older than its stored row (loses), of key 2 newer (wins), of key 9 never stored
    late_file = [_c("D", "00005", 1, "n1"), _c("D", "00020", 2, "n2"), _c("D", "00020", 9, "n9")]
    lake.land_parquet(config, "20260101-000002.parquet", late_file, CDC)
    late = lake.run(spark, table_id).tables[0]
    assert late.status is RunStatus.COMPLETED, late.error
    assert late.stale_dropped == 1
    base = Path(late.base_path.removeprefix("file://"))
    assert [f.name for f in base.glob(".*.log.*") if not f.name.endswith(".crc")]  # key 2's delete was logged
    expected = [(1, "n1"), (3, "n3")]
    assert rows_of(spark, late.base_path, ["id", "name"]) == hudi_rs_rows(late.base_path, ["id", "name"]) == expected
    tombstones = read_tombstones(spark, f"{lake.raw_root}/lake_db/_odp_tombstones/late_delete", ["id"])
    assert sorted(r.id for r in tombstones.collect()) == [2, 9]  # the delete that lost was never committed

    # late updates older than the delete that lost (key 1: Hudi's merge drops it, nothing stale) and than the committed
    # delete (key 2: stale); the third delta commit compacts the logs into base files
    lake.land_parquet(
        config,
        "20260101-000003.parquet",
        [_c("U", "00003", 1, "n1-late"), _c("U", "00015", 2, "n2-late"), _c("U", "00030", 3, "n3-new")],
        CDC,
    )
    after = lake.run(spark, table_id).tables[0]
    assert after.status is RunStatus.COMPLETED, after.error
    assert after.stale_dropped == 1
    assert completed_commits(spark, after.base_path)[-1].action == "commit"  # the compaction
    expected = [(1, "n1"), (3, "n3-new")]
    assert rows_of(spark, after.base_path, ["id", "name"]) == hudi_rs_rows(after.base_path, ["id", "name"]) == expected
    # delta commits and a compaction in the table's state
    state = read_table_state(spark, after.base_path)
    assert [c.action for c in state.commits] == ["deltacommit", "deltacommit", "deltacommit", "commit"]

    # the stored orderings are the same whether the record index prunes the read (a few keys) or a semi-join reads all
    deleted = spark.createDataFrame([("D", 1), ("D", 3), ("D", 7)], "_odp_op string, id int")
    by_index = read_stored_order(spark, deleted, config, after.base_path)
    monkeypatch.setattr(etl.raw_table.stored_keys, "by_record_index", lambda *_: False)
    by_join = read_stored_order(spark, deleted, config, after.base_path)
    stored = [(1, "00000000000000000000000000000000010"), (3, "00000000000000000000000000000000030")]
    for frame in (by_index, by_join):
        assert sorted((r.id, r._odp_seq.split(" ")[0]) for r in frame.collect()) == stored
        frame.unpersist()


def _count_the_fold(spark: Any, monkeypatch: pytest.MonkeyPatch) -> SparkWork:
    """The Spark work of the writer's next fold of a tombstone log, counted."""
    fold = etl.raw_table.writer.consolidate_tombstones
    counted = SparkWork()

    def counting(*args: Any, **kwargs: Any) -> bool:
        with spark_work(spark, monkeypatch) as work:
            folded = fold(*args, **kwargs)
        counted.jobs, counted.job_names = work.jobs, work.job_names
        return folded

    monkeypatch.setattr(etl.raw_table.writer, "consolidate_tombstones", counting)
    return counted


@pytest.mark.spark
def test_tombstones_of_a_key_widened_from_int_to_bigint_still_hold(
    spark, lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long tombstone log is folded into one folder, by one task, and still holds. Then the source widens its key
    (an int id running out, ALTER to bigint): the log then holds int and bigint folders, which Spark's merged schema
    refuses (CANNOT_MERGE_SCHEMAS, every later run of the table failed); each run still reads every delete, and the
    fold writes them as bigint."""
    monkeypatch.setattr("etl.raw_table.tombstones.MAX_LOG_FOLDERS", 2)
    wide = pa.schema([("Op", pa.string()), ("SEQ", pa.string()), ("ID", pa.int64()), ("NAME", pa.string())])
    config = lake.configure(table_config("widened_key"))
    table_id = config.table_id
    log = lake.root / "raw" / "lake_db" / "_odp_tombstones" / "widened_key" / "log"
    inserts = [_c("I", "00001", k, f"n{k}") for k in range(1, 7)]
    lake.land_parquet(config, "20260101-000001.parquet", inserts, CDC)
    assert lake.run(spark, table_id).tables[0].status is RunStatus.COMPLETED
    for n, key in enumerate((1, 2), start=2):  # two runs, one int delete each: two folders
        lake.land_parquet(config, f"20260101-00000{n}.parquet", [_c("D", f"0001{n}", key, f"n{key}")], CDC)
        assert lake.run(spark, table_id).tables[0].status is RunStatus.COMPLETED
    assert [p.name.endswith("-consolidated") for p in log.iterdir()] == [False, False]
    # the third makes three: after its commit, they are folded into one
    fold = _count_the_fold(spark, monkeypatch)
    lake.land_parquet(config, "20260101-000004.parquet", [_c("D", "00014", 3, "n3"), _c("U", "00015", 4, "n4-2")], CDC)
    assert lake.run(spark, table_id).tables[0].status is RunStatus.COMPLETED
    assert [p.name.endswith("-consolidated") for p in log.iterdir()] == [True]
    # a small log is folded by one task: the log's schema and the write (3 before: its newest per key was an exchange)
    assert fold.jobs == 2, "\n".join(fold.job_names)

    # every folded delete is still remembered: late, older updates of keys 1 to 3 stay out; the file comes with the
    # key as bigint, and its delete of key 5 is a bigint tombstone beside the folded int one
    late = [_c("U", "00011", 1, "x"), _c("U", "00012", 2, "x"), _c("U", "00013", 3, "x"), _c("D", "00016", 5, "n5")]
    lake.land_parquet(config, "20260101-000005.parquet", late, wide)
    widened = lake.run(spark, table_id).tables[0]
    assert (widened.status, widened.stale_dropped) == (RunStatus.COMPLETED, 3), widened.error
    assert rows_of(spark, widened.base_path, ["id", "name"]) == [(4, "n4-2"), (6, "n6")]

    # the next run reads the mixed log: late updates older than an int (key 1) and a bigint (key 5) tombstone stay
    # out, a newer update of key 4 applies; its delete of key 6 makes a third folder, and the fold reads the mixed
    # log too, and leaves one bigint folder
    late = [_c("U", "00002", 1, "x"), _c("U", "00010", 5, "x"), _c("U", "00017", 4, "c7"), _c("D", "00017", 6, "n6")]
    lake.land_parquet(config, "20260101-000006.parquet", late, wide)
    mixed = lake.run(spark, table_id).tables[0]
    assert (mixed.status, mixed.stale_dropped) == (RunStatus.COMPLETED, 2), mixed.error
    assert [p.name.endswith("-consolidated") for p in log.iterdir()] == [True]
    assert spark.read.parquet(str(next(log.iterdir()))).schema["id"].dataType.simpleString() == "bigint"
    # that folder still holds every delete, the int ones and the bigint ones
    last = [_c("U", "00003", 1, "x"), _c("U", "00004", 3, "x"), _c("U", "00005", 6, "x"), _c("I", "00019", 7, "d")]
    lake.land_parquet(config, "20260101-000007.parquet", last, wide)
    result = lake.run(spark, table_id).tables[0]
    assert (result.status, result.stale_dropped) == (RunStatus.COMPLETED, 3), result.error
    assert rows_of(spark, result.base_path, ["id", "name"]) == [(4, "c7"), (7, "d")]
