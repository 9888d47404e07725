"""Glue entry point of the dataset job: parse arguments, read the configuration, build the session, run, exit.

The engine (etl.engine: Glue, EMR Serverless through etl/jobs/emr_serverless.py, or local) parses
DatasetJobArgs' names and builds the session. The configuration is the one every other component reads: the
active datasets in dataset_config and the raw tables they read in table_config (``--odp_dataset_config``,
``--odp_table_config``), as the Configuration Manager loaded them. Exit status 1
when any dataset failed or a ``fail`` quality rule did not hold (so a state machine sees it).

Harmless mode (the post-deploy canary, ``--odp_canary true``): the configuration is read as in a
real run, Spark starts, then :func:`etl.jobs.canary.dataset_checks` reaches the history table, the
datasets' Glue databases and the alerts topic, and a canary table of its own (partitioned, in the first dataset's zone
and database) is written through the datasets' save, synced, read back and removed (etl/jobs/canary_table.py); no
configured dataset is refreshed.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from etl.jobs.arguments import parse_job_arguments
from odp.contracts.datasets import DatasetJobArgs
from odp.tracker.dataset_run import DatasetRun

if TYPE_CHECKING:
    from etl.engine import Engine
    from odp.config.store import DatasetJobConfig

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
    from etl.datasets.lease import dataset_leases, run_owner  # noqa: PLC0415
    from etl.engine import detect_engine  # noqa: PLC0415

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    engine = engine or detect_engine()
    argv_list = list(sys.argv if argv is None else argv)
    args = parse_arguments(argv_list, engine)
    config = read_config(args)
    spark = engine.spark_session("odp-dataset-job")
    if args.canary:
        return run_canary_checks(spark, args, config, engine=engine.name)
    leases = dataset_leases(args, run_owner(), engine.job_run(argv_list))
    outcome = run_datasets(spark, config, args, record=recorder(args), leases=leases)
    return 1 if outcome.failed else 0


def run_canary_checks(
    spark: Any, args: DatasetJobArgs, config: Any, *, engine: str = "local", clients: Any = None
) -> int:
    """Harmless mode: the session runs, every service the job needs answers, then the canary table is written by the
    job's own save, synced, read back and removed (:func:`etl.jobs.canary_table.dataset_canary`); each line logged; 0.

    ``engine``: the engine's name (in the canary table's name: the Glue and the EMR Serverless runs start together);
    ``clients``: a boto3 Session-like object (``client(name)``); default boto3's.

    Raises:
        etl.jobs.canary_table.CanaryStepError: a step of the canary table failed (named).
    """
    import boto3  # noqa: PLC0415 - only on Glue and in the canary's test

    from etl.jobs.canary import dataset_checks  # noqa: PLC0415
    from etl.jobs.canary_table import dataset_canary  # noqa: PLC0415 - keep import time free of Spark

    session = clients or boto3
    spark.range(1).count()  # the session really runs
    databases = [dataset.database for dataset in config.datasets]
    lines = dataset_checks(
        args, databases, dynamodb=session.client("dynamodb"), glue=session.client("glue"), sns=session.client("sns")
    )
    lines += dataset_canary(spark, args, config.datasets, engine=engine, glue=lambda: session.client("glue"))
    for line in lines:
        logger.info("canary: %s", line)
    return 0


def read_config(args: DatasetJobArgs, *, dynamodb: Any = None) -> DatasetJobConfig:
    """The active datasets (dataset_config) and the raw tables they read (table_config), from the tables the
    arguments name (:func:`odp.config.store.dataset_job_config`); ``dynamodb``: a boto3 DynamoDB resource.

    Raises:
        odp.config.store.TableConfigNotFoundError: a raw table a dataset reads has no table_config item.
        pydantic.ValidationError: an item is not one this version reads.
    """
    import boto3  # noqa: PLC0415 - only when the job runs

    from odp.config.store import dataset_job_config  # noqa: PLC0415

    resource = dynamodb or boto3.resource("dynamodb")
    return dataset_job_config(resource.Table(args.table_config_table), resource.Table(args.dataset_config_table))


def recorder(args: DatasetJobArgs, *, dynamodb: Any = None, sns: Any = None) -> Callable[[DatasetRun], None]:
    """What happens to each run, when the job is given where: a run history item (its rules and counts), the run in
    the run ledger (``dataset:<name>``: ``python -m odp status`` lists it beside the tables) and an SNS
    notification."""
    import boto3  # noqa: PLC0415 - only when the job records

    from odp.tracker import iso, utc_now  # noqa: PLC0415
    from odp.tracker.dataset_history import DatasetRunHistory, notification, should_notify  # noqa: PLC0415
    from odp.tracker.ledger import RunLedger  # noqa: PLC0415

    resource = dynamodb or boto3.resource("dynamodb")
    history = DatasetRunHistory(resource.Table(args.history_table)) if args.history_table else None
    ledger = (
        RunLedger(resource.Table(args.ledger.tracker), resource.Table(args.ledger.history))
        if args.ledger.tracker and args.ledger.history
        else None
    )
    topic = (sns or boto3.client("sns")) if args.topic_arn else None

    def record(run: DatasetRun) -> None:
        if history is not None:
            history.record(run)
        if ledger is not None:
            ledger.record(run.as_table_run(finished_at=iso(utc_now())))
        if topic is not None and should_notify(run):
            subject, message = notification(run)
            topic.publish(TopicArn=args.topic_arn, Subject=subject, Message=message)

    return record


if __name__ == "__main__":
    sys.exit(main())
