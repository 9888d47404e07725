"""The datasets state machine on moto: stepfunctions/datasets.glue.asl.json, started as production starts it.

On AWS an EventBridge rule starts it with the "Step Functions Execution Status Change" event of a
File Processor execution that succeeded (infrastructure/jobs/datasets.py); here the event is built from a
File Processor execution the sandbox ran (its real output). Its ``glue:startJobRun.sync`` task
(sandbox/moto_patches.py) runs the dataset job as Glue would: the job's DefaultArguments merged with
the run's, the configuration read from dataset_config and table_config (``etl.jobs.dataset_job.read_config``;
the account loaded them through the Configuration Manager, as the pipeline does after a deploy), the run
history item and the SNS notification written by ``etl.jobs.dataset_job.recorder``, each dataset's lease
taken in processing_tracker as the deployed job's ``--odp_ledger_tracker`` says (etl/datasets/lease.py), every AWS
call made as the dataset job's principal (sandbox/aws_calls.py). Spark reads the raw tables and writes
the zones through Hadoop; those accesses are reported as the S3 calls S3A would make.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from etl.datasets.job import DatasetsConfig, run_datasets, select_datasets
from etl.datasets.lease import dataset_leases, run_owner
from etl.jobs.dataset_job import read_config, recorder
from odp.contracts.arguments import JobArgumentError
from odp.contracts.base import LedgerTables
from odp.contracts.datasets import DatasetJobArgs
from odp.contracts.state_machines import DatasetsOnGlue
from odp.naming import DATASET_RUN_HISTORY, resource_prefix
from odp.tracker import JobRunRef
from odp.tracker.dataset_history import dataset_history_table_name, dataset_job_name
from odp.tracker.dataset_run import DatasetRun
from odp.tracker.schema import create_tables
from sandbox import aws_calls
from sandbox.account import ARTIFACTS_BUCKET, ENVIRONMENT, RAW_BUCKET, REGION, ExecutionResult, LocalAccount
from sandbox.datasets import lake_roots
from sandbox.moto_patches import GlueRunResult, ServiceBindings, bound_services
from sandbox.spark_on_demand import session_of

CONFORMED_BUCKET = "conformed"
PURPOSE_BUILT_BUCKET = "purpose_built"
CODE_PREFIX = "glue/datasets/"  # where infrastructure/jobs/datasets.py deploys the job script (never read here)
STATE_MACHINE = f"{resource_prefix(ENVIRONMENT)}-datasets"


def file_processor_event(execution_arn: str, output: dict[str, Any]) -> dict[str, Any]:
    """The EventBridge event of a File Processor execution that succeeded (what the datasets rule forwards)."""
    state_machine_arn = execution_arn.replace(":execution:", ":stateMachine:").rsplit(":", 1)[0]
    return {
        "version": "0",
        "source": "aws.states",
        "detail-type": "Step Functions Execution Status Change",
        "region": REGION,
        "detail": {
            "executionArn": execution_arn,
            "stateMachineArn": state_machine_arn,
            "status": "SUCCEEDED",
            "output": json.dumps(output),
        },
    }


class DatasetsStateMachine:
    """The dataset job, its run history table and its state machine in a :class:`LocalAccount`."""

    def __init__(self, account: LocalAccount, spark: Any) -> None:
        self.account = account
        self.spark = spark
        self.layout = account.layout
        self.bindings = ServiceBindings()
        self.job_name = dataset_job_name(ENVIRONMENT)
        self.zones = {
            CONFORMED_BUCKET: self.layout.lake / "conformed",
            PURPOSE_BUILT_BUCKET: self.layout.lake / "purpose_built",
        }
        self.arn = ""
        self.runs: list[DatasetRun] = []  # every dataset run of every execution, in order

    def create(self) -> None:
        """The history table, the Glue job, the state machine (the configuration is the account's: its
        dataset_config and table_config)."""
        history = dataset_history_table_name(ENVIRONMENT)
        create_tables(self.account.client("dynamodb"), {DATASET_RUN_HISTORY: history})
        contract = DatasetJobArgs(
            lake_roots(self.layout),
            **self.account.config_tables,
            history_table=history,
            topic_arn=self.account.alerts_topic_arn,
            ledger=LedgerTables(self.account.names.processing_tracker, self.account.names.processing_tracker_history),
        )
        self.account.client("glue").create_job(
            Name=self.job_name,
            Role=self.account.role_arn,
            Command={"Name": "glueetl", "ScriptLocation": f"s3://{ARTIFACTS_BUCKET}/{CODE_PREFIX}dataset_job.py"},
            DefaultArguments=contract.to_arguments(),
            ExecutionProperty={"MaxConcurrentRuns": 1},
        )
        definition = DatasetsOnGlue(alerts_topic_arn=self.account.alerts_topic_arn, job_name=self.job_name).render()
        self.arn = self.account.client("stepfunctions").create_state_machine(
            name=STATE_MACHINE, definition=json.dumps(definition), roleArn=self.account.role_arn
        )["stateMachineArn"]
        self.bindings.glue_jobs[self.job_name] = self._job

    def run(self, event: dict[str, Any]) -> ExecutionResult:
        """One execution started with ``event``, waited for (its SNS alerts read back)."""
        with bound_services(self.bindings):
            return self.account.run_execution(self.arn, STATE_MACHINE, json.dumps(event))

    def _job(self, job_name: str, run_id: str, arguments: dict[str, str]) -> GlueRunResult:
        """The dataset job as Glue runs it: DefaultArguments overridden by the run's arguments."""
        defaults = self.account.client("glue").get_job(JobName=job_name)["Job"].get("DefaultArguments", {})
        try:
            args = DatasetJobArgs.from_arguments({**defaults, **arguments})
        except JobArgumentError as error:
            return GlueRunResult("FAILED", str(error))
        args = replace(args, hudi_profile="local")  # laptop sizing; the contract's default is Glue's
        with aws_calls.acting_as(aws_calls.DATASET_JOB):
            config = read_config(args, dynamodb=self.account.dynamodb())
            self._report_source_reads(config, args)
            record = recorder(args, dynamodb=self.account.dynamodb(), sns=self.account.client("sns"))
            leases = dataset_leases(args, run_owner(), JobRunRef(job_name, run_id), dynamodb=self.account.dynamodb())
            with (
                aws_calls.observing_folder(CONFORMED_BUCKET, self.zones[CONFORMED_BUCKET]),
                aws_calls.observing_folder(PURPOSE_BUILT_BUCKET, self.zones[PURPOSE_BUILT_BUCKET]),
            ):
                outcome = run_datasets(session_of(self.spark), config, args, record=record, leases=leases)
        self.runs.extend(outcome.runs)
        if outcome.failed:
            return GlueRunResult("FAILED", "; ".join(run.summary() for run in outcome.failed))
        return GlueRunResult("SUCCEEDED")

    def _report_source_reads(self, config: DatasetsConfig, args: DatasetJobArgs) -> None:
        """Spark reads each raw table a selected dataset uses (Hudi incremental or snapshot queries)."""
        tables = {table.table_id: table for table in config.tables}
        for dataset in select_datasets(config, args):
            for source in dataset.sources:
                if source.table is not None:
                    table = tables[source.table]
                    prefix = f"{table.database}/{table.target_table}/"
                    aws_calls.report_folder_reads(RAW_BUCKET, self.layout.raw_dir, prefix)
