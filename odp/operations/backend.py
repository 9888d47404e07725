"""What the operator commands act on: the trackers, the staging objects, the raw tables, the job.

:class:`OperatorBackend` is the one seam: :class:`AwsBackend` (boto3) here, and the sandbox's
(``sandbox/operator.py``: moto over the lake folder's saved state, the job on local Spark), which
``python -m odp --sandbox`` loads by name so ``odp`` never imports the sandbox.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

import boto3

from odp.config.store import TableConfigStore
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.naming import TrackerTableNames, file_processor_job_name
from odp.tracker import (
    EmrServerlessJobRuns,
    FileTracker,
    GlueJobRuns,
    JobRuns,
    JobRunsByEngine,
    ProcessingTracker,
    Trackers,
)


class OperationError(RuntimeError):
    """An operator command cannot go ahead; the message says why and what to do."""


@dataclass(frozen=True)
class StagedObject:
    """One object in the staging bucket (as listed, without its version)."""

    bucket: str
    key: str
    size: int
    etag: str


class OperatorBackend(Protocol):
    """The environment an operator command works in."""

    environment: str
    names: TrackerTableNames
    dynamodb: Any  # boto3 DynamoDB resource
    job_runs: JobRuns | None

    def staged_objects(self, prefix: str) -> list[StagedObject]:
        """Objects of the staging bucket under ``prefix``, in key order."""
        ...

    def raw_root(self, cadence: str) -> str:
        """The job's ``--odp_raw_root`` for this cadence."""
        ...

    def delete_table_data(self, path: str) -> int:
        """Delete everything under a table's base path (``s3://`` or ``file://``); returns how many objects."""
        ...

    def start_run(self, cadence: str, table_ids: list[str], batch_id: str) -> str:
        """Run the File Processor for these tables now; returns what was started (a job run id, a result)."""
        ...


def manual_batch_id(now: datetime | None = None) -> str:
    """A batch id for a run an operator starts: ``manual-<UTC time>-<6 hex>`` (never an execution name)."""
    moment = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    return f"manual-{moment}-{uuid.uuid4().hex[:6]}"


def file_tracker(backend: OperatorBackend) -> FileTracker:
    return Trackers.build(backend.dynamodb, backend.names).files


def processing_tracker(backend: OperatorBackend) -> ProcessingTracker:
    return Trackers.build(backend.dynamodb, backend.names, job_runs=backend.job_runs).processing


def table_configs(backend: OperatorBackend) -> TableConfigStore:
    return TableConfigStore(backend.dynamodb.Table(backend.names.table_config))


def _split_s3(uri: str) -> tuple[str, str]:
    if not uri.startswith("s3://"):
        raise OperationError(f"{uri} is not an s3:// path")
    bucket, _, key = uri.removeprefix("s3://").partition("/")
    return bucket, key


class AwsBackend:
    """An ODP environment on AWS, through boto3 (credentials and region from the usual chain)."""

    def __init__(self, environment: str, *, staging_bucket: str | None = None, region: str | None = None) -> None:
        self.environment = environment
        self.names = TrackerTableNames.for_environment(environment)
        self._session = boto3.session.Session(region_name=region)
        self.dynamodb = self._session.resource("dynamodb")
        self.job_runs: JobRuns | None = JobRunsByEngine(
            GlueJobRuns(self._session.client("glue")), EmrServerlessJobRuns(self._session.client("emr-serverless"))
        )
        self._staging_bucket = staging_bucket

    def staged_objects(self, prefix: str) -> list[StagedObject]:
        if not self._staging_bucket:
            raise OperationError("--staging-bucket is required to list staged files on AWS")
        pages = self._session.client("s3").get_paginator("list_objects_v2")
        found = [
            StagedObject(self._staging_bucket, obj["Key"], int(obj["Size"]), obj["ETag"].strip('"'))
            for page in pages.paginate(Bucket=self._staging_bucket, Prefix=prefix)
            for obj in page.get("Contents", [])
        ]
        return sorted(found, key=lambda o: o.key)

    def raw_root(self, cadence: str) -> str:
        job = self._session.client("glue").get_job(JobName=file_processor_job_name(self.environment, cadence))["Job"]
        root = job.get("DefaultArguments", {}).get(FileProcessorJobArgs.option("raw_root"))
        if not root:
            raise OperationError(f"the Glue job of cadence {cadence} has no {FileProcessorJobArgs.option('raw_root')}")
        return str(root).rstrip("/")

    def delete_table_data(self, path: str) -> int:
        bucket, prefix = _split_s3(path.rstrip("/") + "/")
        s3 = self._session.client("s3")
        deleted = 0
        for keys in _chunks(
            obj["Key"]
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
            for obj in page.get("Contents", [])
        ):
            s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": key} for key in keys], "Quiet": True})
            deleted += len(keys)
        return deleted

    def start_run(self, cadence: str, table_ids: list[str], batch_id: str) -> str:
        job_name = file_processor_job_name(self.environment, cadence)
        run = self._session.client("glue").start_job_run(
            JobName=job_name, Arguments=FileProcessorJobArgs.run_arguments(table_ids, batch_id)
        )
        return f"started Glue job run {run['JobRunId']} of {job_name}"


def _chunks(keys: Iterator[str], size: int = 1000) -> Iterator[list[str]]:
    chunk: list[str] = []
    for key in keys:
        chunk.append(key)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
