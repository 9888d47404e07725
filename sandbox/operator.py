"""The sandbox as an operator backend: ``python -m odp --sandbox <lake> [--staging <folder>] ...``.

moto holds the six tracker tables restored from the lake folder's saved state, and every write is saved
back before the call returns (as a ``sandbox run`` does), so a command's change is there for the next
``sandbox run``. Staged files are the staging folder's; the raw bucket is ``<lake>/raw``; ``retry`` runs
the real File Processor on local Spark for the table, as a Glue job run of its cadence would.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import boto3
from moto import mock_aws

from odp.contracts.file_processor import FileProcessorJobArgs
from odp.naming import TrackerTableNames, file_processor_job_name
from odp.operations.backend import OperationError, StagedObject
from odp.tracker import GlueJobRuns, JobRunRef, JobRuns
from odp.tracker.schema import create_tables
from sandbox import state_store
from sandbox.account import ENVIRONMENT, REGION, STAGING_BUCKET, SandboxLayout, environment_variables
from sandbox.runner import PROCESS_ENVIRONMENT, describe_outcome
from sandbox.staging import BucketMap, hadoop_file_uri, list_objects


class SandboxBackend:
    """The sandbox's trackers, staging folder and lake, for the operator commands."""

    def __init__(self, lake: Path, staging: Path | None) -> None:
        self.environment = ENVIRONMENT
        self.names = TrackerTableNames.for_environment(ENVIRONMENT)
        self._lake = lake
        self._staging = staging
        self.dynamodb: Any = None
        self.job_runs: JobRuns | None = None

    def start(self) -> None:
        """Restore the saved tables into moto and save every write back (call inside the mock)."""
        client = boto3.client("dynamodb", region_name=REGION)
        create_tables(client, self.names)
        state_store.restore_tables(client, list(self.names.as_dict().values()), self._lake)
        state_store.WriteThrough(self._lake, self.names.as_dict().values()).register(boto3._get_default_session())
        self.dynamodb = boto3.resource("dynamodb", region_name=REGION)
        # No Glue job run outlives a sandbox process: a lease holder's run is gone once its process is.
        self.job_runs = GlueJobRuns(boto3.client("glue", region_name=REGION))

    def _layout(self) -> SandboxLayout:
        if self._staging is None:
            raise OperationError("--staging <folder> (or ODP_SANDBOX_STAGING) is required for this command")
        return SandboxLayout(lake=self._lake, staging=self._staging)

    def staged_objects(self, prefix: str) -> list[StagedObject]:
        layout = self._layout()
        return [obj for obj in list_objects(layout.staging, STAGING_BUCKET) if obj.key.startswith(prefix)]

    def raw_root(self, cadence: str) -> str:
        return hadoop_file_uri(self._lake / "raw")

    def delete_table_data(self, path: str) -> int:
        folder = Path(path.removeprefix("file://"))
        if not folder.is_dir():
            return 0
        count = sum(1 for p in folder.rglob("*") if p.is_file())
        shutil.rmtree(folder)
        return count

    def start_run(self, cadence: str, table_ids: list[str], batch_id: str) -> str:
        from etl.file_processor.processor import run_file_processor
        from sandbox.cli import _spark

        layout = self._layout()
        arguments = FileProcessorJobArgs.static_arguments(
            environment=ENVIRONMENT,
            cadence=cadence,
            raw_root=layout.raw_root,
            tracker_tables=self.names,
            catalog_sync=False,
        ) | FileProcessorJobArgs.run_arguments(table_ids, batch_id)
        outcome = run_file_processor(
            _spark(layout.lake),
            FileProcessorJobArgs.from_arguments(arguments),
            dynamodb=self.dynamodb,
            resolve_uri=BucketMap(layout.bucket_folders()).resolve,
            job_run=JobRunRef(file_processor_job_name(ENVIRONMENT, cadence), f"odp-cli-{uuid.uuid4().hex[:8]}"),
        )
        return "; ".join(describe_outcome(table) for table in outcome.tables)


@contextmanager
def sandbox_backend(lake: Path, staging: Path | None) -> Iterator[SandboxBackend]:
    """moto with the lake folder's saved state, for the length of one command.

    Raises:
        OperationError: the folder holds no sandbox state (run ``python -m sandbox run`` first).
    """
    lake = lake.resolve()
    if not (state_store.state_dir(lake) / state_store.DYNAMODB_DIR).is_dir():
        raise OperationError(f"{lake} holds no sandbox state: run python -m sandbox run --lake {lake} first")
    backend = SandboxBackend(lake, staging.resolve() if staging else None)
    with environment_variables(PROCESS_ENVIRONMENT), mock_aws():
        backend.start()
        yield backend
