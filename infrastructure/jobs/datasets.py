"""Datasets: the dataset Glue job (:class:`DatasetJob`, a thin construct on
:class:`~infrastructure.jobs.glue_job.GlueJobFamily`) and the flow that runs it (:class:`Datasets`): the
datasets state machine started when a File Processor execution succeeds, its alarm and dashboard widget.
The run history table is Tracking's (declared with the tracker tables); the conformed and purpose-built buckets,
their zone keys and the ``<source>_<zone>`` Glue databases are Storage's and Catalog's.

The job reads its configuration from DynamoDB, as every other component does: the active datasets (their SQL
included) in dataset_config and the raw tables they read in table_config, both loaded by the Configuration Manager
after each deploy. Its family deploys only the job script.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3_deployment as s3deploy
from aws_cdk import aws_sns as sns
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct, IDependable

from infrastructure.foundation.observability import encrypted_log_group
from infrastructure.grants import grant_key, grant_objects, grant_table, grant_table_actions
from infrastructure.jobs.engines.base import JobEngine
from infrastructure.jobs.engines.emr_serverless import EmrServerless
from infrastructure.jobs.engines.glue import GLUE
from infrastructure.jobs.glue_job import BucketKeys, GlueJobFamily, GlueJobFamilyProps, GlueJobSpec, GlueStage
from infrastructure.nag import acknowledge, acknowledge_many
from odp.config.datasets import DatasetConfig, of_engine
from odp.config.models import EngineName
from odp.contracts.datasets_trigger import WARM_TICK_DETAIL_TYPE, WARM_TICK_SOURCE
from odp.contracts.job_kinds import DATASET_JOB, DATASETS_CODE_PREFIX, JobDeployment, JobUnit
from odp.contracts.state_machines import substitutions_for
from odp.naming import PROCESSING_TRACKER, PROCESSING_TRACKER_HISTORY, datasets_state_machine_name, resource_prefix

REPO_ROOT = Path(__file__).resolve().parents[2]
CODE_PREFIX = DATASETS_CODE_PREFIX
SCRIPT = DATASET_JOB.script
PERIOD = Duration.minutes(5)
DATASET_JOB_TIMEOUT_MINUTES = 120  # a dataset job run on Glue or on EMR Serverless
# Why the dataset job's security configuration leaves S3 encryption to each bucket (infrastructure/README.md).
ZONE_KEYS_REASON = (
    "The dataset job writes two zones with different keys (conformed, purpose-built). A Glue security "
    "configuration holds one S3 key, which would encrypt purpose-built objects with the conformed key (or the "
    "reverse); with S3 encryption DISABLED Glue sends no encryption header and S3 encrypts each object with "
    "its bucket's default SSE-KMS zone key (Storage sets it on every zone bucket)."
)


@dataclass(frozen=True)
class DatasetJobProps:
    """The dataset job.

    Attributes:
        stage: what the stage gives every job family (buckets: raw read; conformed and purpose_built
            read/write; their zone keys).
        datasets: the configured datasets (their databases are the catalog scope).
        history_table: Tracking's ``dataset_run_history`` table (the job writes one item per dataset run).
        alerts_topic: the job publishes one message per dataset.
        library: the deployment of the etl/odp zip and the wheels (the File Processor family's code).
        ledger_tracker: Tracking's ``processing_tracker``: one lease per dataset (``dataset:<name>``), so one refresh
            of a dataset at a time on any engine (etl/datasets/lease.py), and each refresh's summary (the run ledger).
        ledger_history: Tracking's ``processing_tracker_history``: each refresh's row (odp.tracker.ledger).
        table_config: Tracking's ``table_config``: the raw tables the datasets read (the job's configuration).
        dataset_config: Tracking's ``dataset_config``: the datasets and their SQL (the job's configuration).
        deployment: what the job's static arguments name (odp.contracts.job_kinds.JobDeployment).
    """

    stage: GlueStage
    datasets: Sequence[DatasetConfig]
    history_table: dynamodb.ITableV2
    alerts_topic: sns.ITopic
    library: IDependable
    ledger_tracker: dynamodb.ITableV2
    ledger_history: dynamodb.ITableV2
    table_config: dynamodb.ITableV2
    dataset_config: dynamodb.ITableV2
    deployment: JobDeployment


def _family(props: DatasetJobProps) -> GlueJobFamilyProps:
    """The dataset job's family: the job script under CODE_PREFIX (the job reads its configuration from DynamoDB),
    S3 left to the zone buckets' keys, the datasets' databases, the library deployed first."""
    return GlueJobFamilyProps(
        props.stage,
        "datasets",
        CODE_PREFIX,
        [s3deploy.Source.data(SCRIPT, (REPO_ROOT / "etl" / "jobs" / SCRIPT).read_text(encoding="utf-8"))],
        data_key=BucketKeys(ZONE_KEYS_REASON),
        databases=sorted({dataset.database for dataset in props.datasets}),
        requires=[props.library],
    )


def grant_dataset_job_data(role: iam.Role, props: DatasetJobProps) -> None:
    """What a dataset job run reads and writes, on any engine (the Glue dataset job's role, the EMR Serverless
    execution role): its configuration (:func:`grant_dataset_job_config`), the raw tables (read), the conformed and
    purpose-built datasets (write, delete) with their keys, the run history (write), the alerts topic, and the run
    ledger (the datasets' leases and runs in processing_tracker, their rows in processing_tracker_history)."""
    stage = props.stage
    grant_dataset_job_config(role, props)
    grant_objects(role, stage.buckets["raw"], reason="Datasets read any raw table.")
    for zone in ("conformed", "purpose_built"):
        grant_objects(
            role, stage.buckets[zone], write=True, delete=True, reason=f"The job owns every Hudi dataset of {zone}."
        )
        grant_key(role, stage.zone_keys[zone], encrypt=True)
    grant_key(role, stage.zone_keys["raw"], encrypt=False)
    props.history_table.grant_write_data(role)
    props.alerts_topic.grant_publish(role)
    grant_table(role, PROCESSING_TRACKER, props.ledger_tracker, write=True)
    grant_table(role, PROCESSING_TRACKER_HISTORY, props.ledger_history, write=True)
    grant_key(role, stage.state_key, encrypt=True)  # the tracker tables' key
    acknowledge_many(role, _CDK_GRANT_FINDINGS)  # on the role: its statements may move to overflow policies


def grant_dataset_job_config(role: iam.Role, props: DatasetJobProps) -> None:
    """The configuration the job reads (odp.config.store.dataset_job_config), and nothing more: one Scan of
    dataset_config (the active datasets) and a GetItem of each raw table they read in table_config. The tables' key
    is the state key (:func:`grant_dataset_job_data`)."""
    grant_table_actions(role, props.dataset_config, ["dynamodb:Scan"])
    grant_table_actions(role, props.table_config, ["dynamodb:GetItem"])


def grant_dataset_job_on_emr(emr: EmrServerless, props: DatasetJobProps) -> None:
    """The EMR Serverless execution role runs the dataset job too: its configuration and data
    (:func:`grant_dataset_job_data`). The datasets' databases are in the application's catalog scope
    (EmrServerlessProps.databases, given by the stage)."""
    grant_dataset_job_data(emr.role, props)


class DatasetJob(GlueJobFamily):
    """``odp-<env>-dataset-job``: SQL over the raw tables -> conformed and purpose-built Hudi tables.

    Attributes:
        job_name, job_arn, job: the job; ``history_table``: the run history table it writes.
    """

    def __init__(self, scope: Construct, construct_id: str, props: DatasetJobProps) -> None:
        super().__init__(scope, construct_id, _family(props))
        self.job_props = props
        stage = props.stage
        self.history_table = props.history_table
        grant_dataset_job_data(self.role, props)
        self.job_name = DATASET_JOB.job_name(stage.environment, JobUnit(DATASET_JOB.name))
        self.job_arn = self.arn_of(self.job_name)
        # The static contract (what the Glue job holds as DefaultArguments; an EMR Serverless run's arguments).
        self.contract_arguments = DATASET_JOB.static_arguments(props.deployment, JobUnit(DATASET_JOB.name))
        self.job = self.add_job(
            GlueJobSpec(
                construct_id="Job",
                name=self.job_name,
                description="ODP datasets: SQL over the raw tables -> conformed and purpose-built Hudi tables",
                script=SCRIPT,
                arguments=self.contract_arguments,
                timeout_minutes=DATASET_JOB_TIMEOUT_MINUTES,
                # Two runs writing one Hudi dataset would conflict: the state machine waits by retrying.
                max_concurrent_runs=1,
            )
        )

    def grant_read_job_runs(self, grantee: iam.IGrantable) -> None:
        """glue:GetJobRun on the dataset job: a dataset's lease names the job run holding it, and a run that finds
        the lease of an ended run takes it over at once (etl/datasets/lease.py, odp/tracker/job_runs.py)."""
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(sid="LeaseHolderDatasetJobRuns", actions=["glue:GetJobRun"], resources=[self.job_arn])
        )


