"""Glue entry point of the streaming job: arguments, GlueContext, the Kinesis source, forEachBatch.

Everything else is importable and tested locally: the micro-batch is
:func:`etl.streaming.batch.process_micro_batch`, the source normalisation
:func:`etl.streaming.sources.glue_kinesis_records`. Runs only on Glue (``gluestreaming``, Glue 5.1);
locally the same micro-batch runs under :mod:`etl.streaming.local`.

Harmless mode (the post-deploy canary, ``--odp_canary true``): Spark starts, then
:func:`etl.jobs.canary.streaming_checks` reads the streamed tables' table_config items, the Kinesis
stream's summary and the Glue databases, a canary table of its own is written as a micro-batch writes, compacted,
synced, read back and removed (etl/jobs/canary_table.py), and the job exits before the Kinesis source is created (no
record is read, no checkpoint written). The canary starts it only when no run of it is in progress (one run at a
time: its checkpoint has one writer); a running stream is watched by its alarms instead.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from etl.jobs.arguments import parse_job_arguments
from odp.config.store import TableConfigStore
from odp.contracts.metrics import STREAMING_NAMESPACE
from odp.contracts.streaming import StreamingJobArgs
from odp.tracker import RunLedger

logger = logging.getLogger("etl.jobs.streaming_job")


def kinesis_options(args: StreamingJobArgs) -> dict[str, str]:
    """Connection options of the Kinesis source. No ``classification``: each row keeps the raw ``data``
    (a DynamoDB record whose typed attributes must not go through schema inference)."""
    return {
        "typeOfData": "kinesis",
        "streamARN": args.stream_arn,
        "startingPosition": args.starting_position,
        "emitConsumerLagMetrics": "true",  # glue.driver.streaming.maxConsumerLagInMs in CloudWatch
    }


def batch_options(args: StreamingJobArgs) -> dict[str, str]:
    """forEachBatch options: the window and the checkpoint (Spark's offsets and commits)."""
    return {"windowSize": f"{args.window_seconds} seconds", "checkpointLocation": args.checkpoint_location}


def stream_target(args: StreamingJobArgs, dynamodb: Any) -> Any:
    """The job's :class:`etl.streaming.batch.StreamTarget` over ``dynamodb`` (a boto3 DynamoDB resource): its tables'
    items read from table_config, written with the Glue profile, each table's commit recorded in the run ledger.

    Raises:
        TableConfigNotFoundError: a streamed table has no table_config item.
    """
    from etl.hudi.options import HudiProfile, WriteProfile  # noqa: PLC0415 - keep import time free of Spark
    from etl.streaming.batch import StreamTarget  # noqa: PLC0415

    configs = TableConfigStore(dynamodb.Table(args.table_config_table))
    ledger = RunLedger(dynamodb.Table(args.ledger.tracker), dynamodb.Table(args.ledger.history))
    return StreamTarget(
        stream=args.stream,
        tables=tuple(configs.get(table_id) for table_id in args.table_ids),
        raw_root=args.raw_root,
        error_root=args.error_root,
        catalog_sync=args.catalog_sync,
        profile=WriteProfile(HudiProfile.GLUE),
        ledger=ledger,
    )


def publish_batch_metrics(cloudwatch: Any, stream: str, outcome: Any) -> None:
    """One micro-batch's metrics (in the streaming namespace) through a boto3 CloudWatch client."""
    from etl.streaming.metrics import batch_metric_data  # noqa: PLC0415

    cloudwatch.put_metric_data(Namespace=STREAMING_NAMESPACE, MetricData=batch_metric_data(stream, outcome))


def run_canary(spark: Any, args: StreamingJobArgs, *, clients: Any = None) -> int:
    """Harmless mode: the session runs, table_config, the stream and the catalog answer, then the canary table is
    written as a micro-batch writes (the raw tables' writer, job ``streaming``, the Glue profile), compacted, synced,
    read back and removed (:func:`etl.jobs.canary_table.streaming_canary`); each line logged; 0.

    ``clients``: a boto3 Session-like object (``client(name)``, ``resource(name)``); default boto3's.

    Raises:
        etl.jobs.canary_table.CanaryStepError: a step of the canary table failed (named).
    """
    import boto3  # noqa: PLC0415

    from etl.hudi.options import HudiProfile, WriteProfile  # noqa: PLC0415 - keep import time free of Spark
    from etl.jobs.canary import streaming_checks  # noqa: PLC0415
    from etl.jobs.canary_table import streaming_canary  # noqa: PLC0415

    session = clients or boto3
    spark.range(1).count()  # the session really runs
    table_config = session.resource("dynamodb").Table(args.table_config_table)
    lines = streaming_checks(
        args, table_config=table_config, kinesis=session.client("kinesis"), glue=session.client("glue")
    )
    tables = [TableConfigStore(table_config).get(table_id) for table_id in args.table_ids]
    profile = WriteProfile(HudiProfile.GLUE)  # as stream_target writes
    lines += streaming_canary(spark, args, tables, profile=profile, glue=lambda: session.client("glue"))
    for line in lines:
        logger.info("canary: %s", line)
    return 0


def main(argv: list[str] | None = None) -> int:  # pragma: no cover - runs on Glue only
    """Run the stream until the job is stopped; a micro-batch that cannot write its error location fails it."""
    import boto3  # noqa: PLC0415
    from awsglue.context import GlueContext  # noqa: PLC0415 - only on Glue
    from pyspark.context import SparkContext  # noqa: PLC0415

    from etl.jvm import ready_gateway  # noqa: PLC0415 - keep import time free of Spark
    from etl.streaming.batch import batch_tag, process_micro_batch  # noqa: PLC0415
    from etl.streaming.sources import checkpoint_id, glue_kinesis_records  # noqa: PLC0415

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    argv = list(sys.argv if argv is None else argv)
    args = parse_job_arguments(StreamingJobArgs, argv, "ODP streaming job")
    glue = GlueContext(SparkContext.getOrCreate())  # its own: the Kinesis source is a GlueContext reader
    spark = ready_gateway(glue.spark_session)  # as every engine's session (etl/engine/)
    if args.canary:
        return run_canary(spark, args)
    target = stream_target(args, boto3.resource("dynamodb"))
    cloudwatch = boto3.client("cloudwatch")
    source = glue.create_data_frame.from_options(connection_type="kinesis", connection_options=kinesis_options(args))

    def on_batch(frame: Any, batch_id: int) -> None:
        tag = batch_tag(args.stream, checkpoint_id(spark, args.checkpoint_location), batch_id)
        outcome = process_micro_batch(spark, glue_kinesis_records(frame, args.stream), tag, target)
        logger.info(
            "%s records=%d bad=%d duplicates=%d seconds=%.1f tables=%s",
            tag,
            outcome.records,
            outcome.bad_records,
            outcome.duplicates,
            outcome.seconds,
            [(t.table_id, t.status, t.rows, t.error) for t in outcome.tables],
        )
        publish_batch_metrics(cloudwatch, args.stream, outcome)

    glue.forEachBatch(frame=source, batch_function=on_batch, options=batch_options(args))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
