"""LakeFormation: config/access.yaml rendered as Lake Formation resources, and the consumers' views and
Athena workgroup.

What it creates (only when access.yaml names consumers; see infrastructure/README.md):

- the lake buckets' locations (raw, conformed, purpose-built) registered in **hybrid access mode** (an
  account migrating from IAM keeps working: a principal not opted in still reads through IAM), with a
  registration role that may use the buckets and their zone keys;
- ``DATA_LOCATION_ACCESS`` on those locations for the job roles only (S3 writes stay limited by IAM);
- the job roles' catalog permissions for Hudi's catalog sync: ``CREATE_TABLE`` / ``ALTER`` / ``DESCRIBE`` on
  each of their databases and ``ALL`` on the tables of those databases;
- the LF-Tags and each database's tags, and one ``PrincipalPermissions`` per grant of the
  :class:`odp.config.access.AccessPlan` that reaches tables created later (a database, every table of a database,
  an LF-Tag expression: ``AccessPlan.stack_grants``); nothing the file does not name;
- for the grants that name one table (a table, its columns, a data cells filter: ``AccessPlan.table_grants``), which
  Lake Formation refuses while the table does not exist, only what their applier needs
  (:meth:`LakeFormation.grant_table_grants`): ``python -m odp lake-grants`` applies them after the first run
  (docs/decisions/030), and a synth-time check refuses any Lake Formation resource naming a table the stack does
  not create (``table_references.py``);
- each ``config/views/*.sql`` as a Glue ``VIRTUAL_VIEW`` table, and the BI workgroup ``odp-<env>-bi``
  (enforced, results SSE-KMS under ``bi/``, a bytes-scanned limit per query), apart from the operators'.

Every literal name of another resource (a database, an LF-Tag key, a data cells filter, a registered
location) comes with a ``DependsOn`` on it (tests/support/ordering.py checks).

The stack deploys only where the CloudFormation execution role is a Lake Formation administrator:
:func:`admin_rule` makes it fail before any resource, naming the SSM parameter the bootstrap step writes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aws_cdk import CfnParameter, CfnResource, CfnRule, DefaultStackSynthesizer, Fn, RemovalPolicy, Stack, Token
from aws_cdk import aws_glue as glue
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lakeformation as lakeformation
from aws_cdk import aws_s3 as s3
from constructs import Construct

from infrastructure.access.query import new_workgroup, workgroup_configuration
from infrastructure.access.table_references import check_table_references
from infrastructure.grants import grant_key, grant_objects
from infrastructure.nag import acknowledge
from odp.config.access import (
    AccessFile,
    AccessPlan,
    DatabaseResource,
    LakeGrant,
    TableResource,
    TagPolicyResource,
)
from odp.config.views import View, glue_view_table
from odp.naming import resource_prefix
from odp.operations.lake_grants import APPLIER_PERMISSIONS, FILTER_ACTIONS, GRANT_ACTIONS, named_tables

LAKE_ZONES = ("raw", "conformed", "purpose_built")
# What Hudi's catalog sync does in a job's databases (create and alter tables, add partitions).
SYNC_DATABASE_PERMISSIONS = ("CREATE_TABLE", "ALTER", "DESCRIBE")
SYNC_TABLE_PERMISSIONS = ("ALL",)
DEFAULT_BYTES_SCANNED_CUTOFF = 100 * 1024**3  # 100 GiB per BI query


def cfn_exec_role_arn(account: str, region: str) -> str:
    """The role CloudFormation deploys with (cdk bootstrap, default qualifier), a literal: a Rule's assertion
    takes no Fn::Sub, and the stack is bound to its account and region."""
    partition = "aws-cn" if region.startswith("cn-") else "aws-us-gov" if region.startswith("us-gov-") else "aws"
    name = DefaultStackSynthesizer.DEFAULT_CLOUDFORMATION_ROLE_ARN.split(":role/")[1]
    name = name.replace("${Qualifier}", DefaultStackSynthesizer.DEFAULT_QUALIFIER)
    name = name.replace("${AWS::AccountId}", account).replace("${AWS::Region}", region)
    return f"arn:{partition}:iam::{account}:role/{name}"


def admin_parameter_name(environment: str) -> str:
    """The SSM parameter the Lake Formation bootstrap step writes (docs/deploying.md, "Lake Formation bootstrap")."""
    return f"/{resource_prefix(environment)}/lake-formation-admin"


@dataclass(frozen=True)
class JobCatalogAccess:
    """A job role and the databases its Hudi catalog sync writes."""

    role: iam.IRole
    databases: Sequence[str]


@dataclass(frozen=True)
class LakeFormationProps:
    """What LakeFormation needs.

    Attributes:
        environment: names the BI workgroup ``odp-<env>-bi`` and the bootstrap parameter.
        plan: ``odp.config.access.plan_grants(...)`` for this environment.
        databases: Catalog's Glue databases by name (every grant, tag, filter and view depends on its database).
        zone_buckets: the lake buckets by zone (``raw``, ``conformed``, ``purpose_built``), registered.
        zone_keys: their KMS keys (the registration role uses them for the jobs' and consumers' reads).
        jobs: the job roles: data location access and the catalog sync permissions.
        views: the checked views (``odp.config.views.check_views``), created as Glue views.
        results_bucket: the BI workgroup's results (``bi/``), encrypted with ``results_key``.
        results_key: the KMS key of the results bucket.
        bytes_scanned_cutoff: the BI workgroup's limit per query (default 100 GiB).
        check_admin: add the bootstrap rule (default yes; a bare-stack test without the SSM parameter may skip it).
        removal_policy: DESTROY also deletes the BI workgroup's saved queries.
    """

    environment: str
    plan: AccessPlan
    databases: Mapping[str, glue.CfnDatabase]
    zone_buckets: Mapping[str, s3.IBucket]
    zone_keys: Mapping[str, kms.IKey]
    jobs: Sequence[JobCatalogAccess]
    results_bucket: s3.IBucket
    results_key: kms.IKey
    views: Sequence[View] = ()
    bytes_scanned_cutoff: int = DEFAULT_BYTES_SCANNED_CUTOFF
    check_admin: bool = True
    removal_policy: RemovalPolicy = RemovalPolicy.RETAIN


def _id(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "", text.title())[:200]


class LakeFormation(Construct):
    """Lake Formation as configuration, the views and the BI workgroup (module docstring)."""

    def __init__(self, scope: Construct, construct_id: str, props: LakeFormationProps) -> None:
        super().__init__(scope, construct_id)
        self.props = props
        self.account = Stack.of(self).account
        if props.check_admin:
            self.admin_rule = admin_rule(self, props.environment)
        self.locations = self._register_locations()
        self.tags = {
            key: lakeformation.CfnTag(self, f"Tag-{key}", catalog_id=self.account, tag_key=key, tag_values=list(values))
            for key, values in props.plan.tags.items()
        }
        self._tag_databases()
        self.permissions: list[lakeformation.CfnPrincipalPermissions] = []
        for job_index, job in enumerate(props.jobs):
            self._job_permissions(job_index, job)
        for index, grant in enumerate(props.plan.grants):  # the plan's index: a grant's logical id stays put
            if not grant.names_a_table:
                self.permissions.append(self._grant(index, grant))
        check_table_references(Stack.of(self))
        self.views = {f"{view.database}.{view.name}": self._view(view) for view in props.views}
        self.workgroup_name = f"{resource_prefix(props.environment)}-bi"
        self.workgroup = new_workgroup(
            self,
            "BiWorkGroup",
            name=self.workgroup_name,
            description=f"ODP {props.environment}: consumers' queries (BI tools, JDBC), apart from the operators'",
            removal_policy=props.removal_policy,
            configuration=workgroup_configuration(
                props.results_bucket, props.results_key, prefix="bi/", bytes_scanned_cutoff=props.bytes_scanned_cutoff
            ),
        )

    # ---------------------------------------------------------------------------------------------
    def _database(self, name: str) -> glue.CfnDatabase:
        try:
            return self.props.databases[name]
        except KeyError:
            known = ", ".join(sorted(self.props.databases))
            raise ValueError(
                f"Lake Formation: database {name!r} is not in the catalog (known: {known}): Catalog creates the "
                "tables' databases and <source>_conformed / <source>_purpose_built; name a dataset's database so"
            ) from None

    @staticmethod
    def _after(resource: CfnResource, *targets: CfnResource) -> None:
        """CloudFormation creates ``resource`` after ``targets`` (it names them by literal)."""
        for target in targets:
            resource.add_dependency(target)

    def _register_locations(self) -> dict[str, lakeformation.CfnResource]:
        role = iam.Role(
            self,
            "LocationRole",
            assumed_by=iam.ServicePrincipal("lakeformation.amazonaws.com"),
            description="Lake Formation's access to the registered lake locations (hybrid access mode)",
        )
        locations = {}
        for zone in LAKE_ZONES:
            bucket = self.props.zone_buckets[zone]
            grant_objects(
                role,
                bucket,
                write=True,
                delete=True,
                reason="A registered location is the whole bucket: Lake Formation vends credentials for any object.",
            )
            grant_key(role, self.props.zone_keys[zone], encrypt=True)
            locations[zone] = lakeformation.CfnResource(
                self,
                f"Location-{zone}",
                resource_arn=bucket.bucket_arn,
                use_service_linked_role=False,
                role_arn=role.role_arn,
                hybrid_access_enabled=True,
            )
        return locations

    def _tag_databases(self) -> None:
        for database, tags in self.props.plan.database_tags.items():
            association = lakeformation.CfnTagAssociation(
                self,
                f"DatabaseTags-{_id(database)}",
                lf_tags=[
                    lakeformation.CfnTagAssociation.LFTagPairProperty(
                        catalog_id=self.account, tag_key=key, tag_values=[value]
                    )
                    for key, value in tags.items()
                ],
                resource=lakeformation.CfnTagAssociation.ResourceProperty(
                    database=lakeformation.CfnTagAssociation.DatabaseResourceProperty(
                        catalog_id=self.account, name=database
                    )
                ),
            )
            self._after(association, self._database(database), *(self.tags[key] for key in tags))

    def _permission(
        self,
        construct_id: str,
        principal: str,
        resource: lakeformation.CfnPrincipalPermissions.ResourceProperty,
        permissions: Sequence[str],
        *after: CfnResource,
        grantable: Sequence[str] = (),
    ) -> lakeformation.CfnPrincipalPermissions:
        permission = lakeformation.CfnPrincipalPermissions(
            self,
            construct_id,
            catalog=self.account,
            principal=lakeformation.CfnPrincipalPermissions.DataLakePrincipalProperty(
                data_lake_principal_identifier=principal
            ),
            resource=resource,
            permissions=list(permissions),
            permissions_with_grant_option=list(grantable),
        )
        self._after(permission, *after)
        return permission

    def _job_permissions(self, index: int, job: JobCatalogAccess) -> None:
        p = lakeformation.CfnPrincipalPermissions
        for zone, location in self.locations.items():
            self._permission(
                f"Job{index}-Location-{zone}",
                job.role.role_arn,
                p.ResourceProperty(
                    data_location=p.DataLocationResourceProperty(
                        catalog_id=self.account, resource_arn=self.props.zone_buckets[zone].bucket_arn
                    )
                ),
                ["DATA_LOCATION_ACCESS"],
                location,
            )
        for database in sorted(set(job.databases)):
            target = self._database(database)
            self._permission(
                f"Job{index}-Database-{_id(database)}",
                job.role.role_arn,
                p.ResourceProperty(database=p.DatabaseResourceProperty(catalog_id=self.account, name=database)),
                SYNC_DATABASE_PERMISSIONS,
                target,
            )
            self._permission(
                f"Job{index}-Tables-{_id(database)}",
                job.role.role_arn,
                p.ResourceProperty(
                    table=p.TableResourceProperty(catalog_id=self.account, database_name=database, table_wildcard={})
                ),
                SYNC_TABLE_PERMISSIONS,
                target,
            )

    def _grant(self, index: int, grant: LakeGrant) -> lakeformation.CfnPrincipalPermissions:
        """A grant that reaches tables created later: a database, every table of a database, an LF-Tag expression.

        Raises:
            ValueError: the grant names one table (it waits for the table: ``python -m odp lake-grants``).
        """
        p = lakeformation.CfnPrincipalPermissions
        resource = grant.resource
        construct_id = f"Grant-{_id(grant.consumer)}-{index}"
        if isinstance(resource, DatabaseResource):
            prop = p.ResourceProperty(
                database=p.DatabaseResourceProperty(catalog_id=self.account, name=resource.database)
            )
            after: tuple[CfnResource, ...] = (self._database(resource.database),)
        elif isinstance(resource, TableResource) and resource.table is None:
            table = p.TableResourceProperty(catalog_id=self.account, database_name=resource.database, table_wildcard={})
            prop = p.ResourceProperty(table=table)
            after = (self._database(resource.database),)
        elif isinstance(resource, TagPolicyResource):
            prop = p.ResourceProperty(
                lf_tag_policy=p.LFTagPolicyResourceProperty(
                    catalog_id=self.account,
                    resource_type=resource.resource_type,
                    expression=[
                        p.LFTagProperty(tag_key=key, tag_values=list(values)) for key, values in resource.expression
                    ],
                )
            )
            after = tuple(self.tags[key] for key, _ in resource.expression)
        else:
            raise ValueError(
                f"Lake Formation: {grant.source or grant.consumer} names one table ({resource!r}): it exists only "
                "after the first run; python -m odp lake-grants applies it (docs/decisions/030)"
            )
        return self._permission(construct_id, grant.principal, prop, grant.permissions, *after)

    def grant_table_grants(self, role: iam.Role) -> None:
        """Let ``role`` apply the plan's table grants (``python -m odp lake-grants``; the post-deploy step's role):

        - in Lake Formation, SELECT and DESCRIBE with grant option on every table of each database they name (a
          grantor needs the grant option, and a data cells filter's creator SELECT with grant option on its table;
          a TableWildcard reaches tables created later);
        - in IAM, ``glue:GetTable`` on exactly the tables they name (does it exist yet, which columns), and
          ``lakeformation:GrantPermissions`` (plus the data cells filter actions when a row filter is configured),
          which support no resource-level permission.

        Nothing when the plan has no table grant.
        """
        plan = self.props.plan
        if not plan.table_grants:
            return
        p = lakeformation.CfnPrincipalPermissions
        stack = Stack.of(self)
        for database in plan.table_databases:
            self._permission(
                f"TableGrants-{_id(database)}",
                role.role_arn,
                p.ResourceProperty(
                    table=p.TableResourceProperty(catalog_id=self.account, database_name=database, table_wildcard={})
                ),
                APPLIER_PERMISSIONS,
                self._database(database),
                grantable=APPLIER_PERMISSIONS,
            )
        catalog = f"arn:{stack.partition}:glue:{stack.region}:{stack.account}"
        tables = named_tables(plan)
        role.add_to_policy(
            iam.PolicyStatement(
                sid="LakeGrantsReadTables",
                actions=["glue:GetTable"],
                resources=[
                    f"{catalog}:catalog",
                    *(f"{catalog}:database/{database}" for database in plan.table_databases),
                    *(f"{catalog}:table/{database}/{table}" for database, table in tables),
                ],
            )
        )
        actions = [*GRANT_ACTIONS, *(FILTER_ACTIONS if plan.filters else ())]
        role.add_to_policy(iam.PolicyStatement(sid="LakeGrantsApply", actions=actions, resources=["*"]))
        acknowledge(
            role,
            "AwsSolutions-IAM5[Resource::*]",
            f"{', '.join(actions)} support no resource-level permission: Lake Formation's own grants decide what "
            "the role may grant (SELECT and DESCRIBE with grant option on the tables of the databases that "
            "access.yaml's table grants name).",
        )

    def _view(self, view: View) -> glue.CfnTable:
        table = glue.CfnTable(
            self,
            f"View-{_id(view.database)}-{_id(view.name)}",
            catalog_id=self.account,
            database_name=view.database,
            table_input=glue.CfnTable.TableInputProperty(name=view.name),
        )
        table.add_property_override("TableInput", glue_view_table(view))
        table.add_dependency(self._database(view.database))
        return table


def shared_lake_formation(environments: Mapping[str, Any], access: AccessFile) -> list[str]:
    """Pure: a message for each account and region where two environments with consumers would both create the
    LF-Tags (Lake Formation's tags and settings are per account and region: the second stack would fail)."""
    places: dict[tuple[str, str], list[str]] = {}
    for name, environment in environments.items():
        if any(c.environments is None or name in c.environments for c in access.consumers.values()):
            places.setdefault((environment.account, environment.region), []).append(name)
    return [
        f"Lake Formation: environments {' and '.join(names)} share account {account} in {region} and both have "
        "consumers (access.yaml): LF-Tags are per account and region; restrict the consumers with environments"
        for (account, region), names in places.items()
        if len(names) > 1
    ]


def admin_rule(scope: Construct, environment: str) -> CfnRule:
    """Fail the deploy before any resource unless the Lake Formation bootstrap step was done.

    The bootstrap step (docs/deploying.md) makes the CloudFormation execution role a Lake Formation
    administrator and records that role's ARN in the SSM parameter :func:`admin_parameter_name`. The stack
    reads it as a parameter: CloudFormation refuses the change set while the parameter does not exist
    ("Unable to fetch parameters [...]", naming it), and this rule refuses it when it names another role.
    A rule cannot ask Lake Formation itself; without the step every Lake Formation resource would fail
    one by one with AccessDenied instead.
    """
    parameter = CfnParameter(
        scope,
        "LakeFormationAdmin",
        type="AWS::SSM::Parameter::Value<String>",
        default=admin_parameter_name(environment),
        description="The CloudFormation execution role's ARN, written by the Lake Formation bootstrap step",
    )
    stack = Stack.of(scope)
    if Token.is_unresolved(stack.account) or Token.is_unresolved(stack.region):
        raise ValueError("Lake Formation: the stack must be bound to an account and a region (the bootstrap rule)")
    rule = CfnRule(scope, "LakeFormationAdminRule")
    rule.add_assertion(
        Fn.condition_equals(parameter.value_as_string, cfn_exec_role_arn(stack.account, stack.region)),
        f"Lake Formation bootstrap missing: the CloudFormation execution role must be a Lake Formation "
        f"administrator, and {admin_parameter_name(environment)} must hold its ARN (docs/deploying.md, "
        "'Lake Formation bootstrap').",
    )
    return rule
