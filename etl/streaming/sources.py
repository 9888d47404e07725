"""Stream sources, normalised to what a micro-batch takes: ``data`` (text), ``sequence_number``, ``shard``.

- Glue: the Kinesis source of ``glueContext.create_data_frame.from_options(connection_type="kinesis")``
  read without a classification, so each row keeps the record's raw ``data`` (bytes) beside its
  ``sequenceNumber``. AWS Glue's "Kinesis connections" page documents the connection options
  (``streamARN``, ``startingPosition``, ``classification``, ``inferSchema``, ``addRecordTimestamp`` ->
  an extra ``__src_timestamp`` column, ``emitConsumerLagMetrics``) but, in what we could read, not the
  columns of an unparsed record. Those are the Spark Kinesis source's schema as AWS's own connector
  documents it (awslabs/spark-sql-kinesis-connector README, "Check Schema"; the same in qubole/kinesis-sql):
  ``data`` binary, ``streamName``, ``partitionKey``, ``sequenceNumber`` string,
  ``approximateArrivalTimestamp`` timestamp. No shard column: positions are then per stream. Unconfirmed
  on Glue itself until the deployed job runs once; :func:`glue_kinesis_records` fails naming the
  columns it found if ``data`` is missing.
- Locally: a folder of JSON-lines files standing in for Kinesis. Each line is one Kinesis record exactly
  as a Kinesis event carries it (``{"kinesis": {"data": <base64>, "sequenceNumber": ..., ...},
  "eventID": "shardId-...:<sequence number>", "eventSourceARN": ...}``, the form of
  tests/samples/dynamodb-kinesis/dynamodb-stream.json). A line that is not JSON reaches the batch as
  its own text, so it is set aside as a bad record like any other.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.streaming import StreamingQuery

from etl.jvm import filesystem_path, java_class
from etl.streaming.records import DATA, SEQUENCE_NUMBER, SHARD

CORRUPT = "_corrupt_record"
KINESIS_EVENT_RECORD = T.StructType(
    [
        T.StructField(
            "kinesis",
            T.StructType(
                [
                    T.StructField("data", T.StringType()),
                    T.StructField("sequenceNumber", T.StringType()),
                    T.StructField("partitionKey", T.StringType()),
                ]
            ),
        ),
        T.StructField("eventID", T.StringType()),
        T.StructField("eventSourceARN", T.StringType()),
        T.StructField(CORRUPT, T.StringType()),
    ]
)


def local_records(frame: DataFrame) -> DataFrame:
    """Kinesis event records (parsed with :data:`KINESIS_EVENT_RECORD`) -> data, sequence number, shard."""
    shard = F.when(F.col("eventID").contains(":"), F.substring_index(F.col("eventID"), ":", 1))
    return frame.select(
        F.coalesce(F.unbase64(F.col("kinesis.data")).cast("string"), F.col(CORRUPT)).alias(DATA),
        F.coalesce(F.col("kinesis.sequenceNumber"), F.lit("")).alias(SEQUENCE_NUMBER),
        F.coalesce(shard, F.col("eventSourceARN"), F.lit("")).alias(SHARD),
    )


class KinesisSourceSchemaError(ValueError):
    """Glue's Kinesis source rows lack the raw ``data`` column; the message lists the columns found."""


def glue_kinesis_records(frame: DataFrame, stream: str) -> DataFrame:
    """Glue's Kinesis source rows (no classification: raw ``data``) -> data, sequence number, shard.

    The shard column is taken when the connector provides one (``shardId``), else the stream name stands
    for it (positions are then per stream).

    Raises:
        KinesisSourceSchemaError: no ``data`` column (a classification parsed the records, or the
            connector names it otherwise).
    """
    columns = set(frame.columns)
    if "data" not in columns:
        raise KinesisSourceSchemaError(
            f"stream {stream}: the Kinesis source has no 'data' column (columns: {', '.join(sorted(columns))}); "
            "the job reads records unparsed (no 'classification' in etl.jobs.streaming_job.kinesis_options)"
        )
    sequence = F.col("sequenceNumber") if "sequenceNumber" in columns else F.lit("")
    shard = F.col("shardId") if "shardId" in columns else F.lit(stream)
    return frame.select(F.col("data").cast("string").alias(DATA), sequence.alias(SEQUENCE_NUMBER), shard.alias(SHARD))


def checkpoint_id(spark: SparkSession, checkpoint_location: str) -> str:
    """The streaming query id Spark keeps in ``<checkpoint>/metadata``: the same across restarts of one checkpoint.

    Raises:
        FileNotFoundError: no checkpoint metadata yet (call it from inside a micro-batch).
    """
    filesystem, path = filesystem_path(spark, f"{checkpoint_location.rstrip('/')}/metadata")
    if not filesystem.exists(path):
        raise FileNotFoundError(f"no streaming checkpoint metadata at {path}")
    stream = filesystem.open(path)
    try:
        text = java_class(spark, "java.io.InputStreamReader")(stream, "UTF-8")
        reader = java_class(spark, "java.io.BufferedReader")(text)
        return str(json.loads(reader.readLine())["id"])
    finally:
        stream.close()


def start_local_stream(
    spark: SparkSession,
    source_dir: str,
    checkpoint_location: str,
    on_batch: Callable[[DataFrame, int], None],
    *,
    files_per_batch: int = 1,
    available_now: bool = True,
) -> StreamingQuery:
    """Spark Structured Streaming over a folder of Kinesis-record files, ``foreachBatch`` -> ``on_batch``.

    ``available_now``: process what is there and stop (tests, the demo); else a 1 s processing-time trigger.
    """
    reader = (
        spark.readStream.schema(KINESIS_EVENT_RECORD)
        .option("columnNameOfCorruptRecord", CORRUPT)
        .option("maxFilesPerTrigger", files_per_batch)
        .json(source_dir)
    )
    writer = local_records(reader).writeStream.option("checkpointLocation", checkpoint_location)
    writer = writer.foreachBatch(on_batch)
    writer = writer.trigger(availableNow=True) if available_now else writer.trigger(processingTime="1 second")
    return writer.start()


def kinesis_event_record(document: dict, sequence_number: str, *, shard: str = "shardId-000000000000") -> dict:
    """One DynamoDB change record in the local source's form: a Kinesis event record with base64 data."""
    data = base64.b64encode(json.dumps(document, separators=(",", ":")).encode()).decode()
    return {
        "kinesis": {
            "kinesisSchemaVersion": "1.0",
            "partitionKey": document.get("eventID", ""),
            "sequenceNumber": sequence_number,
            "data": data,
        },
        "eventSource": "aws:kinesis",
        "eventID": f"{shard}:{sequence_number}",
        "eventName": "aws:kinesis:record",
    }
