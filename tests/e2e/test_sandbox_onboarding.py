"""python -m sandbox onboard: a generated 200-table Debezium source onboarded from one include entry (File Manager
and Configuration Manager on moto), four shards merged into one table and three onboarded tables written by the
real File Processor on Spark + Hudi (checked with Spark and hudi-rs against rows written out by hand), and the
unmatched prefixes listed by python -m odp status."""

from __future__ import annotations

from pathlib import Path

import pytest

from odp.tracker import RunStatus
from sandbox.onboarding_demo import merged_rows, run_onboarding_demo, table_rows

TABLES = 200


@pytest.mark.spark
def test_a_200_table_source_from_one_entry_four_shards_merged_and_unmatched_listed(
    spark: object, tmp_path: Path, repo_root: Path
) -> None:
    result = run_onboarding_demo(spark, tmp_path / "onboard", repo_root / "config", tables=TABLES, shards=4, write=3)

    # One include entry onboarded every generated table, each with its file landed for its cadence.
    assert (result.onboarded, result.pending) == (TABLES, TABLES)  # pending: before three of them are written
    assert result.run.announced_files == TABLES + 4 + 2
    # The merged table: one run, one commit of every shard's file.
    merged = result.run.table("warehouse.shard_*.orders")
    assert merged.status is RunStatus.COMPLETED, merged.error
    assert (merged.run.files, merged.run.deletes) == (4, 1)
    assert merged_rows(4) == [
        {"shard": "shard_001", "order_id": 1, "status": "new"},
        {"shard": "shard_001", "order_id": 2, "status": "new"},
        {"shard": "shard_002", "order_id": 2, "status": "new"},
        {"shard": "shard_003", "order_id": 1, "status": "new"},
        {"shard": "shard_003", "order_id": 2, "status": "shipped"},
        {"shard": "shard_004", "order_id": 1, "status": "new"},
        {"shard": "shard_004", "order_id": 2, "status": "new"},
    ]
    assert table_rows(7) == [{"id": 1, "name": "table_007-a2"}, {"id": 2, "name": "table_007-b"}]
    checks = {check.table_id: check for check in result.checks}
    assert sorted(checks) == [
        "warehouse.public.table_000",
        "warehouse.public.table_001",
        "warehouse.public.table_002",
        "warehouse.shard_*.orders",
    ]
    for check in result.checks:
        assert check.ok, check
    assert checks["warehouse.shard_*.orders"].actual_rows == 7
    assert checks["warehouse.shard_*.orders"].hudi_rs_rows == 7

    # The files no glob takes: reported by the run, counted, and listed by python -m odp status.
    assert sorted(result.run.skipped_files) == [
        "warehouse/audit/log/changes+0+0000000000.json",
        "warehouse/public/tmp_import/a.json",
    ]
    assert all("kept as unmatched" in reason for reason in result.run.skipped_files.values())
    assert result.status.splitlines()[-1] == (
        "unmatched: 2 file(s) under 2 prefix(es) no entry or rule takes: warehouse/audit/log/, "
        "warehouse/public/tmp_import/ (python -m odp status --unmatched)"
    )
    listed = result.unmatched.splitlines()
    assert listed[0].startswith("2 unmatched prefix(es): add an entry or an include glob")
    assert [line.split()[:2] for line in listed[2:]] == [
        ["warehouse/audit/log/", "1"],
        ["warehouse/public/tmp_import/", "1"],
    ]
    assert result.ok
