"""Poison files on real Spark + Hudi: quarantined after max_file_attempts failed runs, the table goes on
without them, and a released file is applied in its order (never over newer rows or committed deletes)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from odp.tracker import FileStatus, FileTracker, ProcessingTracker, RunStatus
from tests.support.lake import Lake, hudi_rs_rows, rows_of, table_config

CDC = pa.schema([("Op", pa.string()), ("seq", pa.string()), ("id", pa.int32()), ("name", pa.string())])


def rows(*changes: tuple[str, str, int, str]) -> list[dict]:
    return [{"Op": op, "seq": seq, "id": key, "name": name} for op, seq, key, name in changes]


@pytest.mark.spark
def test_a_poison_file_is_quarantined_the_table_goes_on_and_its_release_applies_it_in_order(spark, lake: Lake) -> None:
    config = lake.configure(table_config("people").model_copy(update={"max_file_attempts": 2}))
    other = lake.configure(table_config("others"))
    lake.land_parquet(config, "20260101-1.parquet", rows(("I", "1", 1, "ann"), ("I", "1", 2, "bob")), CDC)
    poison = lake.land_text(config, "20260101-2.parquet", "PAR1 truncated upload")
    lake.land_parquet(other, "20260101-1.parquet", rows(("I", "1", 7, "eve")), CDC)
    files = FileTracker(lake.tables["file_tracker"], lake.tables["file_tracker_history"])
    processing = ProcessingTracker(lake.tables["processing_tracker"], lake.tables["processing_tracker_history"])

    first = {r.table_id: r for r in lake.run(spark, config.table_id, other.table_id).tables}
    assert first[config.table_id].status is RunStatus.REFRESH_ERROR
    assert first[config.table_id].quarantined_files == ()
    assert first[other.table_id].status is RunStatus.COMPLETED  # the other table is not affected
    attempts = {f.key: f.attempts for f in lake.landed(config.table_id)}
    assert attempts == {"src/app/people/20260101-1.parquet": None, poison.key: 1}  # only the named file counts

    second = lake.run(spark, config.table_id).tables[0]
    assert second.status is RunStatus.REFRESH_ERROR
    assert second.quarantined_files == (poison.key,)
    assert second.error.endswith(f"[quarantined after 2 failed runs: {poison.key}; the next run goes on without them]")
    (held,) = files.files(config.table_id, FileStatus.QUARANTINED)
    assert held.key == poison.key
    assert held.last_error.startswith(
        f"failed 2 runs of its table (max_file_attempts 2): ChangeFileError: {poison.key}: "
    )
    assert "unreadable Parquet" in held.last_error
    assert processing.state(config.table_id).last_run.quarantined_files == (poison.key,)
    history = [run.quarantined_files for run in processing.history(config.table_id)]
    assert sorted(history) == [(), (poison.key,)]

    # the table goes on without it; meanwhile newer changes arrive: key 1 updated, key 2 deleted
    lake.land_parquet(config, "20260101-3.parquet", rows(("U", "3", 1, "ann-new"), ("D", "3", 2, "bob")), CDC)
    third = lake.run(spark, config.table_id).tables[0]
    assert third.status is RunStatus.COMPLETED, third.error
    assert third.files == 2
    assert rows_of(spark, third.base_path, ["id", "name"]) == [(1, "ann-new")]
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
    fourth = lake.run(spark, config.table_id).tables[0]
    assert fourth.status is RunStatus.COMPLETED, fourth.error
    assert fourth.files == 1
    # event-time ordering keeps ann-new; the tombstone keeps key 2 deleted; key 3 is added
    expected = [(1, "ann-new"), (3, "cy")]
    assert rows_of(spark, fourth.base_path, ["id", "name"]) == expected
    assert hudi_rs_rows(fourth.base_path, ["id", "name"]) == expected
    assert files.files(config.table_id) == []
    applied = {item["key"]: item["status"] for item in lake.processed(config.table_id)}
    assert applied[poison.key] == "raw_file_processed"
