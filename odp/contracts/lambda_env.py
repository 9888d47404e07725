"""Environment variables of the Lambda functions, named in one place.

The CDK constructs set them from :func:`lambda_environment`; the handlers read them with
:func:`tracker_names_from_env`. A missing variable is a deployment error and says which one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields

from odp.contracts.metrics import NAMESPACE
from odp.naming import TrackerTableNames

ENVIRONMENT = "ODP_ENVIRONMENT"
TABLE_PREFIX = "ODP_TABLE_"  # + logical tracker name upper-cased, e.g. ODP_TABLE_FILE_TRACKER
HISTORY_RETENTION_DAYS = "ODP_HISTORY_RETENTION_DAYS"
METRICS_NAMESPACE = "POWERTOOLS_METRICS_NAMESPACE"
SERVICE_NAME = "POWERTOOLS_SERVICE_NAME"
PLAN_BUCKET = "ODP_PLAN_BUCKET"  # the Batch Manager's: where it writes each execution's plan (the artifacts bucket)


class LambdaConfigurationError(RuntimeError):
    """A required environment variable is missing: the function was deployed without it."""


def table_variable(logical: str) -> str:
    return f"{TABLE_PREFIX}{logical.upper()}"


def lambda_environment(environment: str, names: TrackerTableNames, *, service: str) -> dict[str, str]:
    """Every variable a function needs, for the CDK construct."""
    variables = {ENVIRONMENT: environment, SERVICE_NAME: service, METRICS_NAMESPACE: NAMESPACE}
    for logical, physical in names.as_dict().items():
        variables[table_variable(logical)] = physical
    return variables


def batch_manager_environment(environment: str, names: TrackerTableNames, *, plan_bucket: str) -> dict[str, str]:
    """The Batch Manager's variables: every function's, and the bucket it writes the cadences' plans to."""
    return lambda_environment(environment, names, service="batch-manager") | {PLAN_BUCKET: plan_bucket}


def tracker_names_from_env(environ: Mapping[str, str]) -> TrackerTableNames:
    """Table names from the environment.

    Raises:
        LambdaConfigurationError: a table variable is missing (names every missing one).
    """
    wanted = {field.name: table_variable(field.name) for field in fields(TrackerTableNames)}
    missing = [variable for variable in wanted.values() if not environ.get(variable)]
    if missing:
        raise LambdaConfigurationError(f"missing environment variables: {', '.join(missing)}")
    return TrackerTableNames(**{logical: environ[variable] for logical, variable in wanted.items()})
