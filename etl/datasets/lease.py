"""One refresh of a dataset at a time, on any engine: a lease per dataset in processing_tracker.

Glue's ``MaxConcurrentRuns`` 1 keeps two Glue dataset runs apart; EMR Serverless has no such limit, and two
cadences finishing together start two datasets executions. So every dataset job run (Glue, EMR Serverless,
local when given ``--odp_ledger_tracker``) takes the dataset's lease before it refreshes it, with the File
Processor's lease routine (:meth:`odp.tracker.ProcessingTracker.take`, :class:`etl.file_processor.lease.LeaseKeeper`)
under the key ``dataset:<name>`` (:func:`odp.tracker.ledger.dataset_subject`): the lease records
the engine's job run, a lease of an ended run (glue:GetJobRun / emr-serverless:GetJobRun) is taken over at
once, a live one is waited for (``--odp_lease_wait_seconds``) and an expired one taken over.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from etl.file_processor.lease import LeaseKeeper
from odp.contracts.datasets import DatasetJobArgs
from odp.tracker import JobRunRef, JobRuns, JobRunsByEngine, ProcessingTracker
from odp.tracker.ledger import dataset_subject

logger = logging.getLogger(__name__)
POLL_SECONDS = 30.0


class DatasetLeases:
    """Takes, keeps and releases the lease of each dataset this run refreshes (owner: the run's id)."""

    def __init__(
        self,
        tracker: ProcessingTracker,
        owner: str,
        *,
        lease_seconds: int,
        wait_seconds: int,
        job_run: JobRunRef | None = None,
        job_runs: JobRuns | None = None,
        poll_seconds: float = POLL_SECONDS,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.tracker = tracker
        self.owner = owner
        self.lease_seconds = lease_seconds
        self.wait_seconds = wait_seconds
        self.job_run = job_run
        self.job_runs = job_runs
        self.poll_seconds = poll_seconds
        self._sleep = sleep
        self._monotonic = monotonic

    def take(self, dataset: str) -> str | None:
        """Take the dataset's lease, waiting up to ``wait_seconds`` for a live holder; None when taken, else
        why not (the holder and its expiry)."""
        lease_id = dataset_subject(dataset)
        deadline = self._monotonic() + self.wait_seconds
        while True:
            answer = self.tracker.take(
                lease_id, self.owner, lease_seconds=self.lease_seconds, job_runs=self.job_runs, job_run=self.job_run
            )
            if answer.took_over is not None:
                logger.warning("%s: %s", lease_id, answer.took_over)
            if answer.taken:
                return None
            if self._monotonic() >= deadline:
                return f"{answer.refused} (waited {self.wait_seconds} s)"
            logger.info("%s: waiting for the lease: %s", lease_id, answer.refused)
            self._sleep(self.poll_seconds)

    @contextmanager
    def held(self, dataset: str) -> Iterator[str | None]:
        """Inside: the lease is held and renewed (yields None), or was not obtained (yields why not)."""
        refused = self.take(dataset)
        if refused is not None:
            yield refused
            return
        lease_id = dataset_subject(dataset)
        try:
            with LeaseKeeper(self.tracker, lease_id, self.owner, lease_seconds=self.lease_seconds):
                yield None
        finally:
            if not self.tracker.release(lease_id, self.owner):
                logger.error("%s: the lease was no longer held by %s when the refresh ended", lease_id, self.owner)


def run_owner() -> str:
    """The owner a dataset job run takes its leases as: ``datasets-<12 hex digits>``, new for each run."""
    return f"datasets-{uuid.uuid4().hex[:12]}"


def dataset_leases(
    args: DatasetJobArgs,
    owner: str,
    job_run: JobRunRef | None,
    *,
    dynamodb: Any = None,
    job_runs: JobRuns | None = None,
) -> DatasetLeases | None:
    """The run's leases on the ledger's tracker (processing_tracker); None when the job is given no ledger.

    ``dynamodb``: a boto3 DynamoDB resource (default boto3's); ``job_runs``: default JobRunsByEngine (GetJobRun of
    Glue or EMR Serverless, whichever ran the holder)."""
    if not args.ledger.tracker:
        return None
    import boto3  # noqa: PLC0415 - only when the job leases

    resource = dynamodb if dynamodb is not None else boto3.resource("dynamodb")
    return DatasetLeases(
        ProcessingTracker(resource.Table(args.ledger.tracker), None),
        owner,
        lease_seconds=args.lease_seconds,
        wait_seconds=args.lease_wait_seconds,
        job_run=job_run,
        job_runs=job_runs
        if job_runs is not None
        else JobRunsByEngine(region_name=resource.meta.client.meta.region_name),
    )
