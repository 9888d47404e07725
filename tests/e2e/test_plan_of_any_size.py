"""A plan of any size: 20,000 pending tables through the File Processor's real definition
(stepfunctions/file_processor.glue.asl.json) on moto's interpreter, with the real Batch Manager (its handler, over
moto's DynamoDB and S3) and a bound Glue job that fails one batch.

The plan and the per-batch results live in S3 (the Distributed Map's ItemReader and ResultWriter), so every state's
input and output stays far below Step Functions' 256 KiB and the execution's history far below its 25,000 events;
the failed batch is named in the bounded summary and its tables in the whole one. Before (an inline Map over the
plan in the state), the state after the Map of 1,000 pending tables was about 155 KB and 4,000 batches would have
written about 20,000 history events of Map iterations into the execution.

moto is slow per DynamoDB item: the tables and files are seeded through its table model and read by partition
(tests/support/moto_reads.py); its Glue client is shared by the sandbox's patch 6.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from lambdas.batch_manager import handler as batch_manager_handler
from odp.config.items import batch_config_item, table_config_item
from odp.config.loader import OdpConfig, load_config
from odp.config.models import SourceFormat, TableConfig
from odp.contracts.batches import PlanLocation
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.contracts.lambda_env import batch_manager_environment
from odp.contracts.state_machines import FileProcessorOnGlue
from odp.naming import TrackerTableNames
from odp.tracker.schema import create_tables
from sandbox.moto_patches import GlueRunResult, ServiceBindings, bound_services
from tests.support.batch_manager import pending_file
from tests.support.moto_reads import partition_reads, seed_items
from tests.support.paths import AWS_REGION

pytestmark = pytest.mark.slow  # 20,000 tables, 149 child executions on moto's interpreter

TABLES = 20_000
# every_10_minutes as shipped: runs packed toward 6 minutes, at most 200 tables, on 2 workers. A table with one
# 100-byte file is about 2.3 s of work (odp/planning.py) and a run has 360 - 30 - 18 = 312 s for work: 135 tables
# (310.5 s; 136 would be 312.8 s), so 149 runs, the last of 20. (A Map of more than 1,000 items:
# tests/e2e/test_moto_patches.py.)
SHIPPED = {"batch_size": 200, "target_run_minutes": 6, "number_of_workers": 2, "max_workers": 10}
BATCH_SIZE = 135
RUNS = 149
CADENCE = "every_10_minutes"
JOB = "odp-test-file-processor-every_10_minutes"
PLANS = "odp-test-artifacts"
STATE_LIMIT = 256 * 1024  # Step Functions: a state's input or output
HISTORY_LIMIT = 25_000  # Step Functions: events in one execution's history
FAILING = "src.sales.t_01234"  # the bound job fails the batch that holds this table


def table_id(number: int) -> str:
    return f"src.sales.t_{number:05d}"


@pytest.fixture(scope="module")
def repo_config(repo_root: Path) -> OdpConfig:
    return load_config(repo_root / "config")


@pytest.fixture
def account(aws_env: None, repo_config: OdpConfig, monkeypatch: pytest.MonkeyPatch) -> Iterator[TrackerTableNames]:
    """moto with the trackers, 20,000 active tables of one cadence with a landed file each, the plans' bucket and
    the Batch Manager's environment."""
    names = TrackerTableNames.for_environment("test")
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
        create_tables(boto3.client("dynamodb", region_name=AWS_REGION), names)
        # ODP's defaults and what planning reads (cadence, activity): moto copies every item of a page, and a
        # declared schema would triple the table_config pages without changing a plan
        configs = (
            table_config_item(
                TableConfig(
                    source="src",
                    schema_name="sales",
                    table=f"t_{n:05d}",
                    format=SourceFormat.DMS,
                    primary_key=("id",),
                    cadence=CADENCE,
                    database="sales_raw",
                )
            )
            for n in range(TABLES)
        )
        assert seed_items(names.table_config, AWS_REGION, configs) == TABLES
        files = (
            pending_file(table_id(n), "1.parquet", f"2024-05-01T{n // 3600 % 24:02d}:00:00.000Z") for n in range(TABLES)
        )
        assert seed_items(names.file_tracker, AWS_REGION, files) == TABLES
        cadence = repo_config.cadences.cadences[CADENCE]
        item = {**batch_config_item("test", CADENCE, cadence), **SHIPPED}
        boto3.resource("dynamodb", region_name=AWS_REGION).Table(names.batch_config).put_item(Item=item)
        boto3.client("s3", region_name=AWS_REGION).create_bucket(
            Bucket=PLANS, CreateBucketConfiguration={"LocationConstraint": AWS_REGION}
        )
        for variable, value in batch_manager_environment("test", names, plan_bucket=PLANS).items():
            monkeypatch.setenv(variable, value)
        monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
        batch_manager_handler.default_manager.cache_clear()
        yield names
        batch_manager_handler.default_manager.cache_clear()


