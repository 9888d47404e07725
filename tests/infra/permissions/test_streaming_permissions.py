"""The streaming job's permissions: the AWS calls its code makes in a local micro-batch, and what Glue
does for it (the Kinesis read, its metrics, the catalog sync), against the streaming role.

The repository's configuration streams no table, so the dev/test/prod stages have no streaming job;
the role checked is the one of the stage with two streams that tests/infra/test_streaming.py also reads
(tests/support/streaming_stage.py, synthesized once per session). The job's arguments are that stage's
Glue job DefaultArguments; the entry point's own functions load its tables from table_config (moto)
and publish its metrics; Spark writes the raw table, the bad records and the checkpoint to folders
named after the deployed buckets, reported as the S3 calls S3A would make.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import boto3
import pytest
from moto import mock_aws

from etl.hudi.options import HudiProfile, WriteProfile
from etl.jobs.streaming_job import publish_batch_metrics, stream_target
from etl.streaming.batch import BatchOutcome
from etl.streaming.local import run_local_stream
from odp.config.loader import OdpConfig, load_config
from odp.config.manager import load_into_dynamodb
from odp.contracts.streaming import StreamingJobArgs
from odp.naming import TrackerTableNames
from odp.tracker.schema import create_tables
from sandbox import aws_calls
from sandbox.account import environment_variables
from sandbox.staging import hadoop_file_uri
from sandbox.streaming_demo import BASE_MS, POISON_LINE, KinesisFolder, change_record
from tests.infra.permissions.check import check_reachability, check_template, without_action
from tests.infra.permissions.reachability import without_endpoint
from tests.infra.permissions.requirements import Translation
from tests.infra.permissions.template import Deployment, Resolver
from tests.support.streaming_stage import StreamingStage

ENVIRONMENT = "dev"
STREAM = "shop_changes"
JOB = f"odp-{ENVIRONMENT}-stream-{STREAM}"


@dataclass(frozen=True)
class StreamingFlow:
    config: OdpConfig
    args: StreamingJobArgs
    calls: list[aws_calls.AwsCall]
    outcomes: list[BatchOutcome]
    translation: Translation

    def resolver(self, template: dict[str, Any]) -> Resolver:
        settings = self.config.environments.environments[ENVIRONMENT]
        return Resolver(template, Deployment(ENVIRONMENT, settings.account, settings.region))


def _split(uri: str) -> tuple[str, str]:
    bucket, _, key = uri.removeprefix("s3://").partition("/")
    return bucket, key


def _records(folder: KinesisFolder) -> None:
    """One micro-batch for table ``orders``: two inserts, an update, a REMOVE and a line that is not a record."""
    lines = [
        folder.record(change_record("INSERT", "orders", {"id": "o1", "status": "new"}, created_ms=BASE_MS)),
        folder.record(change_record("INSERT", "orders", {"id": "o2", "status": "new"}, created_ms=BASE_MS + 1)),
        folder.record(change_record("MODIFY", "orders", {"id": "o1", "status": "paid"}, created_ms=BASE_MS + 2)),
        folder.record(change_record("REMOVE", "orders", {"id": "o2", "status": "new"}, created_ms=BASE_MS + 3)),
        POISON_LINE,
    ]
    folder.write(lines)


@pytest.fixture(scope="module")
def streaming_flow(
    streaming_stage: StreamingStage, spark: Any, tmp_path_factory: pytest.TempPathFactory
) -> StreamingFlow:
    config = load_config(streaming_stage.config_dir)
    settings = config.environments.environments[ENVIRONMENT]
    resolver = Resolver(streaming_stage.template, Deployment(ENVIRONMENT, settings.account, settings.region))
    job = next(
        j["Properties"]
        for j in resolver.of_type("AWS::Glue::Job").values()
        if resolver.resolve(j["Properties"]["Name"]) == JOB
    )
    args = StreamingJobArgs.from_arguments(resolver.resolve(job["DefaultArguments"]))
    raw_bucket, _ = _split(args.raw_root)
    artifacts_bucket, errors_key = _split(args.error_root)
    _, checkpoint_key = _split(args.checkpoint_location)
    work = tmp_path_factory.mktemp("streaming-permissions")
    folders = {raw_bucket: work / raw_bucket, artifacts_bucket: work / artifacts_bucket}
    folder = KinesisFolder(work / "kinesis")
    _records(folder)
    names = TrackerTableNames.for_environment(ENVIRONMENT)
    region = {"AWS_DEFAULT_REGION": settings.region}
    with environment_variables(region), mock_aws(), aws_calls.CallRecorder() as recorder:
        dynamodb = boto3.resource("dynamodb", region_name=settings.region)
        create_tables(dynamodb.meta.client, names)
        load_into_dynamodb(config, ENVIRONMENT, dynamodb.Table(names.table_config), dynamodb.Table(names.batch_config))
        with aws_calls.acting_as(aws_calls.STREAMING_JOB):
            target = stream_target(args, dynamodb)  # its tables and the run ledger
            local = replace(
                target,
                raw_root=hadoop_file_uri(folders[raw_bucket]),
                error_root=hadoop_file_uri(folders[artifacts_bucket] / errors_key),
                profile=WriteProfile(HudiProfile.LOCAL),
                catalog_sync=False,  # no Glue catalog here: its requirements are derived from the config
            )
            with (
                aws_calls.observing_folder(raw_bucket, folders[raw_bucket]),
                aws_calls.observing_folder(artifacts_bucket, folders[artifacts_bucket]),
            ):
                outcomes = run_local_stream(
                    spark, str(folder.root), str(folders[artifacts_bucket] / checkpoint_key), local
                )
            cloudwatch = boto3.client("cloudwatch", region_name=settings.region)
            for outcome in outcomes:
                publish_batch_metrics(cloudwatch, args.stream, outcome)
    translation = Translation(ENVIRONMENT, {raw_bucket: "raw", artifacts_bucket: "artifacts"})
    return StreamingFlow(config, args, recorder.calls, outcomes, translation)


def _failures(stage: StreamingStage, flow: StreamingFlow, template: dict[str, Any]) -> list[str]:
    return check_template(
        flow.resolver(template),
        {ENVIRONMENT: flow.calls},
        {ENVIRONMENT: flow.translation},
        stage.asset_text,
        tables=flow.config.tables,
        datasets=flow.config.datasets,
    )


@pytest.mark.spark
@pytest.mark.slow
def test_the_micro_batch_made_the_calls_worth_checking(streaming_flow: StreamingFlow) -> None:
    (outcome,) = streaming_flow.outcomes
    assert (outcome.records, outcome.bad_records, outcome.failed) == (5, 1, [])
    made = {(c.service, c.operation, c.params.get("Bucket")) for c in streaming_flow.calls}
    raw, _ = _split(streaming_flow.args.raw_root)
    artifacts, _ = _split(streaming_flow.args.error_root)
    assert {
        ("dynamodb", "GetItem", None),  # the streamed tables' table_config items
        ("cloudwatch", "PutMetricData", None),
        ("s3", "PutObject", raw),  # the Hudi table
        ("s3", "PutObject", artifacts),  # the bad record and the checkpoint
    } <= made
    written = {
        c.params["Key"].split("/")[1]
        for c in streaming_flow.calls
        if c.operation == "PutObject" and c.params["Bucket"] == artifacts
    }
    assert written == {"errors", STREAM}  # streaming/errors/<stream>/... and streaming/<stream>/checkpoint/...
    assert {c.principal for c in streaming_flow.calls} == {aws_calls.STREAMING_JOB}


@pytest.mark.spark
@pytest.mark.slow
def test_every_streaming_call_and_glue_runtime_need_is_allowed(
    streaming_stage: StreamingStage, streaming_flow: StreamingFlow
) -> None:
    failures = _failures(streaming_stage, streaming_flow, streaming_stage.template)
    assert failures == [], "\n".join(failures)


STREAM_ARN = f":kinesis:eu-west-1:111111111111:stream/odp-{ENVIRONMENT}-{STREAM}"
REMOVALS = [
    ("kinesis:GetRecords", STREAM_ARN),  # Glue's connector, derived
    ("kinesis:ListShards", STREAM_ARN),
    ("dynamodb:GetItem", ":table/odp-dev-table-config"),
    ("s3:PutObject", "/streaming/"),
    ("s3:PutObject", "arn:aws:s3:::odp-dev-raw-"),
]


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("case", REMOVALS, ids=[action for action, _ in REMOVALS])
def test_removing_a_needed_streaming_grant_fails_naming_it(
    streaming_stage: StreamingStage, streaming_flow: StreamingFlow, case: tuple[str, str]
) -> None:
    action, resource = case
    template = without_action(streaming_flow.resolver(streaming_stage.template), aws_calls.STREAMING_JOB, action)

    failures = _failures(streaming_stage, streaming_flow, template)

    assert failures
    for failure in failures:
        assert failure.startswith("streaming-job (role "), failure
        assert f" is not allowed {action} on " in failure, failure
    assert any(resource in failure.split(" on ", 1)[1] for failure in failures), failures


@pytest.mark.spark
@pytest.mark.slow
def test_the_micro_batchs_calls_and_the_kinesis_source_are_reachable(
    streaming_stage: StreamingStage, streaming_flow: StreamingFlow
) -> None:
    """Item 3 of issue 24: the Kinesis source needs a kinesis-streams endpoint in the jobs' subnets."""
    resolver = streaming_flow.resolver(streaming_stage.template)
    calls = {ENVIRONMENT: streaming_flow.calls}
    tables = streaming_flow.config.tables
    assert check_reachability(resolver, calls, tables=tables) == []

    changed = without_endpoint(streaming_stage.template, resolver, "kinesis-streams")
    failures = check_reachability(streaming_flow.resolver(changed), calls, tables=tables)

    assert len(failures) == 4  # two jobs, two subnets each
    assert all(f.startswith("streaming-job (Glue job odp-dev-stream-") for f in failures), failures
    assert all(" cannot reach kinesis-streams from subnet " in f for f in failures), failures
    assert all(": needed by kinesis:DescribeStream (Glue's Kinesis connector reads " in f for f in failures), failures
