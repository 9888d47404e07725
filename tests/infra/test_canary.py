"""The post-deploy canary: it starts every job kind in harmless mode and waits (on each engine the stage uses: a
cadence on EMR Serverless is also started there); each job's harmless mode (etl/jobs/canary.py) touches no configured
table, fails when a service it needs cannot be reached, and writes, reads back and removes a canary table of its own
(etl/jobs/canary_table.py; the File Processor's: tests/unit/etl/test_canary_table.py)."""

from __future__ import annotations

import json

import boto3
import pytest
from botocore.exceptions import ClientError, EndpointConnectionError
from botocore.stub import Stubber
from moto import mock_aws

from etl.engine.base import argparse_arguments
from etl.jobs.canary import dataset_checks, file_processor_checks, streaming_checks, topic_line
from etl.jobs.dataset_job import run_canary_checks
from odp.config.loader import load_config
from odp.config.manager import load_into_dynamodb
from odp.config.models import EngineName
from odp.config.store import TableConfigNotFoundError
from odp.contracts.datasets import DatasetJobArgs, LakeRoots, config_tables
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.contracts.state_machines import (
    DatasetsOnEmrServerless,
    DefinitionError,
    FileProcessorOnEmrServerless,
    evaluate_entry_point_arguments,
)
from odp.contracts.streaming import StreamingJobArgs
from odp.naming import DATASET_RUN_HISTORY, TrackerTableNames
from odp.operations.canary import (
    CANARY_ARGUMENTS,
    CanaryJob,
    canary_jobs,
    emr_canary_machines,
    emr_canary_request,
    run_canary,
    run_emr_canary,
)
from odp.tracker.dataset_history import dataset_history_table_name
from odp.tracker.schema import create_tables
from tests.infra.permissions.check import state_machine_definition
from tests.infra.permissions.template import Deployment, Resolver, find_by_name
from tests.support.emr_stage import EMR_CADENCE, EMR_DATASET, WARM_CADENCE
from tests.support.emr_stubs import RUN_ID, stub_job_run

A = CanaryJob("odp-dev-file-processor-a", CANARY_ARGUMENTS)
B = CanaryJob("odp-dev-file-processor-b", CANARY_ARGUMENTS)


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
                [A, B],
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

    def get_job_runs(self, JobName: str, MaxResults: int) -> dict:
        return {"JobRuns": []}

    def get_job_run(self, JobName: str, RunId: str) -> dict:
        return {"JobRun": {"JobRunState": "FAILED", "ErrorMessage": "ModuleNotFoundError: No module named 'pydantic'"}}


def test_a_failed_run_is_named_with_glues_message() -> None:
    clock = _Clock()
    assert run_canary(_FailingGlue(), [A], timeout_seconds=60, sleep=clock.sleep, clock=clock) == [
        "odp-dev-file-processor-a run jr_1 ended FAILED: ModuleNotFoundError: No module named 'pydantic'"
    ]


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
            file_processor_checks(args, dynamodb)
        for name in names.as_dict().values():
            dynamodb.create_table(
                TableName=name,
                KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
                AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
                BillingMode="PAY_PER_REQUEST",
            )
        lines = file_processor_checks(args, dynamodb)
    assert lines[0].startswith("pydantic ")
    assert lines[1].startswith("PyYAML ")
    assert lines[2:] == [f"{name} ACTIVE" for name in names.as_dict().values()]


def test_the_canary_runs_every_job_kind_the_environment_deploys(config, streaming_stage) -> None:
    """Issue 24, item 7: the File Processor jobs, the dataset job, and each configured streaming job."""
    jobs = canary_jobs(config, "dev")
    assert [j.name for j in jobs] == [
        *(f"odp-dev-file-processor-{cadence}" for cadence in config.cadences.cadences),
        "odp-dev-dataset-job",
    ]
    assert jobs[-1].arguments == {"--odp_canary": "true"}
    streaming = canary_jobs(load_config(streaming_stage.config_dir), "dev")
    assert [(j.name, j.single_run) for j in streaming if j.single_run] == [
        ("odp-dev-stream-shop_changes", True),
        ("odp-dev-stream-partner_changes", True),
    ]
    assert all(j.arguments == StreamingJobArgs.canary_arguments() for j in streaming if j.single_run)


