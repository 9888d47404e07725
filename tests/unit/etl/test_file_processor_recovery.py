"""A table (or the Hudi tombstone table of an earlier release) whose first commit never completed recovers on the
next run; tombstones an earlier release kept in Hudi still hold and move to the Parquet log.

The interrupted state is made here by removing the completed instant of a first commit, so the
table keeps its ``hoodie.properties`` and a requested + inflight instant only: exactly what a run
killed during that commit leaves (tests/e2e/test_kill_recovery.py makes it with a real SIGKILL).
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

from odp.faults import on_fault
from odp.tracker import RunStatus
from tests.support.lake import CrashAfterCommit, Lake, rows_of, table_config
from tests.support.timeline import timeline_dir

CDC = pa.schema([("Op", pa.string()), ("SEQ", pa.string()), ("ID", pa.int32()), ("NAME", pa.string())])


def _c(op: str, seq: str, key: int, name: str) -> dict:
    return {"Op": op, "SEQ": seq, "ID": key, "NAME": name}


def uncomplete_first_commit(table_dir: Path) -> list[str]:
    """Remove the completed instant files of a table with one commit; returns what remains pending. The instant files
    lie directly in ``.hoodie`` at table version 6 (what ODP writes), in ``.hoodie/timeline`` at version 8 (an
    earlier release's tables)."""
    timeline = timeline_dir(table_dir)
    completed = [p for p in timeline.iterdir() if p.is_file() and p.name.endswith(".commit")]
    assert len(completed) == 1, sorted(p.name for p in timeline.iterdir())
    completed[0].unlink()
    (timeline / f".{completed[0].name}.crc").unlink(missing_ok=True)  # Hadoop's checksum of it
    pending = sorted(p.name for p in timeline.iterdir() if p.is_file() and p.name[:1].isdigit())
    assert pending
    assert all(name.endswith((".requested", ".inflight")) for name in pending), pending
    return pending


@pytest.mark.spark
def test_a_new_table_whose_first_commit_never_completed_is_recreated(
    spark, lake: Lake, caplog: pytest.LogCaptureFixture
) -> None:
    config = lake.configure(table_config("first_commit_killed"))
    other = lake.configure(table_config("first_commit_neighbour"))
    lake.land_parquet(config, "20260101-000001.parquet", [_c("I", "00001", 1, "ann"), _c("I", "00002", 2, "bob")], CDC)
    lake.land_parquet(other, "20260101-000001.parquet", [_c("I", "00001", 7, "eve")], CDC)
    with on_fault(CrashAfterCommit.POINT, CrashAfterCommit()):
        crashed = lake.run(spark, config.table_id).tables[0]
    assert crashed.status is RunStatus.REFRESH_ERROR
    table_dir = lake.root / "raw" / "lake_db" / "first_commit_killed"
    uncomplete_first_commit(table_dir)
    assert len(lake.landed(config.table_id)) == 1

    with caplog.at_level(logging.WARNING, logger="etl.hudi.timeline"):
        outcome = lake.run(spark, config.table_id, other.table_id)
    recovered, neighbour = outcome.tables
    assert recovered.status is RunStatus.COMPLETED, recovered.error
    assert recovered.discarded == (recovered.base_path,)
    assert (recovered.files, recovered.inserts) == (1, 2)
    assert rows_of(spark, recovered.base_path, ["id", "name"]) == [(1, "ann"), (2, "bob")]
    assert lake.landed(config.table_id) == []
    assert any("first commit never completed" in r.getMessage() for r in caplog.records)
    assert neighbour.status is RunStatus.COMPLETED
    assert neighbour.discarded == ()
    assert rows_of(spark, neighbour.base_path, ["id", "name"]) == [(7, "eve")]


def legacy_tombstone_table(spark, tombstones: Path) -> None:
    """Turn a table's tombstone log into what an earlier ODP release stored: a Hudi table at the same path
    (COPY_ON_WRITE, not partitioned, keyed by the primary key, ``_odp_seq`` ordering), with no log."""
    rows = spark.read.option("recursiveFileLookup", "true").parquet(str(tombstones / "log")).collect()
    frame = spark.createDataFrame(rows)
    shutil.rmtree(tombstones)
    options = {
        "hoodie.table.name": f"{tombstones.name}_odp_tombstones",
        "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
        "hoodie.datasource.write.operation": "upsert",
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.precombine.field": "_odp_seq",
        "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
        "hoodie.datasource.write.partitionpath.field": "",
        "hoodie.upsert.shuffle.parallelism": "1",
    }
    frame.write.format("hudi").options(**options).mode("append").save(str(tombstones))


@pytest.mark.spark
def test_tombstones_an_earlier_release_kept_in_hudi_hold_move_to_the_log_or_are_discarded_if_never_committed(
    spark, lake: Lake
) -> None:
    """Tombstones an earlier release kept in a Hudi table still hold, and the next run folds them into the log; such a
    tombstone table whose first commit never completed is discarded. A table with a completed commit (the table
    itself, the tombstone table of an earlier release) is never discarded."""
    config = lake.configure(table_config("legacy_tombstones"))
    table_id = config.table_id
    lake.land_parquet(config, "20260101-000001.parquet", [_c("I", "00001", 1, "ann"), _c("I", "00001", 2, "bob")], CDC)
    first = lake.run(spark, table_id).tables[0]
    assert (first.status, first.discarded) == (RunStatus.COMPLETED, ()), first.error
    lake.land_parquet(config, "20260101-000002.parquet", [_c("D", "00005", 1, "ann"), _c("U", "00006", 2, "bo")], CDC)
    second = lake.run(spark, table_id).tables[0]
    assert (second.status, second.discarded) == (RunStatus.COMPLETED, ()), second.error
    # key 1 deleted at SEQ 00005; its tombstones as an earlier release kept them
    tombstones = lake.root / "raw" / "lake_db" / "_odp_tombstones" / "legacy_tombstones"
    legacy_tombstone_table(spark, tombstones)
    assert (tombstones / ".hoodie").is_dir()
    assert not (tombstones / "log").exists()

    lake.land_parquet(config, "20260101-000000.parquet", [_c("U", "00003", 1, "ann-stale")], CDC)
    late = lake.run(spark, table_id).tables[0]
    assert (late.status, late.stale_dropped) == (RunStatus.COMPLETED, 1), late.error
    assert late.discarded == ()
    assert rows_of(spark, late.base_path, ["id", "name"]) == [(2, "bo")]
    # that run folded the Hudi table into the log: one folder, nothing else left at the path
    assert [p.name for p in tombstones.iterdir()] == ["log"]
    assert len([p for p in (tombstones / "log").iterdir() if p.name.endswith("-consolidated")]) == 1

    lake.land_parquet(config, "20260101-000003.parquet", [_c("U", "00004", 1, "ann-late")], CDC)
    again = lake.run(spark, table_id).tables[0]
    assert (again.status, again.stale_dropped) == (RunStatus.COMPLETED, 1), again.error
    assert again.discarded == ()
    assert rows_of(spark, again.base_path, ["id", "name"]) == [(2, "bo")]

    # the same tombstones as an earlier release's Hudi table again, whose first commit never completed: discarded
    legacy_tombstone_table(spark, tombstones)
    uncomplete_first_commit(tombstones)
    lake.land_parquet(config, "20260101-000004.parquet", [_c("U", "00007", 2, "bo-2")], CDC)
    rerun = lake.run(spark, table_id).tables[0]
    assert rerun.status is RunStatus.COMPLETED, rerun.error
    assert len(rerun.discarded) == 1
    assert rerun.discarded[0].endswith("/_odp_tombstones/legacy_tombstones")
    assert rows_of(spark, rerun.base_path, ["id", "name"]) == [(2, "bo-2")]
