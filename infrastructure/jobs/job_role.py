"""Role pieces every Spark job role of ODP shares, whatever runs it (a Glue job family, the EMR Serverless
application): the role itself (``job_role``), the File Processor's lake data (``grant_file_processor_data``), the
catalog sync per database (``grant_catalog_sync``, with the removal of the canary tables' entries:
``grant_canary_table_removal``) and CloudWatch metrics limited to named namespaces (``grant_metrics``).

:mod:`infrastructure.jobs.glue_job` and :mod:`infrastructure.jobs.engines.emr_serverless` both build their roles from
these, so the two engines' roles cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from aws_cdk import Stack, Token
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk.region_info import RegionInfo
from constructs import Construct

from infrastructure.grants import grant_key, grant_objects, grant_table
from infrastructure.ingest.tracking import Tracking
from infrastructure.nag import acknowledge
from infrastructure.policy_limits import enforce_managed_policy_limit, resource_chunks
from odp.naming import CANARY_TABLE_PREFIX

# Hudi's catalog sync (and Spark's catalog reads) on the databases of the family, and the VPC connections.
CATALOG_ACTIONS = (
    "glue:GetDatabase",
    "glue:GetDatabases",
    "glue:GetTable",
    "glue:GetTables",
    "glue:CreateTable",
    "glue:UpdateTable",
    "glue:GetPartition",
    "glue:GetPartitions",
    "glue:BatchGetPartition",
    "glue:CreatePartition",
    "glue:BatchCreatePartition",
    "glue:UpdatePartition",
    "glue:BatchUpdatePartition",
    "glue:DeletePartition",
    "glue:BatchDeletePartition",
    "glue:GetConnection",
)
# Spark with the Glue Data Catalog reads the `default` database when its session starts.
DEFAULT_DATABASE = "default"
# What the File Processor writes and reads in the trackers.
FILE_PROCESSOR_TABLES_WRITTEN = (
    "file_tracker",
    "file_tracker_history",
    "processing_tracker",
    "processing_tracker_history",
)
FILE_PROCESSOR_TABLES_READ = ("table_config", "batch_config")


def job_role(scope: Construct, construct_id: str, principal: iam.IPrincipal, *, description: str) -> iam.Role:
    """The role a Spark engine (``principal``: Glue, EMR Serverless) assumes to run ODP's jobs; the callers add
    the grants of their job kind from the functions below. Its catalog grants grow with the configured databases: the
    synth refuses it past IAM's managed policies a role (infrastructure/policy_limits.py)."""
    role = iam.Role(scope, construct_id, assumed_by=principal, description=description)
    enforce_managed_policy_limit(role, TOO_MANY_DATABASES)
    return role


TOO_MANY_DATABASES = (
    "its catalog grants name each configured database (infrastructure/jobs/job_role.py): set database_prefix in "
    "environments.yaml, a prefix every database starts with (docs/decisions/034), or put the tables of several "
    "sources in one database (a source's defaults: database)"
)


def glue_catalog_prefix(stack: Stack) -> tuple[str, str]:
    """``arn:<partition>:glue:<region>:<account>`` for the catalog grants, and the same as cdk-nag writes it in a
    finding. The partition is spelled out when the region is known: CDK then sizes the role's policies by their
    real length, where it counts every ARN holding a token as 150 characters (``@aws-cdk/aws-iam.arnSizeEstimate``)
    and would need twice the managed policies for the same databases (infrastructure/policy_limits.py)."""
    known = not Token.is_unresolved(stack.region)
    partition = RegionInfo.get(stack.region).partition if known else None
    if partition:
        prefix = f"arn:{partition}:glue:{stack.region}:{stack.account}"
        return prefix, prefix
    scope = f"glue:{stack.region}:{stack.account}"
    return f"arn:{stack.partition}:{scope}", f"arn:<AWS::Partition>:{scope}"


def catalog_scope(databases: Sequence[str], prefix: str | None) -> list[str]:
    """Pure: what a role's catalog grants name: each database, or one pattern ``<prefix>*`` where environments.yaml
    sets ``database_prefix`` (every configured database starts with it, checked when the configuration loads), so
    one statement grants any number of databases; none when the role has no database."""
    names = sorted(set(databases))
    return [f"{prefix}*"] if prefix is not None and names else names


def catalog_database_suffixes(databases: Sequence[str]) -> list[str]:
    """The catalog resources the jobs may sync into, as ARN suffixes: each configured database (and `default`) and
    its tables."""
    names = sorted(set(databases))
    return [
        *(f"database/{name}" for name in sorted({DEFAULT_DATABASE, *names})),
        *(f"table/{name}/*" for name in names),
    ]


def _chunked_statements(
    role: iam.Role, sid: str, actions: Sequence[str], catalog: str, suffixes: Sequence[str]
) -> None:
    """``actions`` on the catalog and ``suffixes``' resources, in statements cut to fit a managed policy each
    (infrastructure/policy_limits.py): ``sid``, then ``<sid>2``, ... Each names the catalog, which every call on a
    database or table needs too."""
    arns = [f"{catalog}:{suffix}" for suffix in suffixes]
    for number, chunk in enumerate(resource_chunks(arns), start=1):
        role.add_to_policy(
            iam.PolicyStatement(
                sid=sid if number == 1 else f"{sid}{number}",
                actions=list(actions),
                resources=[f"{catalog}:catalog", *chunk],
            )
        )


