"""A local AWS account: moto services plus the resources ODP's stacks would create.

Inside :class:`LocalAccount` every boto3 call goes to moto. It creates the six tracker and config
tables and dataset_config (restored from the lake folder), loads the configuration (tables, cadences,
datasets) through the Configuration Manager, and creates per cadence the Glue job (DefaultArguments from
the job contract, as the CDK construct sets them) and the File Processor state machine rendered from the
same ASL file CDK deploys; the alerts topic has an SQS queue subscribed, so alerts can be read back.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
from moto import mock_aws

from odp.config.loader import OdpConfig
from odp.config.manager import ConfigPlan, load_into_dynamodb
from odp.contracts.datasets import config_tables
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.contracts.state_machines import FileProcessorOnGlue
from odp.naming import (
    DATASET_CONFIG,
    TrackerTableNames,
    file_processor_job_name,
    resource_prefix,
    state_machine_name,
    tracker_table_names,
)
from odp.tracker.schema import create_tables
from sandbox import state_store
from sandbox.aws_calls import CONFIG_LOADER, acting_as
from sandbox.staging import hadoop_file_uri

REGION = "eu-west-1"
ENVIRONMENT = "sandbox"
ARTIFACTS_BUCKET = "artifacts"  # the sandbox's artifacts bucket: code locations, and the plans in moto's S3
STAGING_BUCKET = "staging"
RAW_BUCKET = "raw"
EXECUTION_TIMEOUT_SECONDS = 4 * 3600
# How often a waiting run asks whether its execution ended (moto runs it in a thread of this process; a question
# costs about 1.4 ms): every execution ended on average half of this late, and a run makes one per cadence.
EXECUTION_POLL_SECONDS = 0.1
LEASE_SECONDS_VARIABLE = "ODP_SANDBOX_LEASE_SECONDS"
JOB_SCRIPT = "s3://assets/etl/jobs/file_processor.py"  # never read: the sandbox binds the job in-process


class ExecutionTimeoutError(TimeoutError):
    """A state-machine execution did not finish in time."""


@dataclass(frozen=True)
class SandboxLayout:
    """Where the buckets and the state live on disk."""

    lake: Path
    staging: Path

    @property
    def raw_dir(self) -> Path:
        return self.lake / RAW_BUCKET

    @property
    def raw_root(self) -> str:
        """The job's ``--odp_raw_root``: tables at ``<raw_root>/<database>/<table>``."""
        return hadoop_file_uri(self.raw_dir)

    @property
    def log_file(self) -> Path:
        return self.lake / "sandbox.log"

    def bucket_folders(self) -> dict[str, Path]:
        return {STAGING_BUCKET: self.staging, RAW_BUCKET: self.raw_dir}


def function_name(kind: str) -> str:
    """Physical name of a sandbox Lambda function, e.g. ``odp-sandbox-batch-manager``."""
    return f"{resource_prefix(ENVIRONMENT)}-{kind}"


def function_arn(kind: str, account: str) -> str:
    return f"arn:aws:lambda:{REGION}:{account}:function:{function_name(kind)}"


@dataclass(frozen=True)
class ExecutionResult:
    """How one state-machine execution ended."""

    cadence: str
    execution_arn: str
    status: str
    output: dict[str, Any] | None
    error: str | None
    cause: str | None
    alerts: list[dict[str, Any]] = field(default_factory=list)


