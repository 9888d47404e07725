"""The File Processor: for each table of a batch, landed files -> one Hudi commit -> trackers.

This module is the job: it builds the job's scope once from its arguments (etl.file_processor.run_context), runs
each table (etl.file_processor.table_run: the steps of etl.file_processor.steps inside the table's error
boundary), at most ``table_concurrency`` at once, and publishes the tables' costs.

Each table runs in its own error boundary: its failure is recorded (refresh_error, error and stack
trace on processing_tracker, a history row), its files stay landed, and the next table runs.

A bad file never stalls its table: a file whose content fails (etl.file_processor.poison) is quarantined at
its first failure and the same run commits the table's other files; the run names it (quarantined_files).

Exactly once: the Hudi commit records the ids of the files it consumed (commit extra metadata). A
run first moves landed files that a completed commit already consumed to file_tracker_history
(reconciliation: a previous run crashed between its commit and its tracker update), and only then
reads the rest.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import boto3
from pyspark.sql import SparkSession

from etl.file_processor.concurrency import run_tables
from etl.file_processor.cost import publish_costs
from etl.file_processor.run_context import Clock, JobScope
from etl.file_processor.table_run import run_table
from etl.file_processor.write_budget import RowBudget, job_row_budget
from etl.readers.one_scan import bound_listing_tasks
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.tracker import JobRunRef, JobRuns, JobRunsByEngine, RunStatus, TableRun, utc_now

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class JobOutcome:
    run_id: str
    tables: list[TableRun] = field(default_factory=list)

    @property
    def failed(self) -> list[TableRun]:
        """Tables whose run failed (refresh_error)."""
        return [result for result in self.tables if result.status.failed]


def identity(uri: str) -> str:
    return uri


def run_file_processor(
    spark: SparkSession,
    args: FileProcessorJobArgs,
    *,
    dynamodb: Any = None,
    resolve_uri: Callable[[str], str] | None = None,
    clock: Clock | None = None,
    job_run: JobRunRef | None = None,
    job_runs: JobRuns | None = None,
    cloudwatch: Any = None,
    row_budget: RowBudget | None = None,
) -> JobOutcome:
    """Process every table of ``args.table_ids``, ``args.table_concurrency`` at once (concurrency.py), each
    in its own error boundary. Never raises for a table.

    ``dynamodb`` is a boto3 DynamoDB resource; ``resolve_uri`` maps ``s3://bucket/key`` to what Spark
    reads (identity on Glue; the sandbox maps buckets to folders). ``job_run`` (the job run this is,
    etl.engine) is recorded with each lease; ``job_runs`` answers whether another lease holder's job run
    has ended (default: odp.tracker.JobRunsByEngine, GetJobRun of Glue or of EMR Serverless);
    ``cloudwatch`` (a boto3 client) receives each table run's seconds and DPU-seconds
    (etl.file_processor.cost); ``row_budget`` bounds the input rows of the tables' writes at once
    (default: sized from the Spark configuration, etl.file_processor.write_budget).
    """
    run_id = f"{args.batch_id}-{uuid.uuid4().hex[:12]}"
    dynamodb = dynamodb if dynamodb is not None else boto3.resource("dynamodb")
    job_runs = job_runs if job_runs is not None else JobRunsByEngine(region_name=dynamodb.meta.client.meta.region_name)
    if row_budget is None:
        row_budget = job_row_budget(dict(spark.sparkContext.getConf().getAll()))
    bound_listing_tasks(spark)

    scope = JobScope.from_args(
        spark,
        args,
        run_id=run_id,
        dynamodb=dynamodb,
        resolve_uri=resolve_uri or identity,
        clock=clock or utc_now,
        row_budget=row_budget,
        job_run=job_run,
        job_runs=job_runs,
    )

    def run_one(table_id: str) -> TableRun:
        result = run_table(scope, table_id)
        logger.info("%s: %s", table_id, result)
        return result

    outcome = JobOutcome(run_id=run_id)
    outcome.tables.extend(run_tables(spark, args.table_ids, run_one, concurrency=args.table_concurrency))
    costs = [(r.table_id, r.seconds, r.dpu_seconds) for r in outcome.tables if r.status is not RunStatus.SKIPPED]
    if cloudwatch is None:  # the trackers' region: the job's own
        cloudwatch = boto3.client("cloudwatch", region_name=dynamodb.meta.client.meta.region_name)
    ignored = [(r.table_id, r.ignored_values) for r in outcome.tables if r.ignored_values]
    steps = {r.table_id: r.step_seconds for r in outcome.tables if r.step_seconds}
    publish_costs(cloudwatch, args.cadence, costs, ignored=ignored, per_table=args.table_metrics, steps=steps)
    return outcome