def run_execution(ran: list[tuple[str, ...]]) -> tuple[str, dict[str, Any]]:
    """One execution of the real definition; returns its ARN and its description."""

    def job(job_name: str, run_id: str, arguments: dict[str, str]) -> GlueRunResult:
        table_ids = tuple(json.loads(arguments[FileProcessorJobArgs.option("table_ids")]))
        ran.append(table_ids)
        return GlueRunResult("FAILED", "out of memory") if FAILING in table_ids else GlueRunResult("SUCCEEDED")

    bindings = ServiceBindings(lambdas={"batch-manager": batch_manager_handler.handler}, glue_jobs={JOB: job})
    definition = FileProcessorOnGlue(
        alerts_topic_arn=boto3.client("sns").create_topic(Name="alerts")["TopicArn"],
        batch_manager_function_arn="arn:aws:lambda:eu-west-1:123456789012:function:batch-manager",
        cadence=CADENCE,
        max_concurrency=4,
        job_name=JOB,
        plan_bucket=PLANS,
    ).render()
    boto3.client("glue").create_job(
        Name=JOB, Role="arn:aws:iam::123456789012:role/glue", Command={"Name": "glueetl", "ScriptLocation": "s3://a/b"}
    )
    sfn = boto3.client("stepfunctions")
    with bound_services(bindings), partition_reads():
        machine = sfn.create_state_machine(
            name=JOB, definition=json.dumps(definition), roleArn="arn:aws:iam::123456789012:role/sfn"
        )
        execution = sfn.start_execution(stateMachineArn=machine["stateMachineArn"], name="tick-1", input="{}")
        deadline = time.monotonic() + 900
        while (described := sfn.describe_execution(executionArn=execution["executionArn"]))["status"] == "RUNNING":
            assert time.monotonic() < deadline, "the execution did not end in 15 minutes"
            time.sleep(0.5)
    return execution["executionArn"], described


def history(execution_arn: str) -> list[dict[str, Any]]:
    pages = boto3.client("stepfunctions").get_paginator("get_execution_history")
    return [event for page in pages.paginate(executionArn=execution_arn) for event in page["events"]]


def payload_sizes(events: list[dict[str, Any]]) -> list[int]:
    """The size of every input and output an event of the history carries (what the 256 KiB limit applies to)."""
    sizes = []
    for event in events:
        for key, details in event.items():
            if key.endswith("EventDetails") and isinstance(details, dict):
                sizes += [
                    len(details[field].encode()) for field in ("input", "output") if isinstance(details.get(field), str)
                ]
    return sizes


def test_20000_pending_tables_run_with_every_state_far_below_its_limits(account: TrackerTableNames) -> None:
    ran: list[tuple[str, ...]] = []
    execution_arn, described = run_execution(ran)

    # one failed batch: the execution fails, after every batch ran, with the summary naming it
    assert (described["status"], described.get("error")) == ("FAILED", "FileProcessorFailed"), described
    assert len(ran) == RUNS
    assert [len(batch) for batch in ran].count(BATCH_SIZE) == RUNS - 1  # and one of 20
    assert sorted(table for batch in ran for table in batch) == [table_id(n) for n in range(TABLES)]

    events = history(execution_arn)
    assert len(events) < 100 < HISTORY_LIMIT  # the child executions have their own histories
    sizes = payload_sizes(events)
    assert sizes
    assert max(sizes) < STATE_LIMIT // 4, max(sizes)
    entered = [e["stateEnteredEventDetails"]["name"] for e in events if "stateEnteredEventDetails" in e]
    assert entered[-4:] == ["Summarise", "AllTablesSucceeded", "NotifyFailure", "Failed"]

    state = json.loads(
        next(
            e
            for e in reversed(events)
            if "stateEnteredEventDetails" in e and e["stateEnteredEventDetails"]["name"] == "NotifyFailure"
        )["stateEnteredEventDetails"]["input"]
    )
    assert set(state["plan"]) == {"location", "batches", "tables", "pending"}  # where the plan is, never the plan
    assert (state["plan"]["batches"], state["plan"]["tables"]) == (RUNS, TABLES)
    summary = state["summary"]
    assert (summary["failed_batches"], summary["failed_tables"]) == (1, BATCH_SIZE)
    failed_batch = {table_id(n) for n in range(1215, 1215 + BATCH_SIZE)}  # run 10: tables 9 x 135 to 10 x 135 - 1
    assert FAILING in failed_batch
    # failed first, each with its error, until the answer's bound: the rest only in the whole summary
    assert {row["status"] for row in summary["tables"]} == {"batch_failed"}
    assert {row["table_id"] for row in summary["tables"]} <= failed_batch
    assert summary["tables"][0]["error"].startswith("States.TaskFailed")
    assert summary["omitted_tables"] == TABLES - len(summary["tables"])
    assert summary["changed_tables"] == ["*"]  # past the bound: the datasets state machine refreshes every dataset

    s3 = boto3.client("s3")
    location = PlanLocation.for_execution(PLANS, CADENCE, "tick-1")
    planned = json.loads(s3.get_object(Bucket=PLANS, Key=location.key)["Body"].read())
    assert len(planned) == RUNS
    assert {(item["number_of_workers"], item["worker_type"]) for item in planned} == {(2, "G.1X")}
    whole = json.loads(s3.get_object(Bucket=PLANS, Key=location.summary_key)["Body"].read())
    assert len(whole["tables"]) == TABLES
    assert {row["status"] for row in whole["tables"]} == {"batch_failed", "not_run"}  # the bound job records nothing
    assert {row["table_id"] for row in whole["tables"] if row["status"] == "batch_failed"} == failed_batch
