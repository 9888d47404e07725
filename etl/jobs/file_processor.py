"""Glue entry point of the File Processor: parse arguments, build the session, run, exit.

On Glue (``awsglue`` importable): getResolvedOptions over FileProcessorJobArgs' names
(etl.jobs.arguments) and a GlueContext session. Elsewhere: argparse over the same names and the local
Spark + Hudi session.
Lists travel as JSON and are never evaluated. Exit status 1 when any table failed.

Harmless mode (the post-deploy canary, ``--odp_table_ids []``): no table is touched; the run proves the
packaging (the offline dependencies import, Spark starts with Hudi's configuration) and the access
(every tracker table answers DescribeTable through the VPC endpoint: etl/jobs/canary.py), and fails if
either does not.
"""

from __future__ import annotations

import importlib.util
import logging
import sys

from etl.jobs.arguments import parse_job_arguments
from etl.jobs.canary import file_processor_checks
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.tracker import JobRunRef

logger = logging.getLogger("etl.jobs.file_processor")
# threadName: etl.file_processor.concurrency names each worker thread after its table: every line names it.
LOG_FORMAT = "%(asctime)s %(levelname)s [%(threadName)s] %(name)s %(message)s"


def parse_arguments(argv: list[str]) -> FileProcessorJobArgs:
    """The job's arguments from a Glue or local command line.

    Raises:
        JobArgumentError: an argument is missing or malformed.
    """
    return parse_job_arguments(FileProcessorJobArgs, argv, "ODP File Processor (local run)")


def job_run_of(argv: list[str]) -> JobRunRef | None:
    """The Glue job run this process is: Glue passes ``--JOB_NAME`` and ``--JOB_RUN_ID`` to every script."""
    values: dict[str, str] = {}
    for name in ("JOB_NAME", "JOB_RUN_ID"):
        flag = f"--{name}"
        for index, arg in enumerate(argv[:-1]):
            if arg == flag:
                values[name] = argv[index + 1]
    if len(values) < 2:
        return None
    return JobRunRef(values["JOB_NAME"], values["JOB_RUN_ID"])


def main(argv: list[str] | None = None) -> int:
    """Run one batch; 0 when every table completed or was skipped, 1 when any failed."""
    from etl.file_processor.processor import run_file_processor  # noqa: PLC0415 - keep import time free of Spark

    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    argv = list(sys.argv if argv is None else argv)
    args = parse_arguments(argv)
    if importlib.util.find_spec("awsglue") is not None:
        from awsglue.context import GlueContext  # noqa: PLC0415 - only on Glue
        from pyspark.context import SparkContext  # noqa: PLC0415

        spark = GlueContext(SparkContext.getOrCreate()).spark_session
    else:
        from etl.spark_session import local_spark_session  # noqa: PLC0415

        spark = local_spark_session("odp-file-processor")
    if not args.table_ids:
        import boto3  # noqa: PLC0415

        spark.range(1).count()  # the session really runs
        for line in file_processor_checks(args, boto3.client("dynamodb")):
            logger.info("canary: %s", line)
        return 0
    outcome = run_file_processor(spark, args, job_run=job_run_of(argv))
    for result in outcome.tables:
        logger.info(
            "%s %s files=%d rows=%d error=%s", result.table_id, result.status, result.files, result.rows, result.error
        )
    return 1 if outcome.failed else 0


if __name__ == "__main__":
    sys.exit(main())
