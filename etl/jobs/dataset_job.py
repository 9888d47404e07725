"""Glue entry point of the dataset job: parse arguments, load the configuration, build the session, run, exit.

The engine (etl.engine: Glue, EMR Serverless through etl/jobs/emr_serverless.py, or local) parses
DatasetJobArgs' names and builds the session. Exit status 1
when any dataset failed or a ``fail`` quality rule did not hold (so a state machine sees it).

Harmless mode (the post-deploy canary, ``--odp_canary true``): the configuration is downloaded as in a
real run, Spark starts, then :func:`etl.jobs.canary.dataset_checks` reaches the history table, the
datasets' Glue databases and the alerts topic, and the job exits without refreshing anything.
"""

from __future__ import annotations

import logging
import sys
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from etl.jobs.arguments import parse_job_arguments
from odp.contracts.datasets import DatasetJobArgs
from odp.tracker.dataset_run import DatasetRun

if TYPE_CHECKING:
    from etl.engine import Engine

logger = logging.getLogger("etl.jobs.dataset_job")


def parse_arguments(argv: list[str], engine: Engine | None = None) -> DatasetJobArgs:
    """The job's arguments from the engine's command line.

    Raises:
        JobArgumentError: an argument is missing or malformed.
    """
    return parse_job_arguments(DatasetJobArgs, argv, "ODP dataset job", engine)


def main(argv: list[str] | None = None, engine: Engine | None = None) -> int:
    """Refresh the selected datasets; 0 when every one was written or up to date."""
    from etl.datasets.job import run_datasets  # noqa: PLC0415 - keep import time free of Spark
    from etl.datasets.lease import dataset_leases  # noqa: PLC0415
    from etl.engine import detect_engine  # noqa: PLC0415
    from odp.config.loader import load_config  # noqa: PLC0415

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    engine = engine or detect_engine()
    argv_list = list(sys.argv if argv is None else argv)
    args = parse_arguments(argv_list, engine)
    config = load_config(local_config_dir(args.config_dir))
    spark = engine.spark_session("odp-dataset-job")
    if args.canary:
        return run_canary_checks(spark, args, config)
    leases = dataset_leases(args, f"datasets-{uuid.uuid4().hex[:12]}", engine.job_run(argv_list))
    outcome = run_datasets(spark, config, args, record=recorder(args), leases=leases)
    return 1 if outcome.failed else 0


def run_canary_checks(spark: Any, args: DatasetJobArgs, config: Any, *, clients: Any = None) -> int:
    """Harmless mode: the session runs, then every service the job needs answers (each line logged); 0.

    ``clients``: a boto3 Session-like object (``client(name)``); default boto3's.
    """
    import boto3  # noqa: PLC0415 - only on Glue and in the canary's test

    from etl.jobs.canary import dataset_checks  # noqa: PLC0415

    session = clients or boto3
    spark.range(1).count()  # the session really runs
    databases = [dataset.database for dataset in config.datasets]
    lines = dataset_checks(
        args, databases, dynamodb=session.client("dynamodb"), glue=session.client("glue"), sns=session.client("sns")
    )
    for line in lines:
        logger.info("canary: %s", line)
    return 0


def local_config_dir(location: str, *, s3: Any = None) -> Path:
    """The configuration folder: ``location`` itself, or a copy of an ``s3://bucket/prefix/`` (on Glue).

    Raises:
        FileNotFoundError: nothing is stored under the S3 prefix.
    """
    if not location.startswith("s3://"):
        return Path(location)
    import boto3  # noqa: PLC0415 - only on Glue

    bucket, _, prefix = location.removeprefix("s3://").partition("/")
    client = s3 or boto3.client("s3")
    target = Path(tempfile.mkdtemp(prefix="odp-config-"))
    found = 0
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            relative = item["Key"][len(prefix) :].lstrip("/")
            if not relative or relative.endswith("/"):
                continue
            path = target / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            # One GetObject per file (small YAML and SQL) in this thread, not download_file's transfer pool.
            path.write_bytes(client.get_object(Bucket=bucket, Key=item["Key"])["Body"].read())
            found += 1
    if not found:
        raise FileNotFoundError(f"no configuration under {location}")
    return target


def recorder(args: DatasetJobArgs, *, dynamodb: Any = None, sns: Any = None) -> Callable[[DatasetRun], None]:
    """What happens to each run: a run history item and an SNS notification, when the job is given them."""
    import boto3  # noqa: PLC0415 - only when the job records

    from odp.tracker.dataset_history import DatasetRunHistory, notification, should_notify  # noqa: PLC0415

    history = (
        DatasetRunHistory((dynamodb or boto3.resource("dynamodb")).Table(args.history_table))
        if args.history_table
        else None
    )
    topic = (sns or boto3.client("sns")) if args.topic_arn else None

    def record(run: DatasetRun) -> None:
        if history is not None:
            history.record(run)
        if topic is not None and should_notify(run):
            subject, message = notification(run)
            topic.publish(TopicArn=args.topic_arn, Subject=subject, Message=message)

    return record


if __name__ == "__main__":
    sys.exit(main())