def test_the_canary_argument_is_declared_once_per_run_and_parsed_by_each_contract() -> None:
    assert DatasetJobArgs.canary_arguments() == StreamingJobArgs.canary_arguments() == {"--odp_canary": "true"}
    assert DatasetJobArgs.option("canary") == "--odp_canary"
    static = DatasetJobArgs.static_arguments(roots=LakeRoots("s3://r", "s3://c", "s3://p"), **config_tables("dev"))
    assert "--odp_canary" not in static
    parsed = DatasetJobArgs.from_arguments(static | {"--odp_canary": "true"})
    assert parsed.canary is True
    with pytest.raises(TypeError, match="unknown \\['canary'\\]"):
        FileProcessorJobArgs.canary_arguments()  # its harmless mode is an empty table list


class _RunningStream:
    """A streaming job whose run is in progress: Glue refuses a second run (one checkpoint writer)."""

    def __init__(self) -> None:
        self.started: list[str] = []

    def get_job_runs(self, JobName: str, MaxResults: int) -> dict:
        return {"JobRuns": [{"Id": "jr_live", "JobRunState": "RUNNING"}]}

    def start_job_run(self, JobName: str, Arguments: dict) -> dict:
        self.started.append(JobName)
        return {"JobRunId": "jr_2"}

    def get_job_run(self, JobName: str, RunId: str) -> dict:
        return {"JobRun": {"JobRunState": "SUCCEEDED"}}


def test_a_streaming_job_already_running_is_reported_not_started() -> None:
    glue, said = _RunningStream(), []
    stream = CanaryJob("odp-dev-stream-s", StreamingJobArgs.canary_arguments(), single_run=True)
    dataset = CanaryJob("odp-dev-dataset-job", DatasetJobArgs.canary_arguments())
    assert run_canary(glue, [stream, dataset], timeout_seconds=60, sleep=lambda s: None, report=said.append) == []
    assert glue.started == ["odp-dev-dataset-job"]  # get_job_runs is asked only for the single-run job
    assert said == [
        "odp-dev-stream-s: run jr_live is in progress (one run at a time): not started, its alarms watch it"
    ]


REGION = "eu-west-1"


def _dataset_args(history: str, topic: str, root: str = "s3:/") -> DatasetJobArgs:
    arguments = {"odp_raw_root": f"{root}/r", "odp_conformed_root": f"{root}/c", "odp_purpose_built_root": f"{root}/p"}
    arguments |= {"odp_table_config": "odp-dev-table-config", "odp_dataset_config": "odp-dev-dataset-config"}
    arguments |= {"odp_dataset_history_table": history, "odp_topic_arn": topic} | DatasetJobArgs.canary_arguments()
    return DatasetJobArgs.from_arguments(arguments)


