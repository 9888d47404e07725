"""Catalog: one Glue database per source and zone (raw databases as named in the table config)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from aws_cdk import RemovalPolicy, Stack
from aws_cdk import aws_glue as glue
from aws_cdk import aws_s3 as s3
from constructs import Construct

from odp.config.models import TableConfig

DERIVED_ZONES = ("conformed", "purpose_built")


def database_names(tables: Iterable[TableConfig]) -> dict[str, str]:
    """Glue database name -> zone: each table's raw database, and ``<source>_<zone>`` for the others."""
    names: dict[str, str] = {}
    for table in tables:
        names[table.database] = "raw"
        for zone in DERIVED_ZONES:
            names[f"{table.source.lower()}_{zone}"] = zone
    return dict(sorted(names.items()))


@dataclass(frozen=True)
class CatalogProps:
    """What Catalog needs: the databases of the configured tables.

    Attributes:
        tables: the configured tables.
        zone_buckets: Storage's buckets by zone (each database's location).
        removal_policy: what deleting the stack does to the databases (and the tables the jobs registered in them):
            kept by default, as the zone buckets under them are, except when their own create is rolled back (a
            kept named database would fail the retried create: docs/decisions/028); a stage passes its environment's
            (``removal_policy`` of config/environments.yaml).
    """

    tables: Iterable[TableConfig]
    zone_buckets: Mapping[str, s3.IBucket]
    removal_policy: RemovalPolicy = RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE


class Catalog(Construct):
    """Glue databases whose location is ``s3://<zone bucket>/<database>/``."""

    def __init__(self, scope: Construct, construct_id: str, props: CatalogProps) -> None:
        super().__init__(scope, construct_id)
        tables, zone_buckets = props.tables, props.zone_buckets
        account = Stack.of(self).account
        self.databases: dict[str, glue.CfnDatabase] = {}
        for name, zone in database_names(tables).items():
            self.databases[name] = glue.CfnDatabase(
                self,
                f"Database-{name}",
                catalog_id=account,
                database_input=glue.CfnDatabase.DatabaseInputProperty(
                    name=name,
                    description=f"ODP {zone} zone",
                    location_uri=f"s3://{zone_buckets[zone].bucket_name}/{name}/",
                ),
            )
            self.databases[name].apply_removal_policy(props.removal_policy)
