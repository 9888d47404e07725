"""Poison files on real Spark + Hudi: a failure naming no file counts against no file and, run after run, holds the
table at its bound; a released file is applied in its event-time order (never over newer rows or committed
deletes); a crash after the commit of a run that set a file aside. (Bad files quarantined at their first failure
while the run commits the others: tests/unit/etl/test_scan_failures.py.)"""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from etl.hudi.timeline import completed_commits
from odp.faults import on_fault
from odp.operations.status import render_table, table_view
from odp.tracker import FileStatus, FileTracker, ProcessingTracker, RunStatus
from tests.support.lake import CrashAfterCommit, Lake, hudi_rs_rows, rows_of, small_table_config

CDC = pa.schema([("Op", pa.string()), ("seq", pa.string()), ("id", pa.int32()), ("name", pa.string())])


def rows(*changes: tuple[str, str, int, str]) -> list[dict]:
    return [{"Op": op, "seq": seq, "id": key, "name": name} for op, seq, key, name in changes]


def trackers(lake: Lake) -> tuple[FileTracker, ProcessingTracker]:
    return (
        FileTracker(lake.tables["file_tracker"], lake.tables["file_tracker_history"]),
        ProcessingTracker(lake.tables["processing_tracker"], lake.tables["processing_tracker_history"]),
    )


@pytest.mark.spark
def test_a_failure_that_names_no_file_counts_against_no_file_and_holds_the_table_at_its_bound(
    spark, lake: Lake
) -> None:
    config = lake.configure(small_table_config("counts", max_table_attempts=2))
    numbers = pa.schema([("Op", pa.string()), ("seq", pa.string()), ("id", pa.int32()), ("n", pa.int64())])
    words = pa.schema([("Op", pa.string()), ("seq", pa.string()), ("id", pa.int32()), ("n", pa.string())])
    lake.land_parquet(config, "20260101-1.parquet", [{"Op": "I", "seq": "1", "id": 1, "n": 10}], numbers)
    assert lake.run(spark, config.table_id).tables[0].status is RunStatus.COMPLETED
    # a file brings a string where the table stores a bigint: the write is refused for the table, naming no file
    lake.land_parquet(config, "20260101-2.parquet", [{"Op": "U", "seq": "2", "id": 1, "n": "ten"}], words)
    lake.land_parquet(config, "20260101-3.parquet", [{"Op": "I", "seq": "3", "id": 3, "n": 30}], numbers)
    files, processing = trackers(lake)

    failed = lake.run(spark, config.table_id).tables[0]

    assert failed.status is RunStatus.REFRESH_ERROR
    assert failed.error.startswith("SchemaEvolutionError: "), failed.error
    assert failed.quarantined_files == ()
    assert processing.state(config.table_id).last_run.quarantined_files == ()
    assert [(f.status, f.attempts) for f in lake.landed(config.table_id)] == [(FileStatus.LANDED, None)] * 2
    assert files.files(config.table_id, FileStatus.QUARANTINED) == []
    assert (failed.failed_runs, failed.held, processing.state(config.table_id).held_at) == (1, None, None)

    # the table's failures are bounded: at max_table_attempts failed runs in a row it is held, never retried forever
    again = lake.run(spark, config.table_id).tables[0]
    assert (again.status, again.failed_runs, again.held) == (RunStatus.REFRESH_ERROR, 2, True)
    assert again.error.endswith(
        "[failed 2 runs in a row (max_table_attempts 2): held, the Batch Manager plans it no more; after a fix, "
        f"python -m odp retry {config.table_id}]"
    )
    assert processing.unavailable_tables([config.table_id]) == (set(), {config.table_id})
    backend = SimpleNamespace(environment="test", names=lake.names, dynamodb=lake.dynamodb, job_runs=None)
    shown = render_table(table_view(backend, config.table_id), datetime.now(UTC)).splitlines()
    held_at = processing.state(config.table_id).held_at
    assert (
        f"  HELD since {held_at}, after 2 failed runs in a row (max_table_attempts): the Batch Manager leaves it out; "
        f"after a fix, python -m odp retry {config.table_id}"
    ) in shown