@pytest.mark.spark
def test_the_dataset_jobs_harmless_mode_reaches_history_catalog_and_topic(
    aws_env, spark, config, tmp_path, caplog
) -> None:
    """The entry point's canary branch on a real Spark session; each service moto serves, then one removed. Between
    the two, the canary dataset is written in the first dataset's zone and database, read back and removed."""
    history = dataset_history_table_name("dev")
    databases = sorted({d.database for d in config.datasets})
    first = min(config.datasets, key=lambda d: (d.database, d.name))
    zone_root = tmp_path / ("c" if first.zone.value == "conformed" else "p")
    canary = f"{first.database}._odp_canary_dataset_job_local"  # the local engine's
    caplog.set_level("INFO", logger="etl.jobs.dataset_job")
    with mock_aws():
        session = boto3.session.Session(region_name=REGION)
        create_tables(session.client("dynamodb"), {DATASET_RUN_HISTORY: history})
        topic = session.client("sns").create_topic(Name="odp-dev-alerts")["TopicArn"]
        glue = session.client("glue")
        for database in databases:
            glue.create_database(DatabaseInput={"Name": database})
        args = _dataset_args(history, topic, root=f"file://{tmp_path}")
        assert run_canary_checks(spark, args, config, clients=session) == 0
        said = [record.getMessage() for record in caplog.records]
        assert f"canary: canary table {canary}: read back 4 rows" in said
        assert f"canary: canary table {canary}: removed" in said
        assert (zone_root / first.database).is_dir()  # the zone's database folder: the table was written there
        assert not (zone_root / first.database / "_odp_canary_dataset_job_local").exists()
        assert not spark.catalog.tableExists(canary)
        lines = dataset_checks(
            args, databases, dynamodb=session.client("dynamodb"), glue=glue, sns=session.client("sns")
        )
        assert lines[2:] == [f"{history} ACTIVE", *(f"glue database {d}" for d in databases), f"sns {topic} reached"]
        glue.delete_database(Name=databases[0])
        with pytest.raises(ClientError, match="EntityNotFoundException"):
            run_canary_checks(spark, args, config, clients=session)


class _PublishOnlyTopic:
    def get_topic_attributes(self, TopicArn: str) -> dict:
        raise ClientError({"Error": {"Code": "AuthorizationError", "Message": "not authorized"}}, "GetTopicAttributes")


class _UnreachableTopic:
    def get_topic_attributes(self, TopicArn: str) -> dict:
        raise EndpointConnectionError(endpoint_url="https://sns.eu-west-1.amazonaws.com/")


def test_a_refused_topic_read_proves_the_route_a_connection_error_fails() -> None:
    assert topic_line(_PublishOnlyTopic(), "arn:t") == (
        "sns arn:t reached (GetTopicAttributes refused: the role only publishes)"
    )
    with pytest.raises(EndpointConnectionError):
        topic_line(_UnreachableTopic(), "arn:t")


def test_the_streaming_jobs_harmless_mode_reaches_table_config_kinesis_and_catalog(aws_env, streaming_stage) -> None:
    config = load_config(streaming_stage.config_dir)
    names = TrackerTableNames.for_environment("dev")
    with mock_aws():
        session = boto3.session.Session(region_name=REGION)
        dynamodb = session.resource("dynamodb")
        create_tables(dynamodb.meta.client, names)
        table_config = dynamodb.Table(names.table_config)
        kinesis = session.client("kinesis")
        kinesis.create_stream(StreamName="odp-dev-shop_changes", ShardCount=1)
        arn = kinesis.describe_stream_summary(StreamName="odp-dev-shop_changes")["StreamDescriptionSummary"][
            "StreamARN"
        ]
        glue = session.client("glue")
        glue.create_database(DatabaseInput={"Name": "shop_raw"})
        args = StreamingJobArgs.from_arguments(
            {
                "odp_environment": "dev",
                "odp_stream": "shop_changes",
                "odp_stream_arn": arn,
                "odp_table_ids": json.dumps(["shop_dynamodb.app.orders", "shop_dynamodb.app.customers"]),
                "odp_raw_root": "s3://raw",
                "odp_error_root": "s3://a/streaming/errors",
                "odp_checkpoint_location": "s3://a/streaming/shop_changes/checkpoint/",
                "odp_table_config": names.table_config,
                "odp_ledger_tracker": names.processing_tracker,
                "odp_ledger_history": names.processing_tracker_history,
            }
            | StreamingJobArgs.canary_arguments()
        )
        with pytest.raises(TableConfigNotFoundError, match=r"shop_dynamodb\.app\.orders: no table_config item"):
            streaming_checks(args, table_config=table_config, kinesis=kinesis, glue=glue)
        load_into_dynamodb(config, "dev", table_config, dynamodb.Table(names.batch_config))
        lines = streaming_checks(args, table_config=table_config, kinesis=kinesis, glue=glue)
    assert lines[2:] == [
        "table_config shop_dynamodb.app.orders",
        "table_config shop_dynamodb.app.customers",
        "kinesis odp-dev-shop_changes ACTIVE",
        "glue database shop_raw",
    ]


