"""The dataset job's arguments: one spelling, a round trip, clear errors."""

from __future__ import annotations

import json

import pytest

from etl.jobs.dataset_job import parse_arguments
from odp.contracts.arguments import JobArgumentError
from odp.contracts.datasets import DatasetJobArgs, LakeRoots
from odp.tracker.dataset_run import DatasetRun, RuleOutcome
from odp.tracker.statuses import RunStatus

ROOTS = LakeRoots("s3://raw", "s3://conformed", "s3://purpose-built")


def test_arguments_round_trip_through_the_command_line() -> None:
    args = DatasetJobArgs(ROOTS, config_dir="/opt/config", changed_tables=("a.b.c",), full_refresh=True)
    argv = ["job.py", *(part for pair in args.to_arguments().items() for part in pair)]
    assert parse_arguments(argv) == args


def test_missing_and_malformed_arguments() -> None:
    with pytest.raises(
        JobArgumentError, match=r"^job argument\(s\) --odp_conformed_root, --odp_purpose_built_root required$"
    ):
        DatasetJobArgs.from_arguments({"odp_config_dir": "c", "odp_raw_root": "r"})
    good = DatasetJobArgs(ROOTS).to_arguments()
    with pytest.raises(
        JobArgumentError, match=r"^job argument --odp_datasets must be a JSON list of strings, got '\"x\"'$"
    ):
        DatasetJobArgs.from_arguments({**good, "--odp_datasets": '"x"'})


def test_run_history_item_round_trip() -> None:
    run = DatasetRun(
        dataset="trips_clean",
        zone="conformed",
        status=RunStatus.QUALITY_FAILED,
        refresh="incremental",
        started_at="2026-11-23T16:00:00Z",
        consumed={"a.b.c": "20261123160000000"},
        rows_upserted=3,
        row_count=10,
        rules=(
            RuleOutcome(
                rule="r", type="expression", severity="fail", passed=False, failing_rows=2, examples=({"id": 1},)
            ),
        ),
    )
    item = run.to_history_item(expires_at=123)
    assert (item["dataset"], item["run_at"], item["expires_at"]) == ("trips_clean", "2026-11-23T16:00:00Z", 123)
    assert DatasetRun.from_item(item) == run
    assert run.summary() == "trips_clean: quality_failed (incremental) +3 -0; fail rule r: 2 row(s)"


def test_recorder_writes_history_and_notifies_runs_that_wrote_or_failed(dynamodb) -> None:
    import boto3

    from etl.jobs.dataset_job import recorder
    from odp.naming import DATASET_RUN_HISTORY
    from odp.tracker.dataset_history import DatasetRunHistory, dataset_history_table_name
    from odp.tracker.schema import create_tables

    name = dataset_history_table_name("test")
    create_tables(dynamodb.meta.client, {DATASET_RUN_HISTORY: name})
    sns = boto3.client("sns", region_name="eu-west-1")
    sqs = boto3.client("sqs", region_name="eu-west-1")
    topic = sns.create_topic(Name="alerts")["TopicArn"]
    queue = sqs.create_queue(QueueName="inbox")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn, Attributes={"RawMessageDelivery": "true"})
    args = DatasetJobArgs(ROOTS, history_table=name, topic_arn=topic)
    record = recorder(args, dynamodb=dynamodb, sns=sns)
    failed = DatasetRun(
        dataset="d",
        zone="conformed",
        status=RunStatus.QUALITY_FAILED,
        refresh="full",
        started_at="2026-11-23T16:00:00Z",
        rules=(RuleOutcome(rule="r", type="unique", severity="fail", passed=False, failing_rows=4),),
    )
    quiet = failed.model_copy(update={"status": RunStatus.UP_TO_DATE, "started_at": "2026-11-23T16:10:00Z"})
    record(failed)
    record(quiet)
    assert DatasetRunHistory(dynamodb.Table(name)).runs("d") == [failed, quiet]
    messages = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]
    assert len(messages) == 1
    body = json.loads(messages[0]["Body"])
    assert (body["dataset"], body["status"], body["failed_rules"][0]["failing_rows"]) == ("d", "quality_failed", 4)
    assert body["summary"] == "d: quality_failed (full) +0 -0; fail rule r: 4 row(s)"


def test_configuration_copied_from_s3_loads(aws, repo_root) -> None:
    import boto3

    from etl.jobs.dataset_job import local_config_dir
    from odp.config import load_config

    s3 = boto3.client("s3", region_name="eu-west-1")
    s3.create_bucket(Bucket="artifacts", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
    for path in (repo_root / "config").rglob("*"):
        if path.is_file() and "schema" not in path.parts:
            s3.upload_file(str(path), "artifacts", f"glue/datasets/{path.relative_to(repo_root / 'config')}")
    config = load_config(local_config_dir("s3://artifacts/glue/datasets/", s3=s3))
    assert [d.name for d in config.datasets] == ["trips_clean", "revenue_per_vendor_day"]
    with pytest.raises(FileNotFoundError, match=r"^no configuration under s3://artifacts/nothing/$"):
        local_config_dir("s3://artifacts/nothing/", s3=s3)
