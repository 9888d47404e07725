"""The ingest layer: the tracker tables, the File Manager (file detection) and the Batch Manager (planning)."""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Stack

from infrastructure.foundation.context import DeploymentContext
from infrastructure.ingest.batch_manager import BatchManagerFunction, BatchManagerFunctionProps
from infrastructure.ingest.file_manager import FileManagerFunction, FileManagerFunctionProps
from infrastructure.ingest.tracking import Tracking, TrackingProps


@dataclass(frozen=True)
class Ingest:
    """What the ingest layer built."""

    tracking: Tracking
    file_manager: FileManagerFunction
    batch_manager: BatchManagerFunction


def build_ingest(stack: Stack, context: DeploymentContext, replica_key_arn: str | None) -> Ingest:
    """The trackers (replicated to the DR region when configured) and the two Lambda functions."""
    tracking = Tracking(
        stack,
        "Tracking",
        TrackingProps(
            environment=context.name,
            key=context.state_key,
            removal_policy=context.removal_policy,
            dr_region=context.environment.dr_region,
            replica_key_arn=replica_key_arn,
        ),
    )
    # What both functions share (FunctionOwnerProps of infrastructure/ingest/lambda_function.py).
    functions = {
        "environment": context.name,
        "tracking": tracking,
        "key": context.state_key,
        "code_dir": context.assets.lambda_code,
        "removal_policy": context.removal_policy,
        "log_retention": context.log_retention,
    }
    sources = [table.source for table in context.config.tables]
    file_manager = FileManagerFunction(
        stack, "FileManager", FileManagerFunctionProps(staging=context.storage.staging, sources=sources, **functions)
    )
    batch_manager = BatchManagerFunction(
        stack, "BatchManager", BatchManagerFunctionProps(plans=context.storage.buckets["artifacts"], **functions)
    )
    return Ingest(tracking, file_manager, batch_manager)
