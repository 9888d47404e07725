"""Glue entry point of the File Processor: parse arguments, build the session, run, exit.

The engine (etl.engine: Glue, EMR Serverless through etl/jobs/emr_serverless.py, or local) parses
FileProcessorJobArgs' names, builds the session and names the job run that holds the leases.
Lists travel as JSON and are never evaluated. Exit status 1 when any table failed.

Warm mode (``--odp_mode warm``, a cadence's ``mode: warm``): the run keeps its JVM and runs the cadence's ticks
itself until a deploy, its lifetime or a stop ends it (etl/file_processor/warm.py, docs/decisions/032).

Harmless mode (the post-deploy canary, ``--odp_table_ids []``): no configured table is touched; the run proves the
packaging (the offline dependencies import, Spark starts with Hudi's configuration), the access (every tracker table
answers DescribeTable through the VPC endpoint: etl/jobs/canary.py) and the write path on this engine: a canary table
of its own, partitioned and MERGE_ON_READ, written through the raw tables' writer, compacted, synced to the catalog,
read back and removed (etl/jobs/canary_table.py). It fails, naming the step, if any of it does not.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any

from etl.jobs.arguments import parse_job_arguments
from etl.jobs.canary import file_processor_checks
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.tracker import JobRunRef

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

    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    argv = list(sys.argv if argv is None else argv)
    engine = engine or detect_engine()
    args = parse_arguments(argv, engine)
    spark = engine.spark_session("odp-file-processor")
    if args.mode == "warm":
        return run_warm_job(spark, args, job_run=engine.job_run(argv))
    if not args.table_ids:
        return run_canary(spark, args, engine=engine.name)
    outcome = run_file_processor(spark, args, job_run=engine.job_run(argv))
    for result in outcome.tables:
        logger.info(
            "%s %s files=%d rows=%d error=%s", result.table_id, result.status, result.files, result.rows, result.error
        )
    return 1 if outcome.failed else 0


def run_warm_job(spark: Any, args: FileProcessorJobArgs, *, job_run: JobRunRef | None) -> int:
    """Warm mode: the cadence's ticks in this JVM until a deploy, the run's lifetime or a stop (SIGTERM, which
    ``glue:BatchStopJobRun`` sends) ends it after its tick (etl/file_processor/warm.py); 0, or 1 when any table
    failed in any tick (each failure is recorded on its table as in a scheduled run).

    Raises:
        etl.file_processor.warm.WarmSettingsError: the cadence is not an active warm cadence in batch_config.
    """
    import signal  # noqa: PLC0415
    import threading  # noqa: PLC0415

    import boto3  # noqa: PLC0415

    from etl.file_processor.warm import run_warm  # noqa: PLC0415 - keep import time free of Spark

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    glue = boto3.client("glue")

    def job_modified() -> str | None:  # glue:GetJob of its own job: every update of the definition changes it
        return str(glue.get_job(JobName=job_run.job_name)["Job"].get("LastModifiedOn")) if job_run else None

    outcome = run_warm(
        spark, args, dynamodb=boto3.resource("dynamodb"), job_modified=job_modified, stop=stop, job_run=job_run
    )
    for result in outcome.failed:
        logger.info("%s %s error=%s", result.table_id, result.status, result.error)
    return 1 if outcome.failed else 0


def run_canary(spark: Any, args: FileProcessorJobArgs, *, engine: str = "local", clients: Any = None) -> int:
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


if __name__ == "__main__":
    sys.exit(main())
