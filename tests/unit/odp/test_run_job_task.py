"""The File Processor on EMR Serverless (stepfunctions/file_processor.emr_serverless.asl.json): its task's
entryPointArguments, evaluated the way Step Functions evaluates the intrinsic over a Map item, give
etl/jobs/emr_serverless.py (argparse, EmrServerlessEngine) the same contract a Glue run gets from DefaultArguments
plus the item's Arguments."""

from __future__ import annotations

import json
import re
from dataclasses import replace

from etl.engine.base import argparse_arguments
from odp.contracts.batches import Batch
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.contracts.job_kinds import FILE_PROCESSOR
from odp.contracts.state_machines import (
    EMR_SERVERLESS_RUN_JOB,
    EmrServerlessRun,
    FileProcessorOnEmrServerless,
    entry_point_arguments,
    intrinsic_literal,
)
from odp.naming import TrackerTableNames


def _static() -> dict[str, str]:
    return FileProcessorJobArgs.static_arguments(
        environment="dev",
        cadence="hourly",
        raw_root="s3://odp-dev-raw",
        tracker_tables=TrackerTableNames.for_environment("dev"),
        catalog_sync=True,
        table_concurrency=3,
    )


_ITEM = re.compile(r"\s*(?:'((?:\\.|[^'\\])*)'|States\.JsonToString\(\$\.(\w+)\)|\$\.(\w+))\s*(?:,|$)")


def evaluate_array(expression: str, item: dict) -> list[str]:
    """Step Functions' States.Array over literals, $.field and States.JsonToString($.field) (test's own reading)."""
    assert expression.startswith("States.Array(")
    assert expression.endswith(")")
    body, values, position = expression[len("States.Array(") : -1], [], 0
    while position < len(body):
        match = _ITEM.match(body, position)
        assert match, body[position:]
        literal, json_field, field = match.groups()
        if literal is not None:
            values.append(re.sub(r"\\(.)", r"\1", literal))
        elif json_field is not None:
            values.append(json.dumps(item[json_field], separators=(",", ":")))
        else:
            values.append(item[field])
        position = match.end()
    return values


def test_the_emr_arguments_give_the_job_the_same_contract_as_the_glue_run() -> None:
    static = _static()
    batch = Batch(batch_id="exec-1-0", table_ids=("shop.public.orders", "shop.public.customers"))
    argv = evaluate_array(entry_point_arguments(FILE_PROCESSOR, static), batch.to_payload())
    assert argv[0] == "file_processor"
    on_emr = argparse_arguments(FileProcessorJobArgs, ["emr_serverless.py", *argv[1:]], "test")
    on_glue = FileProcessorJobArgs.from_arguments({**static, **batch.arguments})
    # a Glue run counts its own DPUs (2 G.1X workers); EMR bills vCPU- and GB-seconds: no DPUs to share
    assert (on_glue.job_dpus, on_emr.job_dpus) == (2.0, 0.0)
    assert on_emr == replace(on_glue, job_dpus=0.0)
    assert on_emr.table_ids == ("shop.public.orders", "shop.public.customers")
    assert on_emr.batch_id == "exec-1-0"


def test_literals_are_escaped_for_the_intrinsic_and_tokens_are_left_whole() -> None:
    assert intrinsic_literal("it's {x}\\") == "'it\\'s \\{x\\}\\\\'"
    assert evaluate_array(f"States.Array({intrinsic_literal(chr(39) + '{a}')})", {}) == ["'{a}"]
    assert intrinsic_literal("s3://${Token[TOKEN.12]}") == "'s3://${Token[TOKEN.12]}'"


def test_the_rendered_definition_starts_the_emr_serverless_job_run() -> None:
    run = EmrServerlessRun(
        application_id="00abc",
        execution_role_arn="arn:aws:iam::111111111111:role/exec",
        entry_point="s3://artifacts/emr/emr_serverless.py",
        entry_point_arguments=entry_point_arguments(FILE_PROCESSOR, _static()),
        spark_submit_parameters="--py-files s3://artifacts/glue/file_processor/odp_etl.zip",
        execution_timeout_minutes=30,
    )
    definition = FileProcessorOnEmrServerless(
        alerts_topic_arn="arn:aws:sns:eu-west-1:111111111111:alerts",
        batch_manager_function_arn="arn:aws:lambda:eu-west-1:111111111111:function:bm",
        cadence="hourly",
        max_concurrency=2,
        plan_bucket="odp-dev-artifacts",
        **run.fields(),
    ).render()
    state = definition["States"]["ProcessBatches"]["ItemProcessor"]["States"]["RunFileProcessor"]
    assert state["Resource"] == EMR_SERVERLESS_RUN_JOB
    parameters = state["Parameters"]
    assert parameters["ApplicationId"] == "00abc"
    assert parameters["ExecutionRoleArn"] == "arn:aws:iam::111111111111:role/exec"
    assert parameters["ExecutionTimeoutMinutes"] == 30
    driver = parameters["JobDriver"]["SparkSubmit"]
    assert driver["EntryPoint"] == "s3://artifacts/emr/emr_serverless.py"
    assert driver["SparkSubmitParameters"].startswith("--py-files ")
    assert evaluate_array(driver["EntryPointArguments.$"], {"batch_id": "b", "table_ids": ["t"]})[-4:] == [
        "--odp_table_ids",
        '["t"]',
        "--odp_batch_id",
        "b",
    ]
    assert state["ResultSelector"] == {"job_run_id.$": "$.JobRunId"}
    assert "Glue" not in json.dumps(state["Retry"])
    # the plan's workers: Glue counts the driver's worker, EMR Serverless caps the executors (States.MathAdd n, -1)
    (spark_defaults,) = parameters["ConfigurationOverrides"]["ApplicationConfiguration"]
    assert spark_defaults == {
        "Classification": "spark-defaults",
        "Properties": {
            "spark.dynamicAllocation.maxExecutors.$": "States.Format('{}', States.MathAdd($.number_of_workers, -1))"
        },
    }
