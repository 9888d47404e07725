"""Keep a table's lease alive while a long write runs; find out whether a lease holder's job run has ended."""

from __future__ import annotations

import logging
import threading
from types import TracebackType
from typing import Any, Protocol

from botocore.exceptions import ClientError

from odp.tracker import JobRunRef, LeaseLostError, ProcessingTracker

logger = logging.getLogger(__name__)

# Glue job run states after which the run writes nothing more (SUCCEEDED is left out: a run that
# succeeded released its leases; one that did not is left to the lease expiry).
ENDED_JOB_RUN_STATES = frozenset({"FAILED", "TIMEOUT", "STOPPED", "ERROR"})


class JobRuns(Protocol):
    """Whether a job run has ended: the reason, or None while it may still be running (or is unknown)."""

    def ended(self, job_run: JobRunRef) -> str | None: ...


class GlueJobRuns:
    """Asks Glue (glue:GetJobRun). A run Glue does not know is gone (the sandbox after a kill)."""

    def __init__(self, glue: Any) -> None:
        self._glue = glue

    def ended(self, job_run: JobRunRef) -> str | None:
        try:
            response = self._glue.get_job_run(JobName=job_run.job_name, RunId=job_run.run_id)
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code")
            if code == "EntityNotFoundException":
                return f"job run {job_run.run_id} of {job_run.job_name} no longer exists"
            # Without an answer the lease is left to expire: never take over a run that may be alive.
            logger.warning("could not ask Glue about job run %s of %s: %s", job_run.run_id, job_run.job_name, error)
            return None
        state = response["JobRun"].get("JobRunState")
        if state in ENDED_JOB_RUN_STATES:
            return f"job run {job_run.run_id} of {job_run.job_name} ended {state}"
        return None


class LeaseKeeper:
    """Renews a held lease every third of its length in a daemon thread (use as a context manager).

    A lost lease is remembered; :meth:`check` raises it before the run commits or records anything.
    """

    def __init__(self, tracker: ProcessingTracker, table_id: str, owner: str, *, lease_seconds: int) -> None:
        self._tracker = tracker
        self._table_id = table_id
        self._owner = owner
        self._lease_seconds = lease_seconds
        self._stop = threading.Event()
        self._lost: LeaseLostError | None = None
        self._thread = threading.Thread(target=self._run, name=f"lease-{table_id}", daemon=True)

    @property
    def interval(self) -> float:
        return max(self._lease_seconds / 3, 1.0)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self._tracker.renew(self._table_id, self._owner, lease_seconds=self._lease_seconds)
            except LeaseLostError as error:
                logger.error("lease lost on %s: %s", self._table_id, error)
                self._lost = error
                return

    def check(self) -> None:
        """Raises:
        LeaseLostError: a renewal found the lease taken by another run.
        """
        if self._lost is not None:
            raise self._lost

    def __enter__(self) -> LeaseKeeper:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