@pytest.mark.spark
def test_a_quarantined_file_released_after_a_fix_is_applied_in_its_event_time_order(spark, lake: Lake) -> None:
    config = lake.configure(small_table_config("people"))
    other = lake.configure(small_table_config("others"))
    lake.land_parquet(config, "20260101-1.parquet", rows(("I", "1", 1, "ann"), ("I", "1", 2, "bob")), CDC)
    poison = lake.land_text(config, "20260101-2.parquet", "PAR1 truncated upload")
    lake.land_parquet(other, "20260101-1.parquet", rows(("I", "1", 7, "eve")), CDC)
    files, processing = trackers(lake)

    first = {r.table_id: r for r in lake.run(spark, config.table_id, other.table_id).tables}
    assert first[config.table_id].status is RunStatus.COMPLETED, first[config.table_id].error
    assert first[config.table_id].quarantined_files == (poison.key,)
    assert first[config.table_id].files == 1
    assert first[other.table_id].status is RunStatus.COMPLETED
    assert first[other.table_id].quarantined_files == ()
    (held,) = files.files(config.table_id, FileStatus.QUARANTINED)
    assert held.key == poison.key
    assert "unreadable Parquet" in held.last_error
    assert processing.state(config.table_id).last_run.quarantined_files == (poison.key,)

    # the table goes on without it; meanwhile newer changes arrive: key 1 updated, key 2 deleted
    lake.land_parquet(config, "20260101-3.parquet", rows(("U", "3", 1, "ann-new"), ("D", "3", 2, "bob")), CDC)
    second = lake.run(spark, config.table_id).tables[0]
    assert second.status is RunStatus.COMPLETED, second.error
    assert second.files == 1
    assert rows_of(spark, second.base_path, ["id", "name"]) == [(1, "ann-new")]
    assert processing.state(config.table_id).last_run.quarantined_files == ()
    assert [f.key for f in files.files(config.table_id)] == [poison.key]  # still held, not dropped

    # the fix: the object is uploaded again, whole, with older changes (seq 2) and a new key
    fixed = pa.BufferOutputStream()
    pq.write_table(
        pa.Table.from_pylist(rows(("U", "2", 1, "ann-old"), ("U", "2", 2, "bob-old"), ("I", "2", 3, "cy")), schema=CDC),
        fixed,
    )
    (lake.root / "staging" / poison.key).write_bytes(fixed.getvalue().to_pybytes())
    assert files.release(held) is True
    third = lake.run(spark, config.table_id).tables[0]
    assert third.status is RunStatus.COMPLETED, third.error
    assert third.files == 1
    # event-time ordering keeps ann-new; the tombstone keeps key 2 deleted; key 3 is added
    expected = [(1, "ann-new"), (3, "cy")]
    assert rows_of(spark, third.base_path, ["id", "name"]) == expected
    assert hudi_rs_rows(third.base_path, ["id", "name"]) == expected
    assert files.files(config.table_id) == []
    applied = {item["key"]: item["status"] for item in lake.processed(config.table_id)}
    assert applied[poison.key] == "raw_file_processed"


@pytest.mark.spark
def test_a_crash_after_the_commit_of_a_run_that_set_a_file_aside_reconciles_only_the_files_applied(
    spark, lake: Lake
) -> None:
    config = lake.configure(small_table_config("people"))
    one = lake.land_parquet(config, "20260101-1.parquet", rows(("I", "1", 1, "ann")), CDC)
    bad = lake.land_parquet(config, "20260101-2.parquet", rows(("I", "2", None, "nobody")), CDC)
    three = lake.land_parquet(config, "20260101-3.parquet", rows(("I", "3", 3, "cy")), CDC)

    with on_fault(CrashAfterCommit.POINT, CrashAfterCommit()):
        crashed = lake.run(spark, config.table_id).tables[0]

    # the run failed after its commit: it still names the file it set aside, which stays quarantined
    assert crashed.status is RunStatus.REFRESH_ERROR
    assert crashed.quarantined_files == (bad.key,)
    assert crashed.error.endswith(f"[quarantined earlier in this run: {bad.key}]"), crashed.error
    assert [f.key for f in lake.quarantined(config.table_id)] == [bad.key]
    assert "row 1: null key column id" in lake.quarantined(config.table_id)[0].last_error
    assert [f.key for f in lake.landed(config.table_id)] == [one.key, three.key]  # committed, not yet marked

    rerun = lake.run(spark, config.table_id).tables[0]
    assert rerun.status is RunStatus.COMPLETED, rerun.error
    assert (rerun.reconciled, rerun.files, rerun.quarantined_files) == (2, 0, ())
    (commit,) = completed_commits(spark, rerun.base_path)
    assert sorted(commit.file_ids) == sorted([one.file_id, three.file_id])
    assert rows_of(spark, rerun.base_path, ["id", "name"]) == [(1, "ann"), (3, "cy")]
    assert lake.landed(config.table_id) == []
    assert [f.key for f in lake.quarantined(config.table_id)] == [bad.key]
