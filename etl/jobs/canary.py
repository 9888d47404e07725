"""The checks of each job's harmless mode (the post-deploy canary, odp/operations/canary.py), one line each.

A canary run proves what the offline tests cannot: the job's code and offline dependencies load on Glue
(the script and wheels come from S3: a run that starts has reached S3), Spark starts, and each service
the job calls answers through the VPC's endpoints with the job's role. Every check here is read-only;
each raises when the service cannot be reached, so the run fails and the canary names it.

- :func:`file_processor_checks`: every tracker table (DescribeTable); :func:`run_file_processor_canary` runs them and
  the canary table (etl/jobs/canary_table.py), the File Processor's harmless mode.
- :func:`dataset_checks`: the run history table, each dataset's Glue database, the alerts topic.
- :func:`streaming_checks`: each streamed table's table_config item, the Kinesis stream, each Glue database.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from botocore.exceptions import ClientError

from odp.config.store import TableConfigStore
from odp.contracts.datasets import DatasetJobArgs
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.contracts.streaming import StreamingJobArgs

logger = logging.getLogger(__name__)
# What the topic answers a role that may only publish: the request reached SNS (IAM is proven offline).
_REFUSED_BUT_REACHED = {"AuthorizationError", "AuthorizationErrorException", "AccessDenied", "AccessDeniedException"}


def dependency_lines() -> list[str]:
    """The offline dependencies import (the zip of wheels installed on Glue).

    Raises:
        ImportError: one did not install.
    """
    import pydantic  # noqa: PLC0415 - the point is to import them here, on Glue
    import yaml  # noqa: PLC0415

    return [f"pydantic {pydantic.VERSION}", f"PyYAML {yaml.__version__}"]


def table_lines(dynamodb: Any, names: Iterable[str]) -> list[str]:
    """``<table> <status>`` for each DynamoDB table (DescribeTable through the gateway endpoint)."""
    return [f"{name} {dynamodb.describe_table(TableName=name)['Table']['TableStatus']}" for name in names]


def database_lines(glue: Any, databases: Iterable[str]) -> list[str]:
    """``glue database <name>`` for each Glue database the job syncs to (GetDatabase through the Glue endpoint)."""
    return [f"glue database {glue.get_database(Name=name)['Database']['Name']}" for name in sorted(set(databases))]


def topic_line(sns: Any, topic_arn: str) -> str:
    """The topic answers through the SNS endpoint without a message being sent: GetTopicAttributes, whose
    refusal (the job's role may only publish) still proves the route; a timeout or any other error raises."""
    try:
        sns.get_topic_attributes(TopicArn=topic_arn)
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") not in _REFUSED_BUT_REACHED:
            raise
        return f"sns {topic_arn} reached (GetTopicAttributes refused: the role only publishes)"
    return f"sns {topic_arn} reached"


def file_processor_checks(args: FileProcessorJobArgs, dynamodb: Any) -> list[str]:
    """The File Processor's harmless mode (``--odp_table_ids []``): dependencies and every tracker table."""
    return dependency_lines() + table_lines(dynamodb, args.tracker_tables.as_dict().values())


def dataset_checks(args: DatasetJobArgs, databases: Iterable[str], *, dynamodb: Any, glue: Any, sns: Any) -> list[str]:
    """The dataset job's harmless mode (``--odp_canary true``), after its configuration came from DynamoDB:
    dependencies, the run history table, the datasets' Glue databases, the alerts topic."""
    lines = dependency_lines()
    if args.history_table:
        lines += table_lines(dynamodb, [args.history_table])
    lines += database_lines(glue, databases)
    if args.topic_arn:
        lines.append(topic_line(sns, args.topic_arn))
    return lines


def streaming_checks(args: StreamingJobArgs, *, table_config: Any, kinesis: Any, glue: Any) -> list[str]:
    """The streaming job's harmless mode (``--odp_canary true``): dependencies, each streamed table's
    table_config item (a boto3 Table), the Kinesis stream's summary, and the Glue databases it syncs to.

    Raises:
        odp.config.store.TableConfigNotFoundError: a streamed table has no table_config item.
    """
    store = TableConfigStore(table_config)
    tables = [store.get(table_id) for table_id in args.table_ids]
    lines = dependency_lines() + [f"table_config {table.table_id}" for table in tables]
    summary = kinesis.describe_stream_summary(StreamARN=args.stream_arn)["StreamDescriptionSummary"]
    lines.append(f"kinesis {summary['StreamName']} {summary['StreamStatus']}")
    if args.catalog_sync:
        lines += database_lines(glue, [table.database for table in tables])
    return lines


def run_file_processor_canary(
    spark: Any, args: FileProcessorJobArgs, *, engine: str = "local", clients: Any = None
) -> int:
    """Harmless mode: the session runs, every tracker table answers, then the canary table is written, compacted,
    synced, read back and removed (:func:`etl.jobs.canary_table.file_processor_canary`); each line logged; 0.

    ``engine``: the engine's name (the canary table's name has the cadence and the engine); ``clients``: a boto3
    Session-like object (``client(name)``, ``resource(name)``); default boto3's.

    Raises:
        etl.jobs.canary_table.CanaryStepError: a step of the canary table failed (named).
    """
    import boto3  # noqa: PLC0415

    from etl.jobs.canary_table import file_processor_canary  # noqa: PLC0415 - keep import time free of Spark

    session = clients or boto3
    spark.range(1).count()  # the session really runs
    lines = file_processor_checks(args, session.client("dynamodb"))
    table_config = session.resource("dynamodb").Table(args.tracker_tables.table_config)
    lines += file_processor_canary(
        spark, args, engine=engine, table_config=table_config, glue=lambda: session.client("glue")
    )
    for line in lines:
        logger.info("canary: %s", line)
    return 0
