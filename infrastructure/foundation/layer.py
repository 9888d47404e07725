"""The foundation of one environment's stack: its buckets and keys, and its network."""

from __future__ import annotations

from aws_cdk import Stack

from infrastructure.foundation.context import REMOVAL_POLICIES
from infrastructure.foundation.network import Network, NetworkProps
from infrastructure.foundation.observability import log_retention
from infrastructure.foundation.storage import RetentionSettings, Storage, StorageProps
from odp.config.loader import OdpConfig
from odp.config.models import EngineName
from odp.config.models import Environment as EnvironmentConfig
from odp.contracts.job_kinds import engines_in_use


def build_foundation(
    stack: Stack, name: str, environment: EnvironmentConfig, config: OdpConfig
) -> tuple[Storage, Network]:
    """Storage (buckets and keys) and the network, with the interface endpoints the configuration needs."""
    removal = REMOVAL_POLICIES[environment.removal_policy]
    storage = Storage(
        stack,
        "Storage",
        StorageProps(
            environment=name,
            retention=RetentionSettings(
                staging_days=environment.staging_retention_days, data_days=environment.data_retention_days
            ),
            removal_policy=removal,
        ),
    )
    network = Network(
        stack,
        "Network",
        NetworkProps(
            environment=name,
            cidr=environment.vpc_cidr,
            log_key=storage.state_key,
            availability_zones=tuple(environment.availability_zones),
            sns_endpoint=bool(config.datasets),
            kinesis_endpoint=bool(config.streams.streams),
            lake_formation_endpoint=bool(config.access.consumers),
            emr_serverless_endpoint=EngineName.EMR_SERVERLESS in engines_in_use(config),
            removal_policy=removal,
            log_retention=log_retention(environment.data_retention_days),
        ),
    )
    return storage, network
