"""What both functions build once per process, lazily: DynamoDB tables and Powertools Metrics.

Environment variables are read at the first invocation (names in :mod:`odp.contracts.lambda_env`), never at
import, so tests and the local sandbox can set them first and run the handlers under moto.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import boto3
from aws_lambda_powertools import Metrics

from odp.contracts.lambda_env import METRICS_NAMESPACE, PLAN_BUCKET, LambdaConfigurationError, tracker_names_from_env
from odp.contracts.metrics import NAMESPACE
from odp.naming import TrackerTableNames


def dynamodb_tables(environ: Mapping[str, str] | None = None) -> tuple[Any, TrackerTableNames]:
    """A boto3 DynamoDB resource and the tracker table names from the table-name variables.

    Raises:
        odp.contracts.lambda_env.LambdaConfigurationError: a table variable is missing.
    """
    names = tracker_names_from_env(os.environ if environ is None else environ)
    return boto3.resource("dynamodb"), names


def plan_bucket(environ: Mapping[str, str] | None = None) -> str:
    """The bucket of the cadences' plans (the Batch Manager's ``ODP_PLAN_BUCKET``: the artifacts bucket).

    Raises:
        odp.contracts.lambda_env.LambdaConfigurationError: the variable is missing.
    """
    bucket = (os.environ if environ is None else environ).get(PLAN_BUCKET)
    if not bucket:
        raise LambdaConfigurationError(f"missing environment variables: {PLAN_BUCKET}")
    return bucket


def s3_client() -> Any:
    return boto3.client("s3")


def new_metrics(environ: Mapping[str, str] | None = None, *, service: str | None = None) -> Metrics:
    """An EMF Metrics object in the configured namespace (default odp.contracts.metrics.NAMESPACE).

    ``service=""`` leaves out the ``service`` dimension, so a metric's identity is exactly the
    dimensions the function adds (the freshness alarm relies on that).
    """
    env = os.environ if environ is None else environ
    return Metrics(namespace=env.get(METRICS_NAMESPACE) or NAMESPACE, service=service)


def publish_metrics(metrics: Metrics) -> None:
    """Flush the invocation's metrics and always clear them.

    Powertools (3.37) skips the clear when POWERTOOLS_METRICS_DISABLED is set, and its metric set is
    shared by every Metrics object of the process: without this, metrics and dimensions of one
    invocation leak into the next (the sandbox runs many invocations in one process).
    """
    try:
        metrics.flush_metrics()
    finally:
        metrics.clear_metrics()
