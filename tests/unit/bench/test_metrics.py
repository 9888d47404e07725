"""The wave metrics from known files and byte counts: kinds of files, write amplification, S3 requests, fits."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.measure import snapshot
from bench.metrics import (
    DATA,
    LOG,
    METADATA,
    fixed_and_marginal,
    is_active_instant,
    kind,
    put_requests,
    s3_requests,
    step_seconds_by_group,
    table_bytes_read,
    table_io,
    write_amplification,
)

BASE_V1 = "trip_day=20261101/3f2a-0_0-10-20_20261101000000000.parquet"
BASE_V2 = "trip_day=20261101/3f2a-0_1-30-40_20261102000000000.parquet"
OTHER = "trip_day=20261030/77bc-0_0-10-20_20261101000000000.parquet"
LOG_FILE = "trip_day=20261030/.77bc-0_20261102000000000.log.1_0-50-60"


def write(root: Path, relative: str, size: int) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)


def test_files_are_sorted_into_data_log_and_metadata() -> None:
    assert kind(BASE_V1) == DATA
    assert kind(LOG_FILE) == LOG
    assert kind(".hoodie/20261102000000000.commit") == METADATA
    assert kind(".hoodie/metadata/files/.files-0000-0_20261102.log.1_0-1-1") == METADATA
    assert kind("trip_day=20261101/.hoodie_partition_metadata") == METADATA
    assert kind("vendorid=1/part-00000-1a2b.c000.snappy.parquet") == DATA
    assert kind("_SUCCESS") == METADATA
    assert kind("trip_day=20261101/.3f2a-0_0-10-20_20261101000000000.parquet.crc") is None


def test_a_wave_of_a_hudi_table_counted_from_two_snapshots(tmp_path: Path) -> None:
    table = tmp_path / "tables" / "fact_1"
    write(table, BASE_V1, 1_000)
    write(table, OTHER, 700)
    write(table, ".hoodie/timeline/20261101000000000.commit", 90)
    write(table, ".hoodie/hoodie.properties", 10)
    write(tmp_path / "tables" / "other_table", BASE_V1, 5_000)  # another table's folder: not this table's
    before = snapshot(tmp_path / "tables")
    write(table, BASE_V2, 1_200)  # a new version of file group 3f2a: touched
    write(table, LOG_FILE, 300)  # a log file of file group 77bc: touched
    write(table, ".hoodie/timeline/20261102000000000.commit", 110)
    write(table, ".hoodie/timeline/.20261102000000000.commit.crc", 8)
    write(table, ".hoodie/timeline/history/20261001000000000_20261002000000000.archive", 300)
    write(table, "trip_day=20261101/.3f2a-0_1-30-40_20261102000000000.parquet.crc", 20)  # not on S3
    write(table, "trip_day=20261102/9d9d-0_0-30-40_20261102000000000.parquet", 400)  # a new file group
    write(tmp_path / "tables" / "other_table", "x.parquet", 999)
    io = table_io(before, snapshot(tmp_path / "tables"), table)
    assert io.bytes_written == {DATA: 1_600, LOG: 300, METADATA: 410}
    assert io.total_bytes_written == 2_310
    assert io.files_written == 5
    assert io.files_touched == 2
    assert io.files_deleted == 0
    assert io.put_requests == 5
    assert (io.data_files_after, io.timeline_files_after) == (5, 2)  # 3 base + 1 log + 1 new; 2 commits


def test_the_active_timeline_of_either_table_version() -> None:
    # table version 8: every file of .hoodie/timeline/, the archive in its history/ folder
    assert is_active_instant(".hoodie/timeline/20261102000000000.commit")
    assert not is_active_instant(".hoodie/timeline/history/20261001000000000_20261002000000000.archive")
    # table version 6 (what ODP writes): instant files beside hoodie.properties, the archive in archived/
    assert is_active_instant(".hoodie/20261102000000000.deltacommit.requested")
    assert is_active_instant(".hoodie/20261102000000000.commit")
    assert not is_active_instant(".hoodie/.20261102000000000.commit.crc")
    assert not is_active_instant(".hoodie/hoodie.properties")
    assert not is_active_instant(".hoodie/archived/.commits_.archive.1_1-0-1")
    assert not is_active_instant(".hoodie/metadata/.hoodie/20261102000000000.deltacommit")


def test_a_rewrite_touches_and_deletes_every_old_file(tmp_path: Path) -> None:
    table = tmp_path / "t"
    for index in range(3):
        write(table, f"vendorid=1/part-0000{index}-aaaa.c000.snappy.parquet", 100)
    before = snapshot(tmp_path)
    for index in range(3):
        (table / f"vendorid=1/part-0000{index}-aaaa.c000.snappy.parquet").unlink()
    write(table, "vendorid=1/part-00000-bbbb.c000.snappy.parquet", 310)
    write(table, "_SUCCESS", 0)
    io = table_io(before, snapshot(tmp_path), table)
    assert io.files_deleted == 3
    assert io.files_touched == 3
    assert io.bytes_written == {DATA: 310, LOG: 0, METADATA: 0}
    assert io.files_written == 2


def test_write_amplification_is_bytes_written_over_the_changed_rows_bytes() -> None:
    assert write_amplification(2_010, 500) == 4.02
    assert write_amplification(31_000_000, 10_000) == 3_100.0
    assert write_amplification(100, 0) is None


def test_s3_requests_put_delete_from_files_get_and_list_from_hadoop(tmp_path: Path) -> None:
    assert put_requests(5 * 1024 * 1024) == 1
    assert put_requests(200 * 1024 * 1024) == 4 + 2  # 64 MiB parts, initiate and complete
    table = tmp_path / "t"
    write(table, "a.parquet", 10)
    before = snapshot(tmp_path)
    (table / "a.parquet").unlink()
    write(table, "b.parquet", 10)
    io = table_io(before, snapshot(tmp_path), table)
    local = s3_requests(io, {"file": {"bytes_read": 10, "read_ops": 0, "large_read_ops": 0, "write_ops": 0}})
    assert (local["put"], local["delete"], local["get_or_head"], local["list"]) == (1, 1, None, None)
    assert "counts bytes only" in local["note"]
    s3a = s3_requests(io, {"s3a": {"read_ops": 40, "large_read_ops": 6, "write_ops": 9}})
    assert (s3a["get_or_head"], s3a["list"], s3a["hadoop_write_ops"]) == (34, 6, 9)


def test_table_bytes_read_takes_the_landed_files_off_hadoops_bytes() -> None:
    assert table_bytes_read({"file": {"bytes_read": 10_000}}, 2_500) == 7_500
    assert table_bytes_read({"file": {"bytes_read": 100}}, 2_500) == 0
    assert table_bytes_read({}, 10) is None


def test_fixed_cost_and_cost_per_change_from_a_linear_fit() -> None:
    points = [(1, 2.01), (100, 3.0), (1_000, 12.0), (10_000, 102.0)]  # about 2 s + 0.01 s per change
    fit = fixed_and_marginal(points)
    assert fit["points"] == 4
    assert fit["fixed_seconds"] == pytest.approx(2.0, abs=0.01)
    assert fit["per_change_seconds"] == pytest.approx(0.01, abs=1e-5)
    assert fixed_and_marginal([(20, 3.0), (20, 5.0)]) == {"points": 2, "fixed_seconds": 4.0, "per_change_seconds": None}
    assert fixed_and_marginal([])["fixed_seconds"] is None


def test_step_seconds_are_summarised_per_table_group_by_their_medians() -> None:
    runs = [
        ("fact_10k_01", {"plan": 0.1, "read": 0.4, "write.hudi": 1.0}),
        ("fact_10k_02", {"plan": 0.3, "read": 0.2, "write.hudi": 3.0}),
        ("fact_10k_01", {"plan": 0.2, "read": 0.3, "write.hudi": 2.0, "write.tombstones": 0.5}),
        ("dimension_2m_38", {"plan": 1.5}),
        ("orders", {"plan": 0.7}),  # no trailing number: the name is its group
    ]
    assert step_seconds_by_group(runs) == {
        "dimension_2m": {"runs": 1, "median_seconds": {"plan": 1.5}},
        "fact_10k": {
            "runs": 3,
            "median_seconds": {"plan": 0.2, "read": 0.3, "write.hudi": 2.0, "write.tombstones": 0.5},
        },
        "orders": {"runs": 1, "median_seconds": {"plan": 0.7}},
    }
