"""The deployment context: what every part of one environment's stack takes from the stage, given once."""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import RemovalPolicy
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns

from infrastructure.assets import BuiltAssets
from infrastructure.foundation.network import Network
from infrastructure.foundation.storage import Storage
from odp.config.loader import OdpConfig
from odp.config.models import Environment as EnvironmentConfig
from odp.config.models import RemovalPolicy as RemovalPolicyConfig
from odp.contracts.job_kinds import JOB_KINDS, JobKind

# ``retain`` is CloudFormation's RetainExceptOnCreate: kept when the stack is deleted or the resource leaves the
# template, deleted when the create that made it rolls back, so a failed first create leaves no named resource behind
# to block the retry (docs/decisions/028; tests/infra/test_removal.py).
REMOVAL_POLICIES = {
    RemovalPolicyConfig.RETAIN: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
    RemovalPolicyConfig.DESTROY: RemovalPolicy.DESTROY,
}


@dataclass(frozen=True)
class DeploymentContext:
    """One environment as every layer sees it.

    Attributes:
        name: the environment's name (``odp-<name>-...`` names every resource).
        environment: its configuration (environments.yaml).
        config: the whole configuration (tables, cadences, datasets, streams, access).
        assets: the asset folders built once per synth.
        removal_policy: what a stack deletion does to the environment's data (``RETAIN_ON_UPDATE_OR_DELETE`` unless
            the environment says ``destroy``).
        log_retention: every log group's retention (the environment's data retention, rounded up).
        storage: the buckets and their keys.
        network: the VPC, its endpoints and the Glue connections.
        alerts_topic: where every alarm and failure goes.
        dashboard: the environment's dashboard.
        kinds: the job kinds the environment deploys (odp.contracts.job_kinds: the registry, unless a test adds one).
    """

    name: str
    environment: EnvironmentConfig
    config: OdpConfig
    assets: BuiltAssets
    removal_policy: RemovalPolicy
    log_retention: logs.RetentionDays
    storage: Storage
    network: Network
    alerts_topic: sns.ITopic
    dashboard: cloudwatch.Dashboard
    kinds: tuple[JobKind, ...] = JOB_KINDS

    @property
    def state_key(self) -> kms.IKey:
        """The key of the trackers, the logs, the topic and the state machines."""
        return self.storage.state_key
