"""The jobs layer: every job kind's jobs on their engines, and the state machines that run them.

Built in the registry's order (odp.contracts.job_kinds): the File Processor jobs (one Glue job per cadence, the EMR
Serverless application when a cadence or a dataset runs there, a state machine and schedule per cadence), the
streaming jobs, any other registered kind (:class:`infrastructure.jobs.kind_jobs.KindJobs`), the dataset job and its
state machine.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aws_cdk import Stack

from infrastructure.foundation.context import DeploymentContext
from infrastructure.ingest.layer import Ingest
from infrastructure.jobs.datasets import DatasetJob, DatasetJobProps, Datasets, DatasetsProps, grant_dataset_engines
from infrastructure.jobs.engines.emr_serverless import EmrServerless, EmrServerlessProps
from infrastructure.jobs.engines.glue import GLUE
from infrastructure.jobs.file_processor import FileProcessor, FileProcessorProps
from infrastructure.jobs.glue_job import GlueJobFamily, GlueStage
from infrastructure.jobs.glue_jobs import GlueJobs, GlueJobsProps
from infrastructure.jobs.kind_jobs import KindJobs, KindJobsProps
from infrastructure.jobs.streaming import Streaming, StreamingProps
from odp.config.datasets import of_engine
from odp.config.models import CadenceMode, EngineName
from odp.contracts.base import LedgerTables
from odp.contracts.datasets import LakeRoots
from odp.contracts.job_kinds import DATASET_JOB, FILE_PROCESSOR, STREAMING_JOB, JobDeployment, engines_in_use
from odp.naming import DATASET_CONFIG, DATASET_RUN_HISTORY, PROCESSING_TRACKER, PROCESSING_TRACKER_HISTORY

# The kinds with constructs of their own (below); any other registered kind is deployed as KindJobs.
BUILT_IN_KINDS = (FILE_PROCESSOR.name, DATASET_JOB.name, STREAMING_JOB.name)


@dataclass(frozen=True)
class Jobs:
    """What the jobs layer built: every Glue job family (``families``: whose roles sync the catalog), the EMR
    Serverless application (None when nothing runs there), the File Processor of each cadence, and the dataset flow
    (None without datasets)."""

    glue_jobs: GlueJobs
    processors: dict[str, FileProcessor]
    streaming: Streaming
    families: list[GlueJobFamily] = field(default_factory=list)
    emr: EmrServerless | None = None
    datasets: Datasets | None = None


def glue_stage(context: DeploymentContext) -> GlueStage:
    """What every job family takes from the stage."""
    storage = context.storage
    return GlueStage(
        environment=context.name,
        network=context.network,
        buckets=storage.buckets,
        zone_keys=storage.keys,
        state_key=storage.state_key,
        artifacts=context.assets.glue,
        database_prefix=context.config.environments.database_prefix,
    )


def job_deployment(context: DeploymentContext, ingest: Ingest) -> JobDeployment:
    """What every job's static arguments name, as the stack's resources (their names as CloudFormation references
    where the jobs always referred to them)."""
    buckets = context.storage.buckets
    return JobDeployment(
        environment=context.name,
        roots=LakeRoots(
            raw=f"s3://{buckets['raw'].bucket_name}",
            conformed=f"s3://{buckets['conformed'].bucket_name}",
            purpose_built=f"s3://{buckets['purpose_built'].bucket_name}",
        ),
        artifacts_root=f"s3://{buckets['artifacts'].bucket_name}",
        tracker_tables=ingest.tracking.names,
        dataset_history_table=ingest.tracking.table(DATASET_RUN_HISTORY).table_name,
        dataset_config_table=ingest.tracking.table(DATASET_CONFIG).table_name,
        ledger=LedgerTables(
            ingest.tracking.table(PROCESSING_TRACKER).table_name,
            ingest.tracking.table(PROCESSING_TRACKER_HISTORY).table_name,
        ),
        alerts_topic_arn=context.alerts_topic.topic_arn,
        history_retention_days=context.environment.data_retention_days,
    )


def build_jobs(stack: Stack, context: DeploymentContext, ingest: Ingest) -> Jobs:
    """Every job kind's jobs, engines and state machines (see the module docstring)."""
    config, stage, deployment = context.config, glue_stage(context), job_deployment(context, ingest)
    glue_jobs = GlueJobs(
        stack,
        "Glue",
        GlueJobsProps(
            stage=stage,
            cadences=config.cadences.cadences,
            tracking=ingest.tracking,
            deployment=deployment,
            databases=[table.database for table in config.tables],
        ),
    )
    emr = _emr_serverless(stack, context, stage, ingest, glue_jobs)
    processors = {
        name: _file_processor(stack, context, ingest, glue_jobs=glue_jobs, emr=emr, name=name)
        for name in config.cadences.cadences
    }
    streaming = Streaming(
        stack,
        "Streaming",
        props=StreamingProps(
            stage=stage,
            streams=config.streams.streams,
            tables=config.tables,
            glue_jobs=glue_jobs,
            tracking=ingest.tracking,
            alerts_topic=context.alerts_topic,
            dashboard=context.dashboard,
            deployment=deployment,
            removal_policy=context.removal_policy,
        ),
    )
    families: list[GlueJobFamily] = [glue_jobs, *([streaming.family] if config.streams.streams else [])]
    for kind in context.kinds:
        units = kind.units_of(config)
        if kind.name not in BUILT_IN_KINDS and units:
            props = KindJobsProps(stage, kind, units, deployment, glue_jobs.code)
            families.append(KindJobs(stack, f"Jobs-{kind.name}", props))
    datasets = _datasets(
        stack,
        context,
        ingest,
        stage=stage,
        glue_jobs=glue_jobs,
        emr=emr,
        processors=processors,
        families=families,
        deployment=deployment,
    )
    return Jobs(glue_jobs, processors, streaming, families, emr, datasets)