@contextmanager
def environment_variables(values: Mapping[str, str]) -> Iterator[None]:
    """Set process environment variables for the block, then put the old values back."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, old in saved.items():
            if old is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = old


class LocalAccount:
    """moto with ODP's resources; state persists in the lake folder between instances."""

    def __init__(self, config: OdpConfig, layout: SandboxLayout) -> None:
        self.config = config
        self.layout = layout
        self.names = TrackerTableNames.for_environment(ENVIRONMENT)
        self.config_tables = config_tables(ENVIRONMENT)  # what the dataset job reads: DatasetJobArgs fields
        self._mock = mock_aws(config={"stepfunctions": {"execute_state_machine": True}})
        self.state_machines: dict[str, str] = {}
        self.config_plan: ConfigPlan | None = None
        self.alerts_topic_arn = ""
        self._alerts_queue_url = ""
        self.account_id = ""
        # The artifacts bucket's stand-in, in moto's S3: the cadences' plans and their Map results (the Batch
        # Manager's ODP_PLAN_BUCKET); it lives as long as this account (a run's plans are read within the run).
        self.plan_bucket = ARTIFACTS_BUCKET

    # -- lifecycle -------------------------------------------------------------------------
    def __enter__(self) -> LocalAccount:
        self._mock.start()
        try:
            self._create()
        except BaseException:
            self._mock.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.save_state()
        finally:
            self._mock.stop()

    @property
    def role_arn(self) -> str:
        """A role in moto's account (whatever id moto reports; never a real account)."""
        return f"arn:aws:iam::{self.account_id}:role/odp-sandbox"

    def function_arn(self, kind: str) -> str:
        return function_arn(kind, self.account_id)

    def queue_arn(self, name: str) -> str:
        return f"arn:aws:sqs:{REGION}:{self.account_id}:{name}"

    def client(self, service: str) -> Any:
        return boto3.client(service, region_name=REGION)

    def dynamodb(self) -> Any:
        return boto3.resource("dynamodb", region_name=REGION)

    @property
    def stored_tables(self) -> dict[str, str]:
        """Logical -> physical name of the tables kept in the lake folder: the six and dataset_config."""
        return self.names.as_dict() | {DATASET_CONFIG: tracker_table_names(ENVIRONMENT)[DATASET_CONFIG]}

    def _create(self) -> None:
        self.account_id = self.client("sts").get_caller_identity()["Account"]
        ddb = self.client("dynamodb")
        create_tables(ddb, self.stored_tables)
        state_store.restore_tables(ddb, list(self.stored_tables.values()), self.layout.lake)
        # From here on every client of the default session saves what it writes before its call returns.
        state_store.WriteThrough(self.layout.lake, self.stored_tables.values()).register(boto3._get_default_session())
        self.config_plan = self.load_configuration(self.config)
        self.client("s3").create_bucket(
            Bucket=self.plan_bucket, CreateBucketConfiguration={"LocationConstraint": REGION}
        )
        sns = self.client("sns")
        sqs = self.client("sqs")
        self.alerts_topic_arn = sns.create_topic(Name=f"{resource_prefix(ENVIRONMENT)}-alerts")["TopicArn"]
        self._alerts_queue_url = sqs.create_queue(QueueName=f"{resource_prefix(ENVIRONMENT)}-alerts-inbox")["QueueUrl"]
        queue_arn = sqs.get_queue_attributes(QueueUrl=self._alerts_queue_url, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]
        sns.subscribe(TopicArn=self.alerts_topic_arn, Protocol="sqs", Endpoint=queue_arn)
        for name, cadence in self.config.cadences.cadences.items():
            self._create_cadence(name, cadence.max_concurrency, cadence.worker_type.value, cadence.number_of_workers)

    def load_configuration(self, config: OdpConfig) -> ConfigPlan:
        """The pipeline's post-deploy step, under the config-loader role: ``config`` into batch_config, table_config
        and dataset_config by the Configuration Manager."""
        resource = self.dynamodb()
        with acting_as(CONFIG_LOADER):
            return load_into_dynamodb(
                config,
                ENVIRONMENT,
                resource.Table(self.names.table_config),
                resource.Table(self.names.batch_config),
                dataset_config_table=resource.Table(self.config_tables["dataset_config_table"]),
            )

    def _create_cadence(self, cadence: str, max_concurrency: int, worker_type: str, workers: int) -> None:
        job_name = file_processor_job_name(ENVIRONMENT, cadence)
        self.client("glue").create_job(
            Name=job_name,
            Role=self.role_arn,
            Command={"Name": "glueetl", "ScriptLocation": JOB_SCRIPT, "PythonVersion": "3"},
            DefaultArguments=self.static_job_arguments(cadence),
            ExecutionProperty={"MaxConcurrentRuns": max_concurrency},
            GlueVersion="5.0",
            WorkerType=worker_type,
            NumberOfWorkers=workers,
        )
        definition = FileProcessorOnGlue(
            alerts_topic_arn=self.alerts_topic_arn,
            batch_manager_function_arn=function_arn("batch-manager", self.account_id),
            cadence=cadence,
            max_concurrency=max_concurrency,
            job_name=job_name,
            plan_bucket=self.plan_bucket,
        ).render()
        arn = self.client("stepfunctions").create_state_machine(
            name=state_machine_name(ENVIRONMENT, cadence), definition=json.dumps(definition), roleArn=self.role_arn
        )["stateMachineArn"]
        self.state_machines[cadence] = arn

    def static_job_arguments(self, cadence: str) -> dict[str, str]:
        """The Glue job's DefaultArguments: local raw root, no catalog sync (no Glue catalog here).

        ``ODP_SANDBOX_LEASE_SECONDS`` shortens the lease (crash tests: a renewal every third of it).
        """
        lease = os.environ.get(LEASE_SECONDS_VARIABLE)
        return FileProcessorJobArgs.static_arguments(
            environment=ENVIRONMENT,
            cadence=cadence,
            raw_root=self.layout.raw_root,
            tracker_tables=self.names,
            catalog_sync=False,
            **({"lease_seconds": int(lease)} if lease else {}),  # else the contract's default
            hudi_profile="local",  # laptop sizing (etl/hudi/options.py); the Glue job gets "glue"
        )

    def save_state(self) -> None:
        state_store.dump_tables(self.client("dynamodb"), list(self.stored_tables.values()), self.layout.lake)

    # -- executions ------------------------------------------------------------------------
    def run_state_machine(self, cadence: str, *, poll_seconds: float = EXECUTION_POLL_SECONDS) -> ExecutionResult:
        """Start one execution of a cadence's state machine and wait for it (moto runs it in a thread).

        Raises:
            KeyError: no state machine for that cadence.
            ExecutionTimeoutError: it ran longer than EXECUTION_TIMEOUT_SECONDS.
        """
        return self.run_execution(self.state_machines[cadence], cadence, "{}", poll_seconds=poll_seconds)

    def run_execution(
        self, state_machine_arn: str, label: str, execution_input: str, *, poll_seconds: float = EXECUTION_POLL_SECONDS
    ) -> ExecutionResult:
        """Start one execution of any state machine with ``execution_input`` and wait for it.

        Raises:
            ExecutionTimeoutError: it ran longer than EXECUTION_TIMEOUT_SECONDS.
        """
        sfn = self.client("stepfunctions")
        name = f"{label}-{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
        execution_arn = sfn.start_execution(stateMachineArn=state_machine_arn, name=name, input=execution_input)[
            "executionArn"
        ]
        deadline = time.monotonic() + EXECUTION_TIMEOUT_SECONDS
        while True:
            described = sfn.describe_execution(executionArn=execution_arn)
            if described["status"] != "RUNNING":
                break
            if time.monotonic() > deadline:
                raise ExecutionTimeoutError(f"execution {name} still running after {EXECUTION_TIMEOUT_SECONDS} s")
            time.sleep(poll_seconds)
        output = json.loads(described["output"]) if described.get("output") else None
        return ExecutionResult(
            cadence=label,
            execution_arn=execution_arn,
            status=described["status"],
            output=output,
            error=described.get("error"),
            cause=described.get("cause"),
            alerts=self.drain_alerts(),
        )

    def drain_alerts(self) -> list[dict[str, Any]]:
        """SNS alerts published since the last call (subject and parsed message)."""
        sqs = self.client("sqs")
        alerts: list[dict[str, Any]] = []
        while True:
            messages = sqs.receive_message(QueueUrl=self._alerts_queue_url, MaxNumberOfMessages=10).get("Messages", [])
            if not messages:
                return alerts
            for message in messages:
                envelope = json.loads(message["Body"])
                try:
                    body: Any = json.loads(envelope.get("Message", ""))
                except json.JSONDecodeError:
                    body = envelope.get("Message")
                alerts.append({"subject": envelope.get("Subject"), "message": body})
                sqs.delete_message(QueueUrl=self._alerts_queue_url, ReceiptHandle=message["ReceiptHandle"])
