"""Query: an Athena workgroup whose encrypted result location is enforced, a named query per raw database that
validates its tables' row counts, and one per dataset (rows and distinct keys)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aws_cdk import RemovalPolicy
from aws_cdk import aws_athena as athena
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from odp.config.datasets import DatasetConfig
from odp.config.models import TableConfig, TableMode
from odp.naming import resource_prefix


def row_count_select(table: TableConfig) -> str:
    """One table's line of its database's row-count query: its name, rows, distinct keys (current-snapshot tables:
    equal to the rows when the table is sound; otherwise NULL) and whether it is valid."""
    # Database and table names are validated identifiers ([a-z0-9_]) from config, never user input.
    target = f'"{table.database}"."{table.target_table}"'
    if table.mode == TableMode.CURRENT:
        keys = "COUNT(DISTINCT _hoodie_record_key)"
        return (
            f"SELECT '{table.target_table}' AS table_name, COUNT(*) AS row_count, {keys} AS distinct_keys, "  # noqa: S608
            f"COUNT(*) = {keys} AS valid FROM {target}"
        )
    return (
        f"SELECT '{table.target_table}' AS table_name, COUNT(*) AS row_count, CAST(NULL AS BIGINT) AS distinct_keys, "  # noqa: S608
        f"COUNT(*) > 0 AS valid FROM {target}"
    )


# Tables of one named query: 200 lines of about 250 bytes stay far below Athena's 262,144-byte query string.
TABLES_PER_QUERY = 200


def row_count_queries(tables: Sequence[TableConfig]) -> dict[str, tuple[str, int, str]]:
    """Named query name -> (database, part number, SQL): one per raw database, its tables' row counts as one UNION
    ALL, in parts of :data:`TABLES_PER_QUERY` tables (``row-count <database>``, ``row-count <database> (part 2 of
    3)``). One per database, not per table: a named query is a stack resource, and a fleet of thousands of tables
    must not be thousands of them (issue 47)."""
    by_database: dict[str, list[TableConfig]] = {}
    for table in tables:
        by_database.setdefault(table.database, []).append(table)
    queries: dict[str, tuple[str, int, str]] = {}
    for database, members in sorted(by_database.items()):
        parts = [members[start : start + TABLES_PER_QUERY] for start in range(0, len(members), TABLES_PER_QUERY)]
        for number, part in enumerate(parts, start=1):
            name = f"row-count {database}" + (f" (part {number} of {len(parts)})" if len(parts) > 1 else "")
            queries[name] = (database, number, "\nUNION ALL\n".join(row_count_select(table) for table in part))
    return queries


def dataset_query(dataset: DatasetConfig) -> str:
    """Rows and distinct keys of a dataset (equal when the dataset is sound)."""
    # Names are validated identifiers ([a-z0-9_]) from config, never user input.
    target = f'"{dataset.database}"."{dataset.name}"'
    keys = "COUNT(DISTINCT _hoodie_record_key)"
    return f"SELECT COUNT(*) AS row_count, {keys} AS distinct_keys, COUNT(*) = {keys} AS valid FROM {target}"  # noqa: S608


ENGINE_VERSION = "Athena engine version 3"


def workgroup_configuration(
    results_bucket: s3.IBucket, key: kms.IKey, *, prefix: str = "results/", bytes_scanned_cutoff: int | None = None
) -> athena.CfnWorkGroup.WorkGroupConfigurationProperty:
    """An enforced workgroup configuration: engine v3, CloudWatch metrics, results SSE-KMS with ``key`` under
    ``s3://<results_bucket>/<prefix>``, and (when given) a limit of bytes scanned per query."""
    return athena.CfnWorkGroup.WorkGroupConfigurationProperty(
        enforce_work_group_configuration=True,
        publish_cloud_watch_metrics_enabled=True,
        bytes_scanned_cutoff_per_query=bytes_scanned_cutoff,
        engine_version=athena.CfnWorkGroup.EngineVersionProperty(selected_engine_version=ENGINE_VERSION),
        result_configuration=athena.CfnWorkGroup.ResultConfigurationProperty(
            output_location=f"s3://{results_bucket.bucket_name}/{prefix}",
            encryption_configuration=athena.CfnWorkGroup.EncryptionConfigurationProperty(
                encryption_option="SSE_KMS", kms_key=key.key_arn
            ),
        ),
    )


