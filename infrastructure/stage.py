"""The stage of one environment: the data-lake stack composed layer by layer (infrastructure/<layer>/layer.py), the
catalog stacks of config/catalog_stacks.yaml (after it: they import its buckets and workgroup), plus (when a DR region
is configured) a small stack in that region holding the key of the table replicas. Every stack has a resource budget
(resource_budget.py; docs/decisions/034)."""

from __future__ import annotations

from aws_cdk import Environment, RemovalPolicy, Stack, Stage, Tags
from aws_cdk import aws_kms as kms
from constructs import Construct

from infrastructure.access.catalog_stack import CatalogStack, CatalogStackProps
from infrastructure.access.layer import build_access
from infrastructure.assets import BuiltAssets
from infrastructure.foundation.context import REMOVAL_POLICIES, DeploymentContext
from infrastructure.foundation.layer import build_foundation
from infrastructure.foundation.observability import log_retention
from infrastructure.ingest.layer import build_ingest
from infrastructure.jobs.layer import build_jobs
from infrastructure.operations.layer import build_operations
from infrastructure.operations.monitoring import Monitoring, MonitoringProps
from infrastructure.resource_budget import enforce_resource_budget
from odp.config.catalog_stacks import CATALOG_STACKS_FILE, DATA_LAKE_STACK
from odp.config.loader import OdpConfig
from odp.config.models import Environment as EnvironmentConfig
from odp.contracts.job_kinds import JOB_KINDS, JobKind
from odp.naming import resource_prefix


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
    """Every resource of one environment, built layer by layer over one deployment context: foundation (buckets,
    keys, network), the alerts topic and dashboard, ingest (trackers, Lambdas), jobs (every job kind on its engine),
    access (catalog, queries, Lake Formation), operations (alarms, the post-deploy role)."""

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
        kinds: tuple[JobKind, ...] = JOB_KINDS,
    ) -> None:
        self._availability_zones = tuple(environment.availability_zones)
        super().__init__(
            scope,
            construct_id,
            env=Environment(account=environment.account, region=environment.region),
            description=f"ODP data lake, environment {name}",
        )
        storage, network = build_foundation(self, name, environment, config)
        monitoring = Monitoring(
            self,
            "Monitoring",
            MonitoringProps(environment=name, key=storage.state_key, alarm_email=environment.alarm_email),
        )
        context = DeploymentContext(
            name=name,
            environment=environment,
            config=config,
            assets=assets,
            removal_policy=REMOVAL_POLICIES[environment.removal_policy],
            log_retention=log_retention(environment.data_retention_days),
            storage=storage,
            network=network,
            alerts_topic=monitoring.topic,
            dashboard=monitoring.dashboard,
            kinds=kinds,
        )
        ingest = build_ingest(self, context, replica_key_arn)
        self.jobs = build_jobs(self, context, ingest)
        self.access = access = build_access(self, context, self.jobs)
        self.deploy_access = build_operations(
            self, context, monitoring, ingest, self.jobs, lake_formation=access.lake_formation
        )
        self.storage, self.tracking = storage, ingest.tracking
        self.glue_jobs, self.processors, self.streaming = self.jobs.glue_jobs, self.jobs.processors, self.jobs.streaming
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
        self,
        scope: Construct,
        construct_id: str,
        *,
        name: str,
        config: OdpConfig,
        assets: BuiltAssets,
        kinds: tuple[JobKind, ...] = JOB_KINDS,
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
                removal=REMOVAL_POLICIES[environment.removal_policy],
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
            kinds=kinds,
        )
        if replica_stack is not None:
            self.data_lake.add_stack_dependency(replica_stack)
            enforce_resource_budget(replica_stack, "the DR-region key stack holds one key and its alias")
        enforce_resource_budget(
            self.data_lake,
            f"list new sources under a catalog stack in config/{CATALOG_STACKS_FILE} "
            "(python -m odp.config assign-stacks <source>...; never a source already deployed)",
        )
        self.catalog_stacks: dict[str, CatalogStack] = {}
        for stack_name, tables in config.catalog_stacks.tables_by_stack(config.tables).items():
            if stack_name == DATA_LAKE_STACK:
                continue
            catalog_stack = CatalogStack(
                self,
                stack_name,
                env=Environment(account=environment.account, region=environment.region),
                props=CatalogStackProps(
                    environment=name,
                    tables=tables,
                    zone_buckets=self.data_lake.storage.buckets,
                    work_group=self.data_lake.access.query.workgroup.ref,
                    removal_policy=REMOVAL_POLICIES[environment.removal_policy],
                ),
            )
            enforce_resource_budget(
                catalog_stack,
                f"list no more sources under {stack_name} in config/{CATALOG_STACKS_FILE}: assign-stacks puts new "
                "ones in a new catalog stack (--per-stack); never move a source already deployed",
            )
            self.catalog_stacks[stack_name] = catalog_stack