def _emr_request(emr_stage, machine: str = f"odp-dev-file-processor-{EMR_CADENCE}") -> tuple[dict, str]:
    """The canary's StartJobRun from a state machine (default: the EMR cadence's) of tests/support/emr_stage.py, from
    its synthesized definition."""
    config = load_config(emr_stage.config_dir)
    settings = config.environments.environments["dev"]
    resolver = Resolver(emr_stage.template, Deployment("dev", settings.account, settings.region))
    (arn,) = [m for m in emr_canary_machines(config, "dev", settings.account, settings.region) if m.endswith(machine)]
    logical = find_by_name(resolver, "AWS::StepFunctions::StateMachine", arn.rsplit(":", 1)[1])
    definition = state_machine_definition(resolver, logical, emr_stage.asset_text)
    return emr_canary_request(json.dumps(definition)), logical


def test_a_stage_with_an_emr_cadence_canaries_the_application_as_its_state_machine_starts_it(emr_stage) -> None:
    """Issue 28: one job on each engine a stage uses; the EMR cadence's File Processor with the canary's batch."""
    config = load_config(emr_stage.config_dir)
    assert canary_jobs(config, "dev")  # the Glue jobs, as before
    assert [m.rsplit(":", 1)[1] for m in emr_canary_machines(config, "dev", "1", "eu-west-1")] == [
        f"odp-dev-file-processor-{EMR_CADENCE}",
        "odp-dev-datasets",  # a dataset on EMR Serverless: test below
    ]
    request, machine = _emr_request(emr_stage)
    task = emr_stage.template["Resources"][machine]["Properties"]["DefinitionSubstitutions"]
    assert set(task) == set(FileProcessorOnEmrServerless.placeholders())
    submit = request["jobDriver"]["sparkSubmit"]
    assert submit["entryPoint"].endswith("/emr/emr_serverless.py")
    assert "--py-files s3://" in submit["sparkSubmitParameters"]
    assert request["name"] == "canary"
    assert request["executionRoleArn"].startswith("arn:aws:iam::111111111111:role/EmrServerlessExecutionRole")
    job, *arguments = submit["entryPointArguments"]
    assert job == "file_processor"
    contract = argparse_arguments(FileProcessorJobArgs, ["emr_serverless.py", *arguments], "canary")
    assert (contract.table_ids, contract.batch_id, contract.cadence) == ((), "canary", EMR_CADENCE)
    assert dict(zip(arguments[-4::2], arguments[-3::2], strict=True)) == CANARY_ARGUMENTS


def test_a_dataset_on_emr_canaries_the_dataset_job_on_the_application_as_the_datasets_state_machine_starts_it(
    emr_stage,
) -> None:
    """Issue 28: a dataset on EMR Serverless: the dataset job on the application, started as the datasets state
    machine's RefreshDatasetsOnEmr task starts it, in its harmless mode (``--odp_canary true``)."""
    config = load_config(emr_stage.config_dir)
    assert [d.name for d in config.datasets if d.engine is EngineName.EMR_SERVERLESS] == [EMR_DATASET]
    assert "odp-dev-dataset-job" in [job.name for job in canary_jobs(config, "dev")]  # and on Glue, as before
    request, machine = _emr_request(emr_stage, "odp-dev-datasets")
    values = emr_stage.template["Resources"][machine]["Properties"]["DefinitionSubstitutions"]
    assert set(values) == set(DatasetsOnEmrServerless.placeholders())
    file_processor, _ = _emr_request(emr_stage)
    for same in ("applicationId", "executionRoleArn"):  # the same application, as the same execution role
        assert request[same] == file_processor[same], same
    submit = request["jobDriver"]["sparkSubmit"]
    assert submit["entryPoint"] == file_processor["jobDriver"]["sparkSubmit"]["entryPoint"]
    job, *arguments = submit["entryPointArguments"]
    assert job == "dataset_job"
    assert arguments[-2:] == ["--odp_canary", "true"]
    contract = argparse_arguments(DatasetJobArgs, ["emr_serverless.py", *arguments], "canary")
    assert contract.canary is True
    assert contract.engine == "emr_serverless"
    assert contract.changed_tables == ()
    assert contract.ledger.tracker  # the contract as deployed: the job takes its leases only after the canary branch