def new_workgroup(
    scope: Construct,
    construct_id: str,
    *,
    name: str,
    description: str,
    removal_policy: RemovalPolicy,
    configuration: athena.CfnWorkGroup.WorkGroupConfigurationProperty,
) -> athena.CfnWorkGroup:
    """An enabled workgroup; a DESTROY environment deletes it with its saved queries (otherwise deletion fails)."""
    return athena.CfnWorkGroup(
        scope,
        construct_id,
        name=name,
        description=description,
        state="ENABLED",
        recursive_delete_option=removal_policy == RemovalPolicy.DESTROY,
        work_group_configuration=configuration,
    )


def add_row_count_queries(
    scope: Construct, tables: Sequence[TableConfig], work_group: str
) -> dict[str, athena.CfnNamedQuery]:
    """The row-count named queries of ``tables``' raw databases (:func:`row_count_queries`), children of ``scope``
    (``RowCount-<database>[-<part>]``) in ``work_group`` (the workgroup's Ref, in this stack or another: a catalog
    stack's queries import it)."""
    return {
        name: athena.CfnNamedQuery(
            scope,
            f"RowCount-{database}" + (f"-{number}" if number > 1 else ""),
            name=name,
            description=f"Rows and distinct keys of each table of {database}, and whether each is valid",
            database=database,
            work_group=work_group,
            query_string=sql,
        )
        for name, (database, number, sql) in row_count_queries(tables).items()
    }


@dataclass(frozen=True)
class QueryProps:
    """The Athena side of an environment.

    Attributes:
        results_bucket: where query results go (``results/``), encrypted with ``key`` (SSE-KMS, enforced).
        tables: one named query per raw database of these tables (in parts of TABLES_PER_QUERY tables): the tables
            of the sources this stack holds (a catalog stack adds its own with :func:`add_row_count_queries`).
        datasets: one named query per dataset (rows and distinct keys; default none).
        removal_policy: DESTROY also deletes the workgroup's saved queries with it; RETAIN (default) keeps them.
    """

    environment: str
    results_bucket: s3.IBucket
    key: kms.IKey
    tables: Sequence[TableConfig]
    removal_policy: RemovalPolicy = RemovalPolicy.RETAIN
    datasets: Sequence[DatasetConfig] = ()


class Query(Construct):
    """The workgroup ``odp-<env>``, a named query per raw database and one per dataset (each refers to the
    workgroup by Ref)."""

    def __init__(self, scope: Construct, construct_id: str, props: QueryProps) -> None:
        super().__init__(scope, construct_id)
        environment, results_bucket, key = props.environment, props.results_bucket, props.key
        removal_policy, tables = props.removal_policy, props.tables
        self.workgroup_name = resource_prefix(environment)
        self.workgroup = new_workgroup(
            self,
            "WorkGroup",
            name=self.workgroup_name,
            description=f"ODP {environment}: queries over the lake, results encrypted with KMS",
            removal_policy=removal_policy,
            configuration=workgroup_configuration(results_bucket, key),
        )
        self.queries = add_row_count_queries(self, tables, self.workgroup.ref)
        self.dataset_queries = {
            dataset.name: athena.CfnNamedQuery(
                self,
                f"Dataset-{dataset.name}",
                name=f"dataset {dataset.name}",
                description=f"Rows and distinct keys of {dataset.zone.value} dataset {dataset.database}.{dataset.name}",
                database=dataset.database,
                work_group=self.workgroup.ref,  # a Ref: CloudFormation creates the workgroup first
                query_string=dataset_query(dataset),
            )
            for dataset in props.datasets
        }
