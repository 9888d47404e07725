"""Whether the job run holding a table's lease has ended, so its lease can be taken over at once.

A lease holder is a Glue job run (job name + run id) or an EMR Serverless job run (``emr-serverless/<application
id>`` + job run id, etl.engine.emr_serverless); :class:`JobRunsByEngine` asks the service that ran it, so a
cadence moved from one engine to the other never takes over a live run of the other.
"""

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
# EMR Serverless job run states after which the run writes nothing more (SUCCESS left out, as above).
ENDED_EMR_JOB_RUN_STATES = frozenset({"FAILED", "CANCELLED"})
EMR_SERVERLESS_PREFIX = "emr-serverless/"  # the lease holder's job name of an EMR Serverless run


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


class EmrServerlessJobRuns:
    """Asks EMR Serverless (emr-serverless:GetJobRun) about a holder ``emr-serverless/<application id>``."""

    def __init__(self, client: Any = None, *, region_name: str | None = None) -> None:
        self._client = client
        self._region_name = region_name

    def ended(self, job_run: JobRunRef) -> str | None:
        application = job_run.job_name.removeprefix(EMR_SERVERLESS_PREFIX)
        if self._client is None:
            self._client = boto3.client("emr-serverless", region_name=self._region_name)
        try:
            response = self._client.get_job_run(applicationId=application, jobRunId=job_run.run_id)
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
                return f"job run {job_run.run_id} of EMR Serverless application {application} no longer exists"
            logger.warning("could not ask EMR Serverless about run %s of %s: %s", job_run.run_id, application, error)
            return None
        state = response["jobRun"].get("state")
        if state in ENDED_EMR_JOB_RUN_STATES:
            return f"job run {job_run.run_id} of EMR Serverless application {application} ended {state}"
        return None


class JobRunsByEngine:
    """Routes each question to the engine that ran the holder: EMR Serverless by its name prefix, else Glue."""

    def __init__(self, glue: JobRuns | None = None, emr: JobRuns | None = None, *, region_name: str | None = None):
        self.glue = glue or GlueJobRuns(region_name=region_name)
        self.emr = emr or EmrServerlessJobRuns(region_name=region_name)

    def ended(self, job_run: JobRunRef) -> str | None:
        if job_run.job_name.startswith(EMR_SERVERLESS_PREFIX):
            return self.emr.ended(job_run)
        return self.glue.ended(job_run)
