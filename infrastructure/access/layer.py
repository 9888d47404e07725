"""The access layer: the catalog databases, the Athena workgroup and queries, and (where access.yaml names consumers)
Lake Formation with the consumers' views and BI workgroup."""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Stack

from infrastructure.access.catalog import Catalog, CatalogProps
from infrastructure.access.lake_formation import JobCatalogAccess, LakeFormation, LakeFormationProps
from infrastructure.access.query import Query, QueryProps
from infrastructure.foundation.context import DeploymentContext
from infrastructure.jobs.layer import Jobs
from odp.config.access import plan_grants


@dataclass(frozen=True)
class Access:
    """What the access layer built: the Query construct, and Lake Formation where access.yaml names consumers."""

    query: Query
    lake_formation: LakeFormation | None


def build_access(stack: Stack, context: DeploymentContext, jobs: Jobs) -> Access:
    """The catalog, the workgroup and, with consumers, Lake Formation (every job role may sync the databases it
    writes)."""
    config, storage = context.config, context.storage
    catalog = Catalog(stack, "Catalog", CatalogProps(tables=config.tables, zone_buckets=storage.buckets))
    query = Query(
        stack,
        "Query",
        QueryProps(
            environment=context.name,
            results_bucket=storage.athena_results,
            key=context.state_key,
            tables=config.tables,
            removal_policy=context.removal_policy,
            datasets=config.datasets,
        ),
    )
    lake_formation = None
    if config.access.consumers:
        account = context.environment.account
        lake_formation = LakeFormation(
            stack,
            "LakeFormation",
            LakeFormationProps(
                environment=context.name,
                plan=plan_grants(
                    config.access, config.tables, config.datasets, environment=context.name, account=account
                ),
                databases=catalog.databases,
                zone_buckets=storage.buckets,
                zone_keys=storage.keys,
                jobs=[
                    *(JobCatalogAccess(family.role, family.props.databases) for family in jobs.families),
                    *([] if jobs.emr is None else [JobCatalogAccess(jobs.emr.role, jobs.emr.props.databases)]),
                ],
                results_bucket=storage.athena_results,
                results_key=context.state_key,
                views=context.assets.views,
                removal_policy=context.removal_policy,
            ),
        )
    return Access(query, lake_formation)
