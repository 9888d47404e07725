"""Glue entry point of the File Processor: parse arguments, build the session, run, exit.

On Glue (``awsglue`` importable): getResolvedOptions over FileProcessorJobArgs.argument_names() and a
GlueContext session. Elsewhere: argparse over the same names and the local Spark + Hudi session.
Lists travel as JSON and are never evaluated. Exit status 1 when any table failed.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import sys

from odp.job_contract import FileProcessorJobArgs

logger = logging.getLogger("etl.jobs.file_processor")
# threadName: etl.concurrency names each worker thread after the table it runs, so every line says which table.
LOG_FORMAT = "%(asctime)s %(levelname)s [%(threadName)s] %(name)s %(message)s"


def parse_arguments(argv: list[str]) -> FileProcessorJobArgs:
    """The job's arguments from a Glue or local command line.

    Raises:
        JobArgumentError: an argument is missing or malformed.
    """
    names = FileProcessorJobArgs.argument_names()
    if importlib.util.find_spec("awsglue") is not None:
        from awsglue.utils import getResolvedOptions  # noqa: PLC0415 - only on Glue

        optional = {
            FileProcessorJobArgs.BATCH_ID,
            FileProcessorJobArgs.LEASE_SECONDS,
            FileProcessorJobArgs.HISTORY_RETENTION_DAYS,
            FileProcessorJobArgs.CATALOG_SYNC,
            FileProcessorJobArgs.TABLE_CONCURRENCY,
            FileProcessorJobArgs.HUDI_PROFILE,
            FileProcessorJobArgs.JOB_DPUS,
        }
        present = [name for name in names if name not in optional or f"--{name}" in argv]
        return FileProcessorJobArgs.from_arguments(getResolvedOptions(argv, present))
    parser = argparse.ArgumentParser(description="ODP File Processor (local run)")
    for name in names:
        parser.add_argument(f"--{name}", dest=name)
    known, _ = parser.parse_known_args(argv[1:])
    return FileProcessorJobArgs.from_arguments({k: v for k, v in vars(known).items() if v is not None})


def main(argv: list[str] | None = None) -> int:
    """Run one batch; 0 when every table completed or was skipped, 1 when any failed."""
    from etl.processor import run_file_processor  # noqa: PLC0415 - keep import time free of Spark

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
    outcome = run_file_processor(spark, args)
    for result in outcome.tables:
        logger.info(
            "%s %s files=%d rows=%d error=%s", result.table_id, result.status, result.files, result.rows, result.error
        )
    return 1 if outcome.failed else 0


if __name__ == "__main__":
    sys.exit(main())
