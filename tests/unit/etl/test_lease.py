"""The lease keeper renews a held lease and notices when another run took it (moto, no Spark)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import boto3
import pyarrow as pa
import pytest
from moto.glue.models import glue_backends

from etl.file_processor.lease import LeaseKeeper
from etl.file_processor.processor import run_file_processor
from odp.tracker import GlueJobRuns, JobRunRef, LeaseLostError, ProcessingTracker, RunStatus, iso
from tests.support.lake import Lake, small_table_config
from tests.support.paths import AWS_REGION

CDC = pa.schema([("Op", pa.string()), ("SEQ", pa.string()), ("ID", pa.int32())])


def test_lease_keeper_renews_then_reports_a_lost_lease(tracker_tables: dict[str, Any]) -> None:
    tracker = ProcessingTracker(tracker_tables["processing_tracker"], tracker_tables["processing_tracker_history"])
    assert tracker.acquire("a.b.c", "run-1", lease_seconds=3)
    first_expiry = tracker.state("a.b.c").lease_expires_at
    with LeaseKeeper(tracker, "a.b.c", "run-1", lease_seconds=3) as keeper:
        time.sleep(2.2)  # renews every second
        keeper.check()
        assert tracker.state("a.b.c").lease_expires_at > first_expiry
        tracker_tables["processing_tracker"].update_item(
            Key={"table_id": "a.b.c"},
            UpdateExpression="SET lease_owner = :other",
            ExpressionAttributeValues={":other": "run-2"},
        )
        time.sleep(1.5)
        with pytest.raises(LeaseLostError):
            keeper.check()


JOB = "odp-test-file-processor"


def _glue_run(state: str | None) -> JobRunRef:
    """A job run in moto's Glue; ``state`` set as the run would end it (None: leave it to moto)."""
    glue = boto3.client("glue", region_name=AWS_REGION)
    if JOB not in glue.list_jobs()["JobNames"]:
        glue.create_job(Name=JOB, Role="arn:aws:iam::123456789012:role/glue", Command={"Name": "glueetl"})
    run_id = glue.start_job_run(JobName=JOB)["JobRunId"]
    if state is not None:
        account = boto3.client("sts", region_name=AWS_REGION).get_caller_identity()["Account"]
        glue_backends[account][AWS_REGION].get_job_run(JOB, run_id).status = state
    return JobRunRef(JOB, run_id)


@pytest.mark.parametrize("state", ["FAILED", "TIMEOUT", "STOPPED"])
def test_a_glue_job_run_that_ended_badly_is_ended(aws: None, state: str) -> None:
    job_run = _glue_run(state)
    assert GlueJobRuns(boto3.client("glue", region_name=AWS_REGION)).ended(job_run) == (
        f"job run {job_run.run_id} of {JOB} ended {state}"
    )


@pytest.mark.parametrize("state", ["RUNNING", "STARTING", "SUCCEEDED"])
def test_a_running_or_succeeded_job_run_is_not_ended(aws: None, state: str) -> None:
    job_run = _glue_run(state)
    assert GlueJobRuns(boto3.client("glue", region_name=AWS_REGION)).ended(job_run) is None


def test_a_job_run_glue_does_not_know_is_gone(aws: None) -> None:
    _glue_run(None)
    gone = JobRunRef(JOB, "jr_killed_sandbox_run")
    assert GlueJobRuns(boto3.client("glue", region_name=AWS_REGION)).ended(gone) == (
        f"job run jr_killed_sandbox_run of {JOB} no longer exists"
    )


def _hold_lease(lake: Lake, table_id: str, job_run: JobRunRef) -> ProcessingTracker:
    tracker = ProcessingTracker(lake.tables["processing_tracker"], lake.tables["processing_tracker_history"])
    assert tracker.acquire(table_id, "crashed-run", lease_seconds=900, run_id="crashed-run", job_run=job_run)
    return tracker


@pytest.mark.spark
@pytest.mark.parametrize("state", ["FAILED", None])  # None: the run is unknown to Glue (gone)
def test_a_lease_held_by_an_ended_job_run_is_taken_over_at_once(spark, lake: Lake, state: str | None) -> None:
    config = lake.configure(small_table_config("lease_takeover"))
    lake.land_parquet(config, "20260101-000001.parquet", [{"Op": "I", "SEQ": "1", "ID": 1}], CDC)
    holder = _glue_run(state) if state else JobRunRef(JOB, "jr_gone")
    tracker = _hold_lease(lake, config.table_id, holder)
    me = _glue_run("RUNNING")
    outcome = run_file_processor(
        spark, lake.args(config.table_id), dynamodb=lake.dynamodb, resolve_uri=lake.resolve, job_run=me
    )
    result = outcome.tables[0]
    assert result.status is RunStatus.COMPLETED, result.error
    assert result.files == 1
    state_after = tracker.state(config.table_id)
    assert state_after.lease_owner is None  # released by the run that took it over
    assert state_after.last_run.run_id == outcome.run_id


@pytest.mark.spark
def test_a_lease_held_by_a_running_job_run_is_respected_and_named(spark, lake: Lake) -> None:
    config = lake.configure(small_table_config("lease_respected"))
    lake.land_parquet(config, "20260101-000001.parquet", [{"Op": "I", "SEQ": "1", "ID": 1}], CDC)
    holder = _glue_run("RUNNING")
    tracker = _hold_lease(lake, config.table_id, holder)
    expires = iso(datetime.fromtimestamp(tracker.state(config.table_id).lease_expires_at, UTC))
    result = lake.run(spark, config.table_id).tables[0]
    assert result.status is RunStatus.SKIPPED
    assert result.error == (
        f"leased by another run: crashed-run (job run {holder.run_id} of {JOB}) holds the table until {expires}"
    )
    assert len(lake.landed(config.table_id)) == 1
    assert tracker.state(config.table_id).lease_owner == "crashed-run"