def test_without_its_canary_arguments_the_dataset_jobs_emr_run_would_refresh_datasets(emr_stage, monkeypatch) -> None:
    """The appended ``--odp_canary true`` is what makes the run harmless: without it the same request parses as a
    real refresh."""
    monkeypatch.setattr("odp.operations.canary.EMR_CANARY_ARGUMENTS", {})
    request, _ = _emr_request(emr_stage, "odp-dev-datasets")
    _, *arguments = request["jobDriver"]["sparkSubmit"]["entryPointArguments"]
    assert argparse_arguments(DatasetJobArgs, ["emr_serverless.py", *arguments], "canary").canary is False


def test_the_emr_canary_starts_the_run_on_the_application_and_waits(aws_env, emr_stage) -> None:
    request, _ = _emr_request(emr_stage)
    with mock_aws():
        emr = boto3.client("emr-serverless", region_name="eu-west-1")
        application = emr.create_application(name="odp-dev-spark", releaseLabel="emr-7.12.0", type="SPARK")
        role = request["executionRoleArn"].replace("111111111111", "123456789012")  # moto's account
        started = {**request, "applicationId": application["applicationId"], "executionRoleArn": role}

        assert run_emr_canary(emr, [started], timeout_seconds=600, sleep=lambda _: None) == []

        (run,) = emr.list_job_runs(applicationId=application["applicationId"])["jobRuns"]
        detail = emr.get_job_run(applicationId=application["applicationId"], jobRunId=run["id"])["jobRun"]
        assert detail["jobDriver"] == request["jobDriver"]
        assert detail["executionRole"] == role


def test_a_failed_emr_canary_run_is_named_with_its_details() -> None:
    emr = boto3.client("emr-serverless", region_name="eu-west-1", aws_access_key_id="k", aws_secret_access_key="s")
    request = {
        "applicationId": "app1",
        "executionRoleArn": "arn:aws:iam::111111111111:role/emr-execution",
        "name": "canary",
        "jobDriver": {"sparkSubmit": {"entryPoint": "s3://b/emr/emr_serverless.py"}},
    }
    clock = _Clock()
    with Stubber(emr) as stub:
        stub_job_run(stub, request, [("RUNNING", "running"), ("FAILED", "No module named odp")])
        failures = run_emr_canary(emr, [request], timeout_seconds=600, sleep=clock.sleep, clock=clock)
    assert failures == [f"EMR Serverless app1 run {RUN_ID} ended FAILED: No module named odp"]


def test_an_entry_point_expression_the_canary_cannot_read_is_refused() -> None:
    with pytest.raises(DefinitionError, match="has no field 'batch_id'"):
        evaluate_entry_point_arguments("States.Array('file_processor', $.batch_id)", {})
    with pytest.raises(DefinitionError, match=r"cannot read States\.Array item"):
        evaluate_entry_point_arguments("States.Array('a', States.Format('{}', $.x))", {"x": 1})
    with pytest.raises(LookupError, match="starts no EMR Serverless job run"):
        emr_canary_request(json.dumps({"States": {"A": {"Type": "Pass"}}}))


def test_a_warm_cadence_running_stands_in_for_its_canary_run(emr_stage) -> None:
    """Issue 47: a warm cadence's job allows one run (docs/decisions/032): its warm run in progress is reported, not
    started beside it; a scheduled cadence's job is canaried as before."""
    jobs = canary_jobs(load_config(emr_stage.config_dir), "dev")
    assert [(job.name, job.single_run) for job in jobs if job.name.startswith("odp-dev-file-processor-")] == [
        (f"odp-dev-file-processor-{EMR_CADENCE}", False),
        ("odp-dev-file-processor-daily", False),
        (f"odp-dev-file-processor-{WARM_CADENCE}", True),
    ]
