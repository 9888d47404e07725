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
from odp.config.catalog_stacks import CATALOG_STACKS_FILE, DATA_LAKE_STACK


@dataclass(frozen=True)
class Access:
    """What the access layer built: the Query construct, and Lake Formation where access.yaml names consumers."""

    query: Query
    lake_formation: LakeFormation | None


def build_access(stack: Stack, context: DeploymentContext, jobs: Jobs) -> Access:
    """The catalog, the workgroup and, with consumers, Lake Formation (every job role may sync the databases it
    writes)."""
    config, storage = context.config, context.storage
    by_stack = config.catalog_stacks.tables_by_stack(config.tables)
    tables = by_stack[DATA_LAKE_STACK]  # the other sources' catalogs are in catalog stacks (stage.py)
    if config.access.consumers and len(by_stack) > 1:
        raise ValueError(
            f"Lake Formation with catalog stacks ({', '.join(sorted(set(by_stack) - {DATA_LAKE_STACK}))} in "
            f"{CATALOG_STACKS_FILE}) is not built yet: its database grants would have to follow each database into "
            "its stack (docs/decisions/034); keep every source in the DataLake stack while access.yaml names consumers"
        )
    catalog = Catalog(
        stack,
        "Catalog",
        CatalogProps(tables=tables, zone_buckets=storage.buckets, removal_policy=context.removal_policy),
    )
    query = Query(
        stack,
        "Query",
        QueryProps(
            environment=context.name,
            results_bucket=storage.athena_results,
            key=context.state_key,
            tables=tables,
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
