"""The post-deploy canary: it starts every File Processor job in harmless mode and waits; the job's
harmless mode touches no table and fails when a tracker table cannot be reached."""

from __future__ import annotations

import json

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from etl.jobs.file_processor import canary_checks
from infrastructure.canary import CANARY_ARGUMENTS, run_canary
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.naming import TrackerTableNames


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_the_canary_starts_each_job_with_no_tables_and_waits_for_success(aws_env) -> None:
    with mock_aws():
        glue = boto3.client("glue", region_name="eu-west-1")
        for name in ("odp-dev-file-processor-a", "odp-dev-file-processor-b"):
            glue.create_job(Name=name, Role="arn:aws:iam::123456789012:role/g", Command={"Name": "glueetl"})
        clock = _Clock()
        assert (
            run_canary(
                glue,
                ["odp-dev-file-processor-a", "odp-dev-file-processor-b"],
                timeout_seconds=600,
                sleep=clock.sleep,
                clock=clock,
            )
            == []
        )
        runs = glue.get_job_runs(JobName="odp-dev-file-processor-a")["JobRuns"]
        assert len(runs) == 1
        assert runs[0]["Arguments"] == CANARY_ARGUMENTS
    assert json.loads(CANARY_ARGUMENTS[FileProcessorJobArgs.option("table_ids")]) == []


class _FailingGlue:
    """Glue's answers for a run that fails (moto's job runs always succeed; boto3's parameter names)."""

    def start_job_run(self, JobName: str, Arguments: dict) -> dict:
        return {"JobRunId": "jr_1"}

    def get_job_run(self, JobName: str, RunId: str) -> dict:
        return {"JobRun": {"JobRunState": "FAILED", "ErrorMessage": "ModuleNotFoundError: No module named 'pydantic'"}}


def test_a_failed_run_is_named_with_glues_message() -> None:
    clock = _Clock()
    assert run_canary(
        _FailingGlue(), ["odp-dev-file-processor-a"], timeout_seconds=60, sleep=clock.sleep, clock=clock
    ) == ["odp-dev-file-processor-a run jr_1 ended FAILED: ModuleNotFoundError: No module named 'pydantic'"]


def _args(names: TrackerTableNames) -> FileProcessorJobArgs:
    arguments = FileProcessorJobArgs.static_arguments(
        environment="dev",
        cadence="hourly",
        raw_root="s3://raw",
        tracker_tables=names,
        catalog_sync=False,
        history_retention_days=30,
    )
    arguments.update(CANARY_ARGUMENTS)
    return FileProcessorJobArgs.from_arguments({k.removeprefix("--"): v for k, v in arguments.items()})


def test_harmless_mode_checks_every_tracker_table_and_fails_when_one_is_missing(aws_env) -> None:
    names = TrackerTableNames.for_environment("dev")
    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name="eu-west-1")
        args = _args(names)
        assert args.table_ids == ()
        with pytest.raises(ClientError, match="ResourceNotFoundException"):
            canary_checks(args, dynamodb)
        for name in names.as_dict().values():
            dynamodb.create_table(
                TableName=name,
                KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
                AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
                BillingMode="PAY_PER_REQUEST",
            )
        lines = canary_checks(args, dynamodb)
    assert lines[0].startswith("pydantic ")
    assert lines[1].startswith("PyYAML ")
    assert lines[2:] == [f"{name} ACTIVE" for name in names.as_dict().values()]
