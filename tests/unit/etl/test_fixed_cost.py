"""The fixed cost of a small table's run, counted (not timed: the machine is shared): the Spark jobs of one small
commit and of a run without files, and the driver's reads of the table's state (meta clients, Hudi relations).

Before issue 27 (main at 2c4732e) a commit of one 20-change file into a 10,000-row table started 15 Spark jobs and
read the table's state 6 times (4 meta clients, 2 Hudi relations); a run without files 0 jobs and 3 reads.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import functions as F

from etl.hudi.timeline import read_table_state
from etl.raw_table import write_strategy
from odp.tracker import RunStatus
from tests.support.lake import Lake, table_config
from tests.support.spark_work import spark_work

CDC = pa.schema([("Op", pa.string()), ("seq", pa.string()), ("id", pa.int32()), ("name", pa.string())])
ROWS = 10_000


def _change(op: str, seq: int, key: int) -> dict:
    return {"Op": op, "seq": f"{seq:08d}", "id": key, "name": f"name-{key}-{seq}"}


@pytest.mark.spark
def test_a_small_tables_commit_and_a_table_without_files_cost_few_spark_jobs_and_one_state_read(
    spark, lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = lake.configure(table_config("small"))
    lake.land_parquet(config, "20260101-000001.parquet", [_change("I", 1, key) for key in range(ROWS)], CDC)
    assert lake.run(spark, config.table_id).tables[0].status is RunStatus.COMPLETED

    # one file of 20 changes: 10 updates, 5 deletes, 5 inserts
    changes = [_change("U", 2, key) for key in range(10)]
    changes += [_change("D", 2, key) for key in range(10, 15)]
    changes += [_change("I", 2, key) for key in range(ROWS, ROWS + 5)]
    lake.land_parquet(config, "20260101-000002.parquet", changes, CDC)
    with spark_work(spark, monkeypatch) as commit:
        run = lake.run(spark, config.table_id).tables[0]
    assert run.status is RunStatus.COMPLETED, run.error
    assert (run.inserts, run.updates, run.deletes) == (5, 10, 5)

    with spark_work(spark, monkeypatch) as idle:
        quiet = lake.run(spark, config.table_id).tables[0]
    assert quiet.status is RunStatus.COMPLETED, quiet.error
    assert quiet.commit_instant is None

    # the next file finds the tombstones the commit wrote (the old update of key 10 is stale: dropped)
    later = [_change("U", 3, key) for key in range(20, 30)] + [_change("D", 3, key) for key in range(30, 35)]
    later.append(_change("U", 1, 10))  # older than the committed delete of key 10: stale, dropped
    lake.land_parquet(config, "20260101-000003.parquet", later, CDC)
    with spark_work(spark, monkeypatch) as tombstoned:
        after = lake.run(spark, config.table_id).tables[0]
    assert after.status is RunStatus.COMPLETED, after.error
    assert (after.inserts, after.updates, after.deletes, after.stale_dropped) == (0, 10, 5, 1)

    # a table without a landed file: its state read once, no Spark job
    assert (idle.jobs, idle.table_state_reads) == (0, 1), idle
    # the state read once before the write and the commit found after it (no Hudi relation for the schema);
    # the jobs left: the counts (2), the tombstones (1), Hudi's upsert (4), its metadata table (2), its markers (4; 3
    # before table version 6, whose marker reconciliation lists the markers once more: docs/decisions/001)
    assert commit.table_state_reads == 2, commit.state_reads
    assert commit.hudi_loads == 0, commit.state_reads
    assert commit.jobs <= 13, "\n".join(commit.job_names)
    # with stored tombstones: 1 more, the log's schema; the stale changes are counted by the tombstone write's own pass
    # (etl.raw_table.stale_count: 15 with a count job of their own). Before the one-partition merge join, 18: the
    # tombstones grouped, broadcast and counted, then grouped and broadcast again for Hudi's input
    assert tombstoned.jobs <= 14, "\n".join(tombstoned.job_names)


@pytest.mark.spark
def test_the_table_state_holds_what_spark_reads_of_the_table(
    spark, lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The schema (from the timeline, no relation) and the size (from the write statistics) against Spark's read."""
    config = lake.configure(table_config("sized", partition_by=("region",)))
    schema = pa.schema(
        [
            ("Op", pa.string()),
            ("seq", pa.string()),
            ("id", pa.int32()),
            ("region", pa.string()),
            ("amount", pa.decimal128(12, 2)),
            ("at", pa.timestamp("us", tz="UTC")),
            ("day", pa.date32()),
            ("ratio", pa.float64()),
        ]
    )
    base = {"amount": 1, "at": 0, "day": 0, "ratio": 0.5}
    rows = [{"Op": "I", "seq": "1", "id": key, "region": ("eu", "us")[key % 2], **base} for key in range(40)]
    lake.land_parquet(config, "20260101-000001.parquet", rows, schema)
    first = lake.run(spark, config.table_id).tables[0]
    assert first.status is RunStatus.COMPLETED, first.error
    updates = [{**row, "Op": "U", "seq": "2", "ratio": 1.5} for row in rows[:3]] + [
        {**rows[3], "Op": "D", "seq": "2"},
        {**rows[4], "Op": "U", "seq": "2", "region": "ap"},  # moves partition: a new file group
    ]
    lake.land_parquet(config, "20260101-000002.parquet", updates, schema)
    second = lake.run(spark, config.table_id).tables[0]
    assert second.status is RunStatus.COMPLETED, second.error

    state = read_table_state(spark, second.base_path)
    table = spark.read.format("hudi").load(second.base_path)
    assert state.exists
    assert not state.uncommitted
    # the same fields, types and nullability (Spark's reader also tags the meta columns in their metadata)
    assert [(f.name, f.dataType, f.nullable) for f in state.schema.fields] == [
        (f.name, f.dataType, f.nullable) for f in table.schema.fields
    ]
    assert [c.instant for c in state.commits] == [first.commit_instant, second.commit_instant]
    assert state.index == "record"
    assert state.encoded_partitions is True
    assert state.rows == table.count() == 39
    assert state.file_groups == table.select("_hoodie_file_name").distinct().count() == 3
    assert state.bytes > 0
    # the file groups the second commit rewrote for updates and deletes alone (eu and us; ap is new), as Spark reads
    # them back
    rewritten = table.where(F.col("_hoodie_file_name").contains(second.commit_instant)).where("region != 'ap'")
    last = state.commits[-1]
    assert last.rows_rewritten == rewritten.count() == 38
    assert last.files_rewritten == rewritten.select("_hoodie_file_name").distinct().count() == 2
    folder = Path(second.base_path.removeprefix("file://"))
    assert read_table_state(spark, lake.raw_root + "/lake_db/none").exists is False

    # the next run's reason advises MERGE_ON_READ from those statistics (at thresholds this small table reaches:
    # 38 rows for 5 updates and deletes is 7 rows each, the default asks for 50 rows and 4 MiB)
    monkeypatch.setattr(write_strategy, "MOR_MIN_ROWS_PER_CHANGE", 7)
    monkeypatch.setattr(write_strategy, "MOR_MIN_BYTES_REWRITTEN", 1)
    lake.land_parquet(config, "20260101-000003.parquet", [{**rows[5], "Op": "U", "seq": "3"}], schema)
    third = lake.run(spark, config.table_id).tables[0]
    assert third.status is RunStatus.COMPLETED, third.error
    assert second.updates + second.deletes == 5
    files = [f for f in folder.rglob(f"*_{second.commit_instant}.parquet") if f.parent.name != "region=ap"]
    assert third.write_reason.endswith(
        f"; the last commit rewrote 38 stored rows ({sum(f.stat().st_size for f in files)} bytes) of 2 file groups "
        "for 5 updates and deletes, 7 rows each: table_type MERGE_ON_READ would log them instead"
    )
