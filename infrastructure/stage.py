"""The stage of one environment: the data-lake stack composed from the constructs, plus (when a DR
region is configured) a small stack in that region holding the key of the table replicas."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aws_cdk import Environment, RemovalPolicy, Stack, Stage, Tags
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from constructs import Construct

from infrastructure.assets import GlueArtifacts
from infrastructure.batch_manager import BatchManager, BatchManagerProps
from infrastructure.canary import canary_jobs
from infrastructure.catalog import Catalog, CatalogProps
from infrastructure.datasets import DatasetJob, DatasetJobProps, Datasets, DatasetsProps, grant_dataset_engines
from infrastructure.deploy_access import DeployAccess, DeployAccessProps
from infrastructure.emr_serverless import EmrServerless, EmrServerlessProps, needed
from infrastructure.file_manager import FileManager, FileManagerProps
from infrastructure.file_processor import EmrServerlessRun, FileProcessor, FileProcessorProps
from infrastructure.glue_job import GlueStage
from infrastructure.glue_jobs import GlueJobs, GlueJobsProps
from infrastructure.lake_formation import JobCatalogAccess, LakeFormation, LakeFormationProps
from infrastructure.monitoring import Monitoring, MonitoringProps
from infrastructure.network import Network, NetworkProps
from infrastructure.query import Query, QueryProps
from infrastructure.storage import RetentionSettings, Storage, StorageProps
from infrastructure.streaming import Streaming, StreamingProps
from infrastructure.tracking import Tracking, TrackingProps
from odp.config.access import plan_grants
from odp.config.datasets import of_engine
from odp.config.loader import OdpConfig
from odp.config.models import Engine
from odp.config.models import Environment as EnvironmentConfig
from odp.config.models import RemovalPolicy as RemovalPolicyConfig
from odp.config.views import View
from odp.naming import DATASET_RUN_HISTORY, PROCESSING_TRACKER, resource_prefix

_REMOVAL = {RemovalPolicyConfig.RETAIN: RemovalPolicy.RETAIN, RemovalPolicyConfig.DESTROY: RemovalPolicy.DESTROY}


@dataclass(frozen=True)
class BuiltAssets:
    """Asset folders built once per synth and shared by every stage."""

    lambda_code: Path
    glue: GlueArtifacts
    views: tuple[View, ...] = ()  # config/views/*.sql, checked once per synth (deployed where consumers exist)


_RETENTION_DAYS = {
    1: logs.RetentionDays.ONE_DAY,
    3: logs.RetentionDays.THREE_DAYS,
    5: logs.RetentionDays.FIVE_DAYS,
    7: logs.RetentionDays.ONE_WEEK,
    14: logs.RetentionDays.TWO_WEEKS,
    30: logs.RetentionDays.ONE_MONTH,
    60: logs.RetentionDays.TWO_MONTHS,
    90: logs.RetentionDays.THREE_MONTHS,
    120: logs.RetentionDays.FOUR_MONTHS,
    150: logs.RetentionDays.FIVE_MONTHS,
    180: logs.RetentionDays.SIX_MONTHS,
    365: logs.RetentionDays.ONE_YEAR,
    400: logs.RetentionDays.THIRTEEN_MONTHS,
    545: logs.RetentionDays.EIGHTEEN_MONTHS,
    731: logs.RetentionDays.TWO_YEARS,
    1827: logs.RetentionDays.FIVE_YEARS,
    3653: logs.RetentionDays.TEN_YEARS,
}


def log_retention(days: int) -> logs.RetentionDays:
    """The shortest CloudWatch retention that keeps logs at least ``days`` days (ten years at most)."""
    return next((_RETENTION_DAYS[d] for d in sorted(_RETENTION_DAYS) if d >= days), logs.RetentionDays.TEN_YEARS)


def replica_key_alias(environment: str) -> str:
    return f"alias/{resource_prefix(environment)}-state-replica"


class ReplicaKeyStack(Stack):
    """In the DR region: the KMS key the tracker-table replicas are encrypted with."""

    def __init__(self, scope: Construct, construct_id: str, *, name: str, env: Environment, removal: RemovalPolicy):
        super().__init__(scope, construct_id, env=env, description=f"ODP {name}: DR-region key of the tracker replicas")
        self.key = kms.Key(
            self,
            "StateReplicaKey",
            alias=replica_key_alias(name),
            description=f"ODP {name}: tracker-table replicas",
            enable_key_rotation=True,
            removal_policy=removal,
        )
        # Known in advance (alias ARN), so the main stack needs no cross-region reference.
        self.alias_arn = f"arn:{self.partition}:kms:{self.region}:{self.account}:{replica_key_alias(name)}"


class DataLakeStack(Stack):
    """Every resource of one environment, composed from one construct per concern."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        name: str,
        environment: EnvironmentConfig,
        config: OdpConfig,
        assets: BuiltAssets,
        replica_key_arn: str | None,
    ) -> None:
        self._availability_zones = tuple(environment.availability_zones)
        super().__init__(
            scope,
            construct_id,
            env=Environment(account=environment.account, region=environment.region),
            description=f"ODP data lake, environment {name}",
        )
        removal = _REMOVAL[environment.removal_policy]
        retention = log_retention(environment.data_retention_days)
        cadences = config.cadences.cadences

        storage = Storage(
            self,
            "Storage",
            StorageProps(
                environment=name,
                retention=RetentionSettings(
                    staging_days=environment.staging_retention_days, data_days=environment.data_retention_days
                ),
                removal_policy=removal,
            ),
        )
        key = storage.state_key
        network = Network(
            self,
            "Network",
            NetworkProps(
                environment=name,
                cidr=environment.vpc_cidr,
                log_key=key,
                availability_zones=tuple(environment.availability_zones),
                sns_endpoint=bool(config.datasets),
                kinesis_endpoint=bool(config.streams.streams),
                lake_formation_endpoint=bool(config.access.consumers),
                emr_serverless_endpoint=needed(cadences, config.datasets),
                removal_policy=removal,
                log_retention=retention,
            ),
        )
        tracking = Tracking(
            self,
            "Tracking",
            TrackingProps(
                environment=name,
                key=key,
                removal_policy=removal,
                dr_region=environment.dr_region,
                replica_key_arn=replica_key_arn,
            ),
        )
        catalog = Catalog(self, "Catalog", CatalogProps(tables=config.tables, zone_buckets=storage.buckets))
        monitoring = Monitoring(
            self, "Monitoring", MonitoringProps(environment=name, key=key, alarm_email=environment.alarm_email)
        )
        # What both functions share (FunctionOwner of infrastructure/lambda_function.py).
        functions = {
            "environment": name,
            "tracking": tracking,
            "key": key,
            "code_dir": assets.lambda_code,
            "removal_policy": removal,
            "log_retention": retention,
        }
        file_manager = FileManager(
            self,
            "FileManager",
            FileManagerProps(staging=storage.staging, sources=[table.source for table in config.tables], **functions),
        )
        batch_manager = BatchManager(
            self,
            "BatchManager",
            BatchManagerProps(**functions),
        )
        glue_stage = GlueStage(
            environment=name,
            network=network,
            buckets=storage.buckets,
            zone_keys=storage.keys,
            state_key=key,
            artifacts=assets.glue,
        )
        glue_jobs = GlueJobs(
            self,
            "Glue",
            GlueJobsProps(
                stage=glue_stage,
                cadences=cadences,
                tracking=tracking,
                history_retention_days=environment.data_retention_days,
                databases=[table.database for table in config.tables],
            ),
        )
        # Leases record the job run that holds them; both the planner and the job ask Glue whether it ended.
        glue_jobs.grant_read_job_runs(glue_jobs.role)
        glue_jobs.grant_read_job_runs(batch_manager.function)
        emr = None  # the EMR Serverless application, only when a cadence or a dataset runs there
        if needed(cadences, config.datasets):
            emr = EmrServerless(
                self,
                "EmrServerless",
                EmrServerlessProps(
                    stage=glue_stage,
                    tracking=tracking,
                    # the raw databases, and the datasets' databases when it refreshes datasets
                    databases=[table.database for table in config.tables]
                    + sorted({dataset.database for dataset in of_engine(config.datasets, Engine.EMR_SERVERLESS)}),
                    alerts_topic=monitoring.topic,
                    removal_policy=removal,
                    log_retention=retention,
                ),
            )
            glue_jobs.grant_read_job_runs(emr.role)  # a lease may be held by either engine's run
            for grantee in (emr.role, glue_jobs.role, batch_manager.function):
                emr.grant_read_job_runs(grantee)
        processors = {
            cadence_name: FileProcessor(
                self,
                f"FileProcessor-{cadence_name}",
                FileProcessorProps(
                    environment=name,
                    cadence_name=cadence_name,
                    cadence=cadence,
                    batch_manager=batch_manager.function,
                    job_name=glue_jobs.job_names[cadence_name],
                    job_arn=glue_jobs.job_arn(cadence_name),
                    alerts_topic=monitoring.topic,
                    key=key,
                    removal_policy=removal,
                    log_retention=retention,
                    emr_serverless=None
                    if emr is None or cadence.engine is not Engine.EMR_SERVERLESS
                    else EmrServerlessRun(emr, glue_jobs.contract_arguments[cadence_name], cadence.job_timeout_minutes),
                ),
            )
            for cadence_name, cadence in cadences.items()
        }
        query = Query(
            self,
            "Query",
            QueryProps(
                environment=name,
                results_bucket=storage.athena_results,
                key=key,
                tables=config.tables,
                removal_policy=removal,
            ),
        )
        # Streamed tables (config/streams.yaml): nothing is created while no stream is configured.
        self.streaming = Streaming(
            self,
            "Streaming",
            props=StreamingProps(
                stage=glue_stage,
                streams=config.streams.streams,
                tables=config.tables,
                glue_jobs=glue_jobs,
                tracking=tracking,
                monitoring=monitoring,
                removal_policy=removal,
            ),
        )
        job_families = [glue_jobs, *([self.streaming.family] if config.streams.streams else [])]
        if config.datasets:
            dataset_job = DatasetJob(
                self,
                "DatasetJob",
                DatasetJobProps(
                    stage=glue_stage,
                    datasets=config.datasets,
                    history_table=tracking.table(DATASET_RUN_HISTORY),
                    alerts_topic=monitoring.topic,
                    library=glue_jobs.code,
                    lease_table=tracking.table(PROCESSING_TRACKER),
                ),
            )
            job_families.append(dataset_job)
            grant_dataset_engines(dataset_job, emr)
            Datasets(
                self,
                "Datasets",
                DatasetsProps(
                    environment=name,
                    datasets=config.datasets,
                    job=dataset_job,
                    state_key=key,
                    alerts_topic=monitoring.topic,
                    dashboard=monitoring.dashboard,
                    file_processors=[processor.state_machine for processor in processors.values()],
                    workgroup=query.workgroup,
                    removal_policy=removal,
                    log_retention=retention,
                    emr_serverless=emr,
                ),
            )

        # Lake Formation, the consumers' views and BI workgroup: only where access.yaml names consumers.
        if config.access.consumers:
            LakeFormation(
                self,
                "LakeFormation",
                LakeFormationProps(
                    environment=name,
                    plan=plan_grants(
                        config.access, config.tables, config.datasets, environment=name, account=environment.account
                    ),
                    databases=catalog.databases,
                    zone_buckets=storage.buckets,
                    zone_keys=storage.keys,
                    jobs=[
                        *(JobCatalogAccess(family.role, family.props.databases) for family in job_families),
                        *([] if emr is None else [JobCatalogAccess(emr.role, emr.props.databases)]),
                    ],
                    results_bucket=storage.athena_results,
                    results_key=key,
                    views=assets.views,
                    removal_policy=removal,
                ),
            )

        monitoring.watch_queue("file-manager", file_manager.dead_letter_queue)
        monitoring.watch_function("file-manager", file_manager.function)
        monitoring.watch_function("batch-manager", batch_manager.function)
        monitoring.watch_glue_jobs(list(glue_jobs.job_names.values()))
        monitoring.watch_table_costs()
        for cadence_name, processor in processors.items():
            monitoring.watch_state_machine(cadence_name, processor.state_machine)
            monitoring.watch_freshness(cadence_name, cadences[cadence_name])
            monitoring.watch_quarantine(cadence_name)

        canary = canary_jobs(config, name)  # every job kind: the post-deploy canary starts each
        self.deploy_access = DeployAccess(
            self,
            "DeployAccess",
            DeployAccessProps(
                environment=name,
                deployment_account=config.environments.deployment.account,
                tracking=tracking,
                key=key,
                state_machines=[processor.state_machine for processor in processors.values()],
                glue_job_arns=[self.format_arn(service="glue", resource="job", resource_name=j.name) for j in canary],
                emr_serverless=emr,
            ),
        )
        self.storage = storage
        self.tracking = tracking
        self.glue_jobs = glue_jobs
        self.processors = processors
        Tags.of(self).add("project", "odp")
        Tags.of(self).add("environment", name)

    @property
    def availability_zones(self) -> list[str]:
        """The environment's AZs from config/environments.yaml (synth needs no context lookup, and
        ``<region>a`` names a different zone in each account, so it is never derived from the region)."""
        return list(self._availability_zones)


class OdpStage(Stage):
    """One environment: what its pipeline deploys (or what ``cdk deploy`` deploys without one)."""

    def __init__(
        self, scope: Construct, construct_id: str, *, name: str, config: OdpConfig, assets: BuiltAssets
    ) -> None:
        environment = config.environments.environments[name]
        super().__init__(scope, construct_id, env=Environment(account=environment.account, region=environment.region))
        replica_key_arn = None
        replica_stack = None
        if environment.dr_region:
            replica_stack = ReplicaKeyStack(
                self,
                "ReplicaKey",
                name=name,
                env=Environment(account=environment.account, region=environment.dr_region),
                removal=_REMOVAL[environment.removal_policy],
            )
            replica_key_arn = replica_stack.alias_arn
        self.data_lake = DataLakeStack(
            self,
            "DataLake",
            name=name,
            environment=environment,
            config=config,
            assets=assets,
            replica_key_arn=replica_key_arn,
        )
        if replica_stack is not None:
            self.data_lake.add_stack_dependency(replica_stack)
