"""Query: an Athena workgroup whose encrypted result location is enforced, a named query per table that validates
its row count, and one per dataset (rows and distinct keys)."""

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


def row_count_query(table: TableConfig) -> str:
    """Row count of a table; for a current-snapshot table also its distinct keys, which must be equal."""
    # Database and table names are validated identifiers ([a-z0-9_]) from config, never user input.
    target = f'"{table.database}"."{table.target_table}"'
    if table.mode == TableMode.CURRENT:
        keys = "COUNT(DISTINCT _hoodie_record_key)"
        return f"SELECT COUNT(*) AS row_count, {keys} AS distinct_keys, COUNT(*) = {keys} AS valid FROM {target}"  # noqa: S608
    return f"SELECT COUNT(*) AS row_count, COUNT(*) > 0 AS valid FROM {target}"  # noqa: S608


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


@dataclass(frozen=True)
class QueryProps:
    """The Athena side of an environment.

    Attributes:
        results_bucket: where query results go (``results/``), encrypted with ``key`` (SSE-KMS, enforced).
        tables: one named query per table.
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
    """The workgroup ``odp-<env>`` and one named query per table and per dataset (each refers to the workgroup by
    Ref)."""

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
        self.queries: dict[str, athena.CfnNamedQuery] = {}
        for table in tables:
            query = athena.CfnNamedQuery(
                self,
                f"RowCount-{table.table_id}",
                name=f"row-count {table.table_id}",
                description=f"Validates the row count of {table.database}.{table.target_table}",
                database=table.database,
                work_group=self.workgroup.ref,
                query_string=row_count_query(table),
            )
            self.queries[table.table_id] = query
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
