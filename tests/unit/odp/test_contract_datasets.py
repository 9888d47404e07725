"""The dataset job's arguments: one spelling, a round trip, clear errors."""

from __future__ import annotations

import json

import pytest

from etl.jobs.dataset_job import parse_arguments
from odp.contracts.arguments import JobArgumentError
from odp.contracts.datasets import DatasetJobArgs, LakeRoots, config_tables
from odp.tracker.dataset_run import DatasetRun, RuleOutcome
from odp.tracker.statuses import RunStatus

ROOTS = LakeRoots("s3://raw", "s3://conformed", "s3://purpose-built")
TABLES = {"table_config_table": "odp-dev-table-config", "dataset_config_table": "odp-dev-dataset-config"}


def test_arguments_round_trip_through_the_command_line() -> None:
    args = DatasetJobArgs(ROOTS, **TABLES, changed_tables=("a.b.c",), full_refresh=True)
    argv = ["job.py", *(part for pair in args.to_arguments().items() for part in pair)]
    assert parse_arguments(argv) == args
    assert args.to_arguments()["--odp_table_config"] == "odp-dev-table-config"
    assert args.to_arguments()["--odp_dataset_config"] == "odp-dev-dataset-config"
    assert config_tables("dev") == TABLES


def test_missing_and_malformed_arguments() -> None:
    with pytest.raises(
        JobArgumentError,
        match=r"^job argument\(s\) --odp_conformed_root, --odp_purpose_built_root, --odp_dataset_config required$",
    ):
        DatasetJobArgs.from_arguments({"odp_table_config": "t", "odp_raw_root": "r"})
    good = DatasetJobArgs(ROOTS, **TABLES).to_arguments()
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
    args = DatasetJobArgs(ROOTS, **TABLES, history_table=name, topic_arn=topic)
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


def test_the_job_reads_the_configuration_the_configuration_manager_loaded(dynamodb, repo_root) -> None:
    """No config/ tree: the datasets come from dataset_config, the raw tables they read from table_config."""
    from etl.jobs.dataset_job import read_config
    from odp.config import load_config
    from odp.config.items import dataset_config_item
    from odp.config.manager import load_into_dynamodb
    from odp.config.store import TableConfigNotFoundError
    from odp.naming import DATASET_CONFIG, tracker_table_names
    from odp.tracker.schema import create_tables

    assert not any(argument.name == "odp_config_dir" for argument in DatasetJobArgs.arguments())
    config = load_config(repo_root / "config")
    names = tracker_table_names("dev")
    create_tables(dynamodb.meta.client, names)
    tables = {logical: dynamodb.Table(physical) for logical, physical in names.items()}
    args = DatasetJobArgs(ROOTS, **TABLES)
    tables[DATASET_CONFIG].put_item(Item=dataset_config_item(config.datasets[0]))
    with pytest.raises(TableConfigNotFoundError, match=r"^taxi_trips_dms\.taxi_trips\.table_1: no table_config item"):
        read_config(args, dynamodb=dynamodb)  # a dataset whose raw table was never loaded: the error names it

    load_into_dynamodb(
        config, "dev", tables["table_config"], tables["batch_config"], dataset_config_table=tables[DATASET_CONFIG]
    )
    read = read_config(args, dynamodb=dynamodb)
    assert read.datasets == config.datasets  # trips_clean, then revenue_per_vendor_day, which reads it
    assert [t.table_id for t in read.tables] == ["taxi_trips_dms.taxi_trips.table_1"]