def grant_dataset_engines(job: DatasetJob, emr: EmrServerless | None) -> None:
    """The dataset job's engines: a dataset's lease may be held by a dataset run on either engine, so each run asks
    the holder's engine (glue:GetJobRun of the dataset job, emr-serverless:GetJobRun of the application); when a
    dataset runs on EMR Serverless, its execution role also runs the dataset job (:func:`grant_dataset_job_on_emr`)."""
    job.grant_read_job_runs(job.role)
    if emr is None:
        return
    emr.grant_read_job_runs(job.role)
    if on_emr(job.job_props.datasets):
        grant_dataset_job_on_emr(emr, job.job_props)
        job.grant_read_job_runs(emr.role)


def on_emr(datasets: Sequence[DatasetConfig]) -> bool:
    """Whether a dataset runs on EMR Serverless (the datasets state machine then starts a run there)."""
    return bool(of_engine(datasets, EngineName.EMR_SERVERLESS))


@dataclass(frozen=True)
class DatasetsProps:
    """The flow that refreshes datasets after the File Processor.

    Attributes:
        job: the dataset job the state machine runs.
        file_processors: the File Processor state machines whose SUCCEEDED executions start it.
        removal_policy: of the state machine's log group (RETAIN by default).
        log_retention: of the state machine's log group (one year by default).
        emr_serverless: the stage's EMR Serverless application, if any; when a dataset says ``engine:
            emr_serverless`` the state machine runs those datasets there after the Glue run.
        warm_ticks: a cadence runs warm (no execution per tick): its ticks' events (odp.contracts.datasets_trigger)
            start the state machine too, matched by source, detail type and environment.
    """

    environment: str
    datasets: Sequence[DatasetConfig]
    job: DatasetJob
    state_key: kms.IKey
    alerts_topic: sns.ITopic
    dashboard: cloudwatch.Dashboard
    file_processors: Sequence[sfn.IStateMachine]
    removal_policy: RemovalPolicy = RemovalPolicy.RETAIN
    log_retention: logs.RetentionDays = logs.RetentionDays.ONE_YEAR
    emr_serverless: EmrServerless | None = None
    warm_ticks: bool = False


