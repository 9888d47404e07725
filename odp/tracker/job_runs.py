"""Whether the Glue job run holding a table's lease has ended, so its lease can be taken over at once."""

from __future__ import annotations

import logging
from typing import Any, Protocol

import boto3
from botocore.exceptions import ClientError

from odp.tracker.items import JobRunRef

logger = logging.getLogger(__name__)

# Glue job run states after which the run writes nothing more (SUCCEEDED is left out: a run that
# succeeded released its leases; one that did not is left to the lease expiry).
ENDED_JOB_RUN_STATES = frozenset({"FAILED", "TIMEOUT", "STOPPED", "ERROR"})


class JobRuns(Protocol):
    """Whether a job run has ended: the reason, or None while it may still be running (or is unknown)."""

    def ended(self, job_run: JobRunRef) -> str | None: ...


class GlueJobRuns:
    """Asks Glue (glue:GetJobRun). A run Glue does not know is gone (the sandbox after a kill)."""

    def __init__(self, glue: Any = None, *, region_name: str | None = None) -> None:
        """``glue``: a boto3 Glue client; without one, it is made at the first question (in ``region_name``)."""
        self._glue = glue
        self._region_name = region_name

    def _client(self) -> Any:
        if self._glue is None:
            self._glue = boto3.client("glue", region_name=self._region_name)
        return self._glue

    def ended(self, job_run: JobRunRef) -> str | None:
        try:
            response = self._client().get_job_run(JobName=job_run.job_name, RunId=job_run.run_id)
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
