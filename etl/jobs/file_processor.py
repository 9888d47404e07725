"""Glue entry point of the File Processor: parse arguments, build the session, run, exit.

The engine (etl.engine: Glue, EMR Serverless through etl/jobs/emr_serverless.py, or local) parses
FileProcessorJobArgs' names, builds the session and names the job run that holds the leases.
Lists travel as JSON and are never evaluated. Exit status 1 when any table failed.

Warm mode (``--odp_mode warm``, a cadence's ``mode: warm``): the run keeps its JVM and runs the cadence's ticks
itself until a deploy, its lifetime or a stop ends it (``run_warm_job`` in etl/file_processor/warm.py,
docs/decisions/032).

Harmless mode (the post-deploy canary, ``--odp_table_ids []``): no configured table is touched; the run proves the
packaging (the offline dependencies import, Spark starts with Hudi's configuration), the access (every tracker table
answers DescribeTable through the VPC endpoint) and the write path on this engine: a canary table of its own,
partitioned and MERGE_ON_READ, written through the raw tables' writer, compacted, synced to the catalog, read back and
removed (``run_file_processor_canary`` in etl/jobs/canary.py; the table: etl/jobs/canary_table.py). It fails, naming
the step, if any of it does not.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING

from etl.jobs.arguments import parse_job_arguments
from etl.jobs.canary import run_file_processor_canary
from odp.contracts.file_processor import FileProcessorJobArgs

if TYPE_CHECKING:
    from etl.engine import Engine

logger = logging.getLogger("etl.jobs.file_processor")
# threadName: etl.file_processor.concurrency names each worker thread after its table: every line names it.
LOG_FORMAT = "%(asctime)s %(levelname)s [%(threadName)s] %(name)s %(message)s"


def parse_arguments(argv: list[str], engine: Engine | None = None) -> FileProcessorJobArgs:
    """The job's arguments from the engine's command line.

    Raises:
        JobArgumentError: an argument is missing or malformed.
    """
    return parse_job_arguments(FileProcessorJobArgs, argv, "ODP File Processor", engine)


def main(argv: list[str] | None = None, engine: Engine | None = None) -> int:
    """Run one batch; 0 when every table completed or was skipped, 1 when any failed."""
    from etl.engine import detect_engine  # noqa: PLC0415
    from etl.file_processor.processor import run_file_processor  # noqa: PLC0415 - keep import time free of Spark
    from etl.file_processor.warm import run_warm_job  # noqa: PLC0415

    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    argv = list(sys.argv if argv is None else argv)
    engine = engine or detect_engine()
    args = parse_arguments(argv, engine)
    spark = engine.spark_session("odp-file-processor")
    if args.mode == "warm":
        return run_warm_job(spark, args, job_run=engine.job_run(argv))
    if not args.table_ids:
        return run_file_processor_canary(spark, args, engine=engine.name)
    outcome = run_file_processor(spark, args, job_run=engine.job_run(argv))
    for result in outcome.tables:
        logger.info(
            "%s %s files=%d rows=%d error=%s", result.table_id, result.status, result.files, result.rows, result.error
        )
    return 1 if outcome.failed else 0


if __name__ == "__main__":
    sys.exit(main())