def grant_catalog_sync(
    role: iam.Role, databases: Sequence[str], *, prefix: str | None = None, connection_names: Sequence[str] = ()
) -> None:
    """Hudi's catalog sync on each database (``database/<db>``, ``table/<db>/*``, plus ``default``), or on the
    databases of ``prefix`` (:func:`catalog_scope`), and the named Glue connections, in as many statements as a
    managed policy's size needs; the ``table/<db>/*`` finding of each database is acknowledged on the role (whichever
    of its policies holds the statement)."""
    catalog, named = glue_catalog_prefix(Stack.of(role))
    scope = catalog_scope(databases, prefix)
    suffixes = [*catalog_database_suffixes(scope), *(f"connection/{name}" for name in connection_names)]
    _chunked_statements(role, "GlueCatalogSync", CATALOG_ACTIONS, catalog, suffixes)
    # on the role, not its DefaultPolicy: with many databases CDK moves statements into OverflowPolicy<n> managed
    # policies (a role's inline policies hold 10,240 characters), and the finding moves with them
    for database in scope:
        acknowledge(
            role,
            f"AwsSolutions-IAM5[Resource::{named}:table/{database}/*]",
            f"Hudi's catalog sync creates and updates the tables of database {database}, which change with config.",
        )
    if prefix is not None and scope:
        acknowledge(
            role,
            f"AwsSolutions-IAM5[Resource::{named}:database/{prefix}*]",
            f"environments.yaml's database_prefix: every configured database starts with {prefix} (checked when the "
            "configuration loads), so the catalog grants name the prefix, not each database (docs/decisions/034).",
        )
    grant_canary_table_removal(role, scope)


def canary_table_suffixes(databases: Sequence[str]) -> list[str]:
    """The canary tables' removal as ARN suffixes: each database and its ``_odp_canary_*`` tables
    (``odp.naming.CANARY_TABLE_PREFIX``: the job kinds' canary tables and their ``_ro`` / ``_rt`` entries); every
    statement names the catalog too (``_chunked_statements``)."""
    names = sorted(set(databases))
    return [
        *(f"database/{name}" for name in names),
        *(f"table/{name}/{CANARY_TABLE_PREFIX}*" for name in names),
    ]


def grant_canary_table_removal(role: iam.Role, databases: Sequence[str]) -> None:
    """``glue:DeleteTable`` on the canary tables of each database only (the post-deploy canary's table,
    etl/jobs/canary_table.py, removes its catalog entries; no other table of the catalog can be deleted)."""
    if not databases:
        return
    catalog, named = glue_catalog_prefix(Stack.of(role))
    _chunked_statements(role, "CanaryTableRemoval", ["glue:DeleteTable"], catalog, canary_table_suffixes(databases))
    for database in sorted(set(databases)):
        table = f"table/{database}/{CANARY_TABLE_PREFIX}*"
        acknowledge(
            role,
            f"AwsSolutions-IAM5[Resource::{named}:{table}]",
            f"The post-deploy canary removes its own canary table's catalog entries in {database} (the table, its _ro "
            "and _rt views); their names start with ODP's reserved _odp_canary_, which no configured table takes.",
        )


def grant_metrics(role: iam.Role, namespaces: Sequence[str], *, sid: str) -> None:
    """``cloudwatch:PutMetricData`` (no resource-level permission) only into ``namespaces`` (a condition).
    The ``Resource::*`` finding is the caller's to acknowledge, with the other resource-less actions of its role."""
    role.add_to_policy(
        iam.PolicyStatement(
            sid=sid,
            actions=["cloudwatch:PutMetricData"],
            resources=["*"],
            conditions={"StringEquals": {"cloudwatch:namespace": list(namespaces)}},
        )
    )


def grant_file_processor_data(
    role: iam.Role, buckets: Mapping[str, s3.IBucket], zone_keys: Mapping[str, kms.IKey], tracking: Tracking
) -> None:
    """What a File Processor run reads and writes: landed files (staging, its key), the Hudi tables (raw,
    write and delete), the trackers (write) and the configuration tables (read). The raw key is granted by the
    caller (a Glue family's S3 key, or the EMR role's lake keys)."""
    grant_objects(role, buckets["staging"], reason="The job reads any landed file of its tables.")
    grant_objects(
        role,
        buckets["raw"],
        write=True,
        delete=True,  # Hudi cleans old file versions and rewrites file groups
        reason="The job owns the Hudi tables under s3://raw/<database>/<table>/, any of them.",
    )
    for logical in FILE_PROCESSOR_TABLES_WRITTEN:
        grant_table(role, logical, tracking.table(logical), write=True)
    for logical in FILE_PROCESSOR_TABLES_READ:
        grant_table(role, logical, tracking.table(logical), write=False)
    grant_key(role, zone_keys["staging"], encrypt=False)


def grant_lake_formation_data_access(role: iam.Role) -> None:
    """``lakeformation:GetDataAccess`` (no resource-level permission): under Lake Formation (hybrid access mode,
    infrastructure/access/lake_formation.py) the engine asks Lake Formation for temporary credentials to a registered
    location; without it the job's reads and catalog sync of an opted-in table fail. The ``Resource::*``
    finding is the caller's to acknowledge, with the other resource-less actions of its role."""
    role.add_to_policy(
        iam.PolicyStatement(sid="LakeFormationDataAccess", actions=["lakeformation:GetDataAccess"], resources=["*"])
    )
