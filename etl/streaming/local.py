"""The streaming job on this machine: a folder of Kinesis records, Structured Streaming, a real checkpoint.

The same micro-batch function as on Glue (:func:`etl.streaming.batch.process_micro_batch`), driven by
Spark's file source instead of Kinesis (:mod:`etl.streaming.sources`).
"""

from __future__ import annotations

import logging

from pyspark.sql import DataFrame, SparkSession

from etl.streaming.batch import BatchOutcome, StreamTarget, batch_tag, process_micro_batch
from etl.streaming.sources import checkpoint_id, start_local_stream

logger = logging.getLogger(__name__)


def run_local_stream(
    spark: SparkSession,
    source_dir: str,
    checkpoint_location: str,
    target: StreamTarget,
    *,
    files_per_batch: int = 1,
) -> list[BatchOutcome]:
    """Process every file now in ``source_dir`` (``files_per_batch`` per micro-batch) and stop.

    Files already processed under this checkpoint are not read again; a batch that was committed but not
    checkpointed (a crash in between) is replayed by Spark and skipped per table by its commit metadata.

    Raises:
        StreamingQueryException: a micro-batch raised (only when the error location cannot be written).
    """
    outcomes: list[BatchOutcome] = []

    def on_batch(frame: DataFrame, batch_id: int) -> None:
        tag = batch_tag(target.stream, checkpoint_id(spark, checkpoint_location), batch_id)
        outcome = process_micro_batch(spark, frame, tag, target)
        logger.info("%s: %s", tag, outcome)
        outcomes.append(outcome)

    query = start_local_stream(spark, source_dir, checkpoint_location, on_batch, files_per_batch=files_per_batch)
    query.awaitTermination()
    return outcomes