def _emr_serverless(
    stack: Stack, context: DeploymentContext, stage: GlueStage, ingest: Ingest, glue_jobs: GlueJobs
) -> EmrServerless | None:
    """The EMR Serverless application, only when a cadence or a dataset runs there. Leases record the job run that
    holds them; the planner and either engine's runs ask the holder's engine whether it ended."""
    glue_jobs.grant_read_job_runs(glue_jobs.role)
    glue_jobs.grant_read_job_runs(ingest.batch_manager.function)
    config = context.config
    if EngineName.EMR_SERVERLESS not in engines_in_use(config):
        return None
    emr = EmrServerless(
        stack,
        "EmrServerless",
        EmrServerlessProps(
            stage=stage,
            tracking=ingest.tracking,
            # the raw databases, and the datasets' databases when it refreshes datasets
            databases=[table.database for table in config.tables]
            + sorted({dataset.database for dataset in of_engine(config.datasets, EngineName.EMR_SERVERLESS)}),
            alerts_topic=context.alerts_topic,
            removal_policy=context.removal_policy,
            log_retention=context.log_retention,
        ),
    )
    glue_jobs.grant_read_job_runs(emr.role)  # a lease may be held by either engine's run
    for grantee in (emr.role, glue_jobs.role, ingest.batch_manager.function):
        emr.grant_read_job_runs(grantee)
    return emr


def _file_processor(
    stack: Stack,
    context: DeploymentContext,
    ingest: Ingest,
    *,
    glue_jobs: GlueJobs,
    emr: EmrServerless | None,
    name: str,
) -> FileProcessor:
    cadence = context.config.cadences.cadences[name]
    on_emr = cadence.engine is EngineName.EMR_SERVERLESS
    return FileProcessor(
        stack,
        f"FileProcessor-{name}",
        FileProcessorProps(
            environment=context.name,
            cadence_name=name,
            cadence=cadence,
            batch_manager=ingest.batch_manager.function,
            job_name=glue_jobs.job_names[name],
            job_arn=glue_jobs.job_arn(name),
            alerts_topic=context.alerts_topic,
            key=context.state_key,
            plans=context.storage.buckets["artifacts"],
            removal_policy=context.removal_policy,
            log_retention=context.log_retention,
            static_arguments=glue_jobs.contract_arguments[name],
            engine=emr if on_emr and emr is not None else GLUE,
        ),
    )


def _datasets(
    stack: Stack,
    context: DeploymentContext,
    ingest: Ingest,
    *,
    stage: GlueStage,
    glue_jobs: GlueJobs,
    emr: EmrServerless | None,
    processors: dict[str, FileProcessor],
    families: list[GlueJobFamily],
    deployment: JobDeployment,
) -> Datasets | None:
    """The dataset job and its state machine, started after each File Processor execution (None without datasets)."""
    config = context.config
    if not config.datasets:
        return None
    dataset_job = DatasetJob(
        stack,
        "DatasetJob",
        DatasetJobProps(
            stage=stage,
            datasets=config.datasets,
            history_table=ingest.tracking.table(DATASET_RUN_HISTORY),
            alerts_topic=context.alerts_topic,
            library=glue_jobs.code,
            ledger_tracker=ingest.tracking.table(PROCESSING_TRACKER),
            ledger_history=ingest.tracking.table(PROCESSING_TRACKER_HISTORY),
            table_config=ingest.tracking.table("table_config"),
            dataset_config=ingest.tracking.table(DATASET_CONFIG),
            deployment=deployment,
        ),
    )
    families.append(dataset_job)
    grant_dataset_engines(dataset_job, emr)
    return Datasets(
        stack,
        "Datasets",
        DatasetsProps(
            environment=context.name,
            datasets=config.datasets,
            job=dataset_job,
            state_key=context.state_key,
            alerts_topic=context.alerts_topic,
            dashboard=context.dashboard,
            file_processors=[processor.state_machine for processor in processors.values()],
            removal_policy=context.removal_policy,
            log_retention=context.log_retention,
            emr_serverless=emr,
            warm_ticks=any(cadence.mode is CadenceMode.WARM for cadence in config.cadences.cadences.values()),
        ),
    )
