"""CatalogStack: one catalog stack of an environment (``Catalog<n>``), holding the catalog of the sources
config/catalog_stacks.yaml lists under it: their Glue databases and their raw databases' row-count named queries
(docs/decisions/034). Every other source's catalog stays in the DataLake stack."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from aws_cdk import Environment, RemovalPolicy, Stack, Tags
from aws_cdk import aws_s3 as s3
from constructs import Construct

from infrastructure.access.catalog import Catalog, CatalogProps
from infrastructure.access.query import add_row_count_queries
from odp.config.models import TableConfig


@dataclass(frozen=True)
class CatalogStackProps:
    """What a catalog stack takes from its environment.

    Attributes:
        environment: the environment's name (its tags and description).
        tables: the tables of the sources this stack holds (their databases and row-count queries).
        zone_buckets: the DataLake stack's buckets by zone (each database's location: imported by name).
        work_group: the Ref of the DataLake stack's workgroup ``odp-<env>`` (the queries import it, so CloudFormation
            creates this stack after the DataLake stack).
        removal_policy: the environment's, for the databases (``CatalogProps``).
    """

    environment: str
    tables: Sequence[TableConfig]
    zone_buckets: Mapping[str, s3.IBucket]
    work_group: str
    removal_policy: RemovalPolicy = RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE


class CatalogStack(Stack):
    """``Catalog`` (the databases, same construct as the DataLake stack's) and ``Query/RowCount-<database>``."""

    def __init__(self, scope: Construct, construct_id: str, *, env: Environment, props: CatalogStackProps) -> None:
        if not props.tables:
            raise ValueError(
                f"catalog stack {construct_id}: no tables (CloudFormation refuses a stack without resources)"
            )
        super().__init__(
            scope,
            construct_id,
            env=env,
            description=f"ODP data lake, environment {props.environment}: catalog of the sources of {construct_id}",
        )
        self.catalog = Catalog(
            self,
            "Catalog",
            CatalogProps(tables=props.tables, zone_buckets=props.zone_buckets, removal_policy=props.removal_policy),
        )
        self.queries = add_row_count_queries(Construct(self, "Query"), props.tables, props.work_group)
        Tags.of(self).add("project", "odp")
        Tags.of(self).add("environment", props.environment)
