"""One refresh of a dataset at a time on any engine: the dataset lease in processing_tracker (moto, no Spark)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import boto3

from etl.datasets.lease import DatasetLeases, dataset_leases
from odp.config.loader import load_config
from odp.contracts.base import LedgerTables
from odp.contracts.datasets import DatasetJobArgs, LakeRoots, config_tables
from odp.tracker import EmrServerlessJobRuns, JobRunRef, JobRunsByEngine, ProcessingTracker
from odp.tracker.dataset_run import DatasetRun
from odp.tracker.ledger import dataset_subject
from tests.support.emr_runs import moto_emr_run
from tests.support.paths import AWS_REGION

TABLES = config_tables("test")  # the configuration tables (the job reads none here)


class _Clock:
    """A monotonic clock that moves only when the leases sleep."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def _leases(tracker: ProcessingTracker, owner: str, clock: _Clock, job_run: JobRunRef | None = None) -> DatasetLeases:
    emr = EmrServerlessJobRuns(boto3.client("emr-serverless", region_name=AWS_REGION))
    return DatasetLeases(
        tracker,
        owner,
        lease_seconds=900,
        wait_seconds=60,
        job_run=job_run,
        job_runs=JobRunsByEngine(emr=emr, region_name=AWS_REGION),
        poll_seconds=20,
        sleep=clock.sleep,
        monotonic=lambda: clock.now,
    )


def _tracker(tracker_tables: dict[str, Any]) -> ProcessingTracker:
    return ProcessingTracker(tracker_tables["processing_tracker"], None)


def test_a_dataset_held_by_a_running_emr_run_is_waited_for_then_refused_by_name(tracker_tables: dict[str, Any]) -> None:
    tracker, clock = _tracker(tracker_tables), _Clock()
    running = moto_emr_run(cancel=False)
    first = _leases(tracker, "datasets-first", clock, running)
    second = _leases(tracker, "datasets-second", clock)
    with first.held("trips_clean") as refused:
        assert refused is None
        state = tracker.state("dataset:trips_clean")
        assert (state.lease_owner, state.lease_job_run) == ("datasets-first", running)
        with second.held("trips_clean") as second_refused:
            assert second_refused is not None
            assert second_refused.startswith(
                f"leased by another run: datasets-first (job run {running.run_id} of {running.job_name}) holds the "
                "table until "
            )
            assert second_refused.endswith(" (waited 60 s)")
        assert clock.slept == [20, 20, 20]  # polled until the wait ran out
        with second.held("other_dataset") as other:
            assert other is None  # another dataset's lease is its own
    # released when the refresh ended: the next run takes it at once
    assert tracker.state(dataset_subject("trips_clean")).lease_owner is None
    with second.held("trips_clean") as refused:
        assert refused is None


def test_a_dataset_held_by_an_ended_emr_run_is_taken_over_at_once(tracker_tables: dict[str, Any]) -> None:
    tracker, clock = _tracker(tracker_tables), _Clock()
    cancelled = moto_emr_run(cancel=True)
    assert tracker.acquire("dataset:trips_clean", "datasets-crashed", lease_seconds=900, job_run=cancelled)
    with _leases(tracker, "datasets-next", clock).held("trips_clean") as refused:
        assert refused is None
        assert tracker.state("dataset:trips_clean").lease_owner == "datasets-next"
    assert clock.slept == []


def test_a_dataset_held_by_a_live_run_is_refreshed_once_it_is_released(tracker_tables: dict[str, Any]) -> None:
    tracker, clock = _tracker(tracker_tables), _Clock()
    assert tracker.acquire("dataset:trips_clean", "datasets-first", lease_seconds=900)
    later = _leases(tracker, "datasets-second", clock)
    later._sleep = lambda seconds: (clock.sleep(seconds), tracker.release("dataset:trips_clean", "datasets-first"))
    with later.held("trips_clean") as refused:
        assert refused is None
    assert clock.slept == [20]


def test_the_job_leases_only_when_given_the_lease_table(tracker_tables: dict[str, Any], dynamodb: Any) -> None:
    roots = LakeRoots("s3://raw", "s3://conformed", "s3://purpose")
    assert dataset_leases(DatasetJobArgs(roots, **TABLES), "datasets-1", None, dynamodb=dynamodb) is None
    table = tracker_tables["processing_tracker"].name
    leases = dataset_leases(
        DatasetJobArgs(roots, **TABLES, ledger=LedgerTables(table, table), lease_seconds=60),
        "datasets-1",
        None,
        dynamodb=dynamodb,
    )
    assert leases is not None
    with leases.held("trips_clean") as refused:
        assert refused is None
        state = ProcessingTracker(dynamodb.Table(table), None).state("dataset:trips_clean")
        assert state.lease_owner == "datasets-1"
        assert state.lease_expires_at is not None


def test_a_dataset_whose_lease_stays_held_fails_named_and_the_others_still_run(
    tracker_tables: dict[str, Any], repo_root: Path
) -> None:
    from etl.datasets.job import run_datasets

    config = load_config(repo_root / "config")
    tracker, clock = _tracker(tracker_tables), _Clock()
    assert tracker.acquire("dataset:trips_clean", "datasets-first", lease_seconds=900)
    assert tracker.acquire("dataset:revenue_per_vendor_day", "datasets-first", lease_seconds=900)
    recorded: list[DatasetRun] = []
    args = DatasetJobArgs(LakeRoots("s3://raw", "s3://conformed", "s3://purpose"), **TABLES)
    # every dataset is held: nothing reaches Spark (no session is needed), each run is recorded as failed
    outcome = run_datasets(None, config, args, record=recorded.append, leases=_leases(tracker, "datasets-2", clock))
    assert [(r.dataset, r.status.value) for r in outcome.runs] == [
        ("trips_clean", "failed"),
        ("revenue_per_vendor_day", "failed"),
    ]
    assert recorded == list(outcome.runs)
    for run in outcome.runs:
        assert run.run_id == "datasets-2"
        assert run.error is not None
        assert run.error.startswith("not refreshed: leased by another run: datasets-first holds the table until ")
        assert run.error.endswith(" (waited 60 s)")
    assert tracker.state("dataset:trips_clean").lease_owner == "datasets-first"  # never taken from a live run