class Datasets(Construct):
    """The datasets state machine, its EventBridge trigger, alarm and dashboard widget (each dataset's named query is
    the access layer's: infrastructure/access/query.py).

    Attributes:
        state_machine, trigger, warm_trigger (None without a warm cadence), alarm; runs_on_emr: the state machine
        starts an EMR Serverless run (a dataset says ``engine: emr_serverless``).
    """

    def __init__(self, scope: Construct, construct_id: str, props: DatasetsProps) -> None:
        super().__init__(scope, construct_id)
        prefix = resource_prefix(props.environment)
        # The application runs the datasets only when one of them says engine: emr_serverless.
        emr = props.emr_serverless if on_emr(props.datasets) else None
        engine: JobEngine = GLUE if emr is None else emr  # the definition: the Glue run, then the EMR run when any
        self.runs_on_emr = emr is not None
        log_group = encrypted_log_group(
            self,
            f"/aws/vendedlogs/states/{prefix}-datasets",
            key=props.state_key,
            retention=props.log_retention,
            removal_policy=props.removal_policy,
        )
        self.state_machine = sfn.StateMachine(
            self,
            "StateMachine",
            state_machine_name=datasets_state_machine_name(props.environment),
            definition_body=sfn.DefinitionBody.from_file(str(DATASET_JOB.definition(engine.engine))),
            definition_substitutions=substitutions_for(DATASET_JOB, engine.engine)(
                alerts_topic_arn=props.alerts_topic.topic_arn,
                **GLUE.run_values(DATASET_JOB, job_name=props.job.job_name, static_arguments={}, timeout_minutes=0),
                **(
                    {}
                    if emr is None
                    else emr.run_values(
                        DATASET_JOB,
                        job_name=props.job.job_name,
                        static_arguments=props.job.contract_arguments,
                        timeout_minutes=DATASET_JOB_TIMEOUT_MINUTES,
                    )
                ),
            ).values(),
            logs=sfn.LogOptions(destination=log_group, level=sfn.LogLevel.ALL, include_execution_data=True),
            tracing_enabled=True,
        )
        sm_role = self.state_machine.role
        GLUE.grant_run(sm_role, job_arn=props.job.job_arn, sid="RunDatasetJob")  # the datasets on Glue, first
        sm_role.add_to_principal_policy(
            iam.PolicyStatement(sid="PublishAlerts", actions=["sns:Publish"], resources=[props.alerts_topic.topic_arn])
        )
        props.state_key.grant(sm_role, "kms:Decrypt", "kms:GenerateDataKey")
        if emr is not None:
            emr.grant_run(sm_role, job_arn=props.job.job_arn, sid="RunDatasetJobOnEmr")
        acknowledge(
            sm_role.node.find_child("DefaultPolicy"),
            "AwsSolutions-IAM5[Resource::*]",
            "Log delivery and X-Ray actions support no resource-level permissions; CDK adds them for logs and tracing.",
        )
        # Every execution of the File Processors that SUCCEEDED; its output names the tables it processed.
        succeeded = events.EventPattern(
            source=["aws.states"],
            detail_type=["Step Functions Execution Status Change"],
            detail={"status": ["SUCCEEDED"], "stateMachineArn": [sm.state_machine_arn for sm in props.file_processors]},
        )
        self.trigger = events.Rule(
            self,
            "AfterFileProcessor",
            rule_name=f"{prefix}-datasets-after-file-processor",
            description="A File Processor execution succeeded: refresh the datasets downstream of its tables",
            event_pattern=succeeded,
            targets=[targets.SfnStateMachine(self.state_machine)],
        )
        self.warm_trigger = None
        if props.warm_ticks:  # a warm tick's event: the same detail fields as an execution's (the ASL reads both)
            self.warm_trigger = events.Rule(
                self,
                "AfterWarmTick",
                rule_name=f"{prefix}-datasets-after-warm-tick",
                description="A warm File Processor tick planned tables: refresh the datasets downstream of them",
                event_pattern=events.EventPattern(
                    source=[WARM_TICK_SOURCE],
                    detail_type=[WARM_TICK_DETAIL_TYPE],
                    detail={"environment": [props.environment]},
                ),
                targets=[targets.SfnStateMachine(self.state_machine)],
            )
        failed = self.state_machine.metric_failed(period=PERIOD)
        self.alarm = failed.create_alarm(
            self,
            "Failed",
            alarm_name=f"{prefix}-datasets-failed",
            alarm_description="A dataset refresh failed or a fail quality rule did not hold",
            threshold=0,
            evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        self.alarm.add_alarm_action(actions.SnsAction(props.alerts_topic))
        props.dashboard.add_widgets(
            cloudwatch.GraphWidget(title="Datasets", left=[self.state_machine.metric_succeeded(period=PERIOD), failed])
        )


_CDK_GRANT_FINDINGS = {
    "AwsSolutions-IAM5[Action::kms:GenerateDataKey*]": "CDK's grants on the history table and topic (state key).",
    "AwsSolutions-IAM5[Action::kms:ReEncrypt*]": "CDK's grants on the history table and topic (state key).",
}
