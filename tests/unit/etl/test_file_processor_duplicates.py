"""Historical tables refuse a file whose bytes were applied already (same ETag), unless it is replayed."""

from __future__ import annotations

import logging

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from etl.file_processor.table_plan import split_duplicate_content
from odp.config.models import TableMode
from odp.tracker import FileKind, RunStatus, TrackedFile
from tests.support.lake import Lake, rows_of, small_table_config

CDC = pa.schema([("Op", pa.string()), ("SEQ", pa.string()), ("ID", pa.int32()), ("NAME", pa.string())])


def parquet(rows: list[tuple[str, str, int, str]]) -> bytes:
    sink = pa.BufferOutputStream()
    records = [{"Op": op, "SEQ": seq, "ID": key, "NAME": name} for op, seq, key, name in rows]
    pq.write_table(pa.Table.from_pylist(records, schema=CDC), sink)
    return sink.getvalue().to_pybytes()


def tracked(key: str, etag: str, *, replay: bool | None = None, instant: str | None = None) -> TrackedFile:
    return TrackedFile(
        table_id="s.a.t",
        file_id=key,
        bucket="staging",
        key=key,
        size=1,
        etag=etag,
        landed_at="2026-01-01T00:00:00.000Z",
        file_kind=FileKind.CDC,
        replay=replay,
        commit_instant=instant,
    )


def test_split_keeps_the_first_copy_in_key_order_and_replays() -> None:
    applied = {"aaa": tracked("old/1.parquet", "aaa", instant="20260101")}
    landed = [tracked("k/3", "bbb"), tracked("k/1", "aaa"), tracked("k/2", "bbb"), tracked("k/4", "aaa", replay=True)]
    keep, duplicates = split_duplicate_content(landed, applied)
    assert [f.key for f in keep] == ["k/2", "k/4"]
    assert [(d.key, o.key) for d, o in duplicates] == [("k/1", "old/1.parquet"), ("k/3", "k/2")]


@pytest.mark.spark
def test_a_historical_table_refuses_the_same_bytes_under_a_new_key(
    spark, lake: Lake, caplog: pytest.LogCaptureFixture
) -> None:
    config = lake.configure(small_table_config("history_dupes", mode=TableMode.HISTORICAL))
    table_id = config.table_id
    first_bytes = parquet([("I", "00001", 1, "ann"), ("U", "00002", 1, "ann-2")])
    first = lake.land_bytes(config, "20260101-000001.parquet", first_bytes)
    applied = lake.run(spark, table_id).tables[0]
    assert (applied.status, applied.files, applied.duplicate_files) == (RunStatus.COMPLETED, 1, 0)

    # the same bytes again under a new key, beside a new file in the same batch
    lake.land_bytes(config, "copy/20260101-000001.parquet", first_bytes)
    lake.land_bytes(config, "20260101-000002.parquet", parquet([("U", "00003", 1, "ann-3")]))
    with caplog.at_level(logging.WARNING, logger="etl.file_processor"):
        outcome = lake.run(spark, table_id)
    second = outcome.tables[0]
    assert (second.status, second.files, second.duplicate_files) == (RunStatus.COMPLETED, 1, 1)
    assert rows_of(spark, second.base_path, ["id", "name"]) == [(1, "ann"), (1, "ann-2"), (1, "ann-3")]
    reason = (
        f"same content (ETag {first.etag}) as {first.key}, already applied to this historical table by commit "
        f"{applied.commit_instant}; set replay=true on its file_tracker item to apply it anyway"
    )
    copy_key = f"{config.staging_prefix}copy/20260101-000001.parquet"
    assert f"{table_id}: {copy_key} not applied: {reason}" in [r.getMessage() for r in caplog.records]
    [skipped] = [item for item in lake.processed(table_id) if item["key"] == copy_key]
    assert (skipped["status"], skipped["skip_reason"]) == ("skipped_duplicate_content", reason)
    assert lake.landed(table_id) == []
    [history] = [run for run in lake.tables["processing_tracker_history"].scan()["Items"]
                 if run["run_id"] == outcome.run_id]  # fmt: skip
    assert (history["status"], history["files"], history["duplicate_files"]) == ("completed", 1, 1)

    # an operator replays the same bytes on purpose: applied again
    lake.land_bytes(config, "replay/20260101-000001.parquet", first_bytes, replay=True)
    replayed = lake.run(spark, table_id).tables[0]
    assert (replayed.files, replayed.duplicate_files) == (1, 0)
    assert rows_of(spark, replayed.base_path, ["id", "name"]) == [
        (1, "ann"), (1, "ann"), (1, "ann-2"), (1, "ann-2"), (1, "ann-3")
    ]  # fmt: skip


@pytest.mark.spark
def test_a_current_table_applies_a_copy_idempotently(spark, lake: Lake) -> None:
    config = lake.configure(small_table_config("current_copy"))
    body = parquet([("I", "00001", 1, "ann")])
    lake.land_bytes(config, "20260101-000001.parquet", body)
    lake.run(spark, config.table_id)
    lake.land_bytes(config, "copy/20260101-000001.parquet", body)
    again = lake.run(spark, config.table_id).tables[0]
    assert (again.files, again.duplicate_files) == (1, 0)  # upsert by key: the copy changes nothing
    assert rows_of(spark, again.base_path, ["id", "name"]) == [(1, "ann")]
