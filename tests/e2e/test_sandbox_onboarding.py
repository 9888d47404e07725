"""python -m sandbox onboard: a generated 200-table Debezium source onboarded from one include entry (File Manager
and Configuration Manager on moto), four shards merged into one table and an onboarded table written by the
real File Processor on Spark + Hudi (checked with Spark and hudi-rs against rows written out by hand), the
unmatched prefixes listed by python -m odp status; in the same sandbox run a Debezium Postgres update file with
TOAST placeholders keeps the stored text (a second run), and a Firehose file of DynamoDB Kinesis-form records in
seconds, MILLISECOND and MICROSECOND lands in event order."""

from __future__ import annotations

from pathlib import Path

import pytest

from odp.config.models import DEBEZIUM_UNAVAILABLE_VALUE
from odp.tracker import RunStatus
from sandbox.onboarding_demo import (
    documents_rows,
    documents_update,
    merged_rows,
    run_onboarding_demo,
    session_records,
    session_rows,
    table_rows,
)

TABLES = 200


@pytest.mark.spark
@pytest.mark.slow
def test_a_200_table_source_from_one_entry_four_shards_merged_and_unmatched_listed(
    spark: object, tmp_path: Path, repo_root: Path
) -> None:
    result = run_onboarding_demo(spark, tmp_path / "onboard", repo_root / "config", tables=TABLES, shards=4, write=1)

    # One include entry onboarded every generated table, each with its file landed for its cadence.
    assert (result.onboarded, result.pending) == (TABLES, TABLES)  # pending: before three of them are written
    assert result.run.announced_files == TABLES + 4 + 2 + 2  # + the documents' first file, the Firehose file
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
        "sessions_dynamodb.app.sessions",
        "warehouse.public.documents",
        "warehouse.public.table_000",
        "warehouse.shard_*.orders",
    ]
    for check in result.checks:
        assert check.ok, check
    assert checks["warehouse.shard_*.orders"].actual_rows == 7
    assert checks["warehouse.shard_*.orders"].hudi_rs_rows == 7

    # TOAST: the second run applied the update file whose body is the placeholder; the stored bodies survive
    # (the checks above read them with Spark and hudi-rs).
    assert result.toast_run.announced_files == 1
    documents = result.toast_run.table("warehouse.public.documents")
    assert documents.status is RunStatus.COMPLETED, documents.error
    assert {change["body"] for change in documents_update()} == {DEBEZIUM_UNAVAILABLE_VALUE}
    assert documents_rows() == [
        {"id": 1, "title": "a2", "body": "the long body of document one"},
        {"id": 2, "title": "b3", "body": "the long body of document two"},
    ]
    assert (checks["warehouse.public.documents"].actual_rows, checks["warehouse.public.documents"].hudi_rs_rows) == (
        2,
        2,
    )

    # DynamoDB Kinesis records of all three precisions, out of event order in one Firehose file: each key's
    # latest change by event time (s-1: the seconds record; s-2: the later microsecond of one millisecond).
    sessions = result.run.table("sessions_dynamodb.app.sessions")
    assert sessions.status is RunStatus.COMPLETED, sessions.error
    declared = [record["dynamodb"].get("ApproximateCreationDateTimePrecision") for record in session_records()]
    assert set(declared) == {None, "MILLISECOND", "MICROSECOND"}
    assert session_rows() == [
        {"id": "s-1", "state": "s1-seconds"},
        {"id": "s-2", "state": "s2-micro-900"},
        {"id": "s-3", "state": "s3-milli"},
    ]
    assert checks["sessions_dynamodb.app.sessions"].hudi_rs_rows == 3

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
