"""config/access.yaml: who may read what, as Lake Formation grants.

The file names consumer principals (an IAM role by name or ARN; an IAM Identity Center group by ARN is refused
until ODP supports it end to end, :data:`GROUP_CONSUMERS_UNSUPPORTED`) and what each may read: whole
databases, raw tables (by table id) or datasets (by name), a table's columns (include or exclude), a row
filter (a Lake Formation data cells filter), or every table whose LF-Tags match an expression (``zone`` is set
by ODP: ``raw`` for the tables' databases, the dataset's zone for the datasets' databases; ``sensitivity`` per
database is set here).

:func:`access_issues` checks the file against the tables and datasets (every issue names the
principal and the item); :func:`plan_grants` turns it into a typed :class:`AccessPlan` (the
LF-Tags, the data cells filters and every grant) that the CDK side renders. Both are pure. A
consumer gets nothing the file does not name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated

from pydantic import Field, StringConstraints, field_validator, model_validator

from odp.config.datasets import DatasetConfig
from odp.config.models import ColumnName, GlueName, ResourceName, TableConfig, TableType, _Strict

ACCESS_FILE = "access.yaml"
ZONE_TAG = "zone"
SENSITIVITY_TAG = "sensitivity"
RAW_ZONE = "raw"
ZONE_VALUES = ("raw", "conformed", "purpose_built")
# Columns every raw table or dataset stores beside its own (Hudi's metadata, ODP's change sequence).
HUDI_META_COLUMNS = (
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
    "_hoodie_is_deleted",
)
RAW_SYSTEM_COLUMNS = (*HUDI_META_COLUMNS, "_odp_seq")
READ = ("SELECT", "DESCRIBE")

ROLE_ARN = r"^arn:aws[a-z-]*:iam::\d{12}:role/[A-Za-z0-9+=,.@_/-]{1,512}$"
# Lake Formation's principal id of an IAM Identity Center group.
GROUP_ARN = r"^arn:aws[a-z-]*:identitystore:::group/[A-Za-z0-9-]{1,47}$"
ROLE_NAME = r"^[A-Za-z0-9+=,.@_-]{1,64}$"
# Why a group_arn consumer is refused, and what to use instead. A group principal needs Lake Formation's IAM Identity
# Center integration (lakeformation:CreateLakeFormationIdentityCenterConfiguration) and a BI workgroup with trusted
# identity propagation (IdentityCenterConfiguration); ODP's stack sets up neither, so a group's grants would deploy and
# never apply to anyone's query.
GROUP_CONSUMERS_UNSUPPORTED = (
    "IAM Identity Center group consumers are not supported yet: nothing sets up Lake Formation's Identity Center "
    "integration and the BI workgroup has no trusted identity propagation, so the group's grants would reach no query. "
    "Use role_name or role_arn instead (e.g. the IAM role of the group's permission set, "
    "AWSReservedSSO_<permission set>_<id>)"
)
TagValue = Annotated[str, StringConstraints(pattern=r"^[a-z0-9_]{1,50}$")]


class ColumnSelection(_Strict):
    """Which columns of a table: ``include`` (only these) or ``exclude`` (all but these), not both."""

    include: list[ColumnName] | None = Field(default=None, min_length=1, description="Only these columns.")
    exclude: list[ColumnName] | None = Field(default=None, min_length=1, description="Every column but these.")

    @model_validator(mode="after")
    def _exactly_one(self) -> ColumnSelection:
        if (self.include is None) == (self.exclude is None):
            raise ValueError("set exactly one of include or exclude")
        return self


class TagCondition(StrEnum):
    ZONE = ZONE_TAG
    SENSITIVITY = SENSITIVITY_TAG


class ReadGrant(_Strict):
    """One thing a consumer may read: a database, a table or dataset (maybe some columns and rows), or LF-Tags."""

    database: GlueName | None = Field(default=None, description="Every table of this Glue database.")
    table: str | None = Field(default=None, description="A raw table id <source>.<schema>.<table>.")
    dataset: GlueName | None = Field(default=None, description="A dataset, by name.")
    tags: dict[TagCondition, list[TagValue]] | None = Field(
        default=None, description="Every table whose database's LF-Tags match (zone, sensitivity: any of the values)."
    )
    columns: ColumnSelection | None = Field(default=None, description="Some columns only (a table or dataset).")
    row_filter: Annotated[str, StringConstraints(min_length=1, max_length=2048)] | None = Field(
        default=None,
        description="Rows the consumer sees, a SQL condition on the table's columns (a data cells filter).",
    )

    @model_validator(mode="after")
    def _one_target(self) -> ReadGrant:
        targets = [name for name in ("database", "table", "dataset", "tags") if getattr(self, name) is not None]
        if len(targets) != 1:
            raise ValueError(f"set exactly one of database, table, dataset or tags, found {targets or 'none'}")
        if (self.columns is not None or self.row_filter is not None) and targets[0] not in ("table", "dataset"):
            raise ValueError("columns and row_filter apply to a table or a dataset only")
        if self.tags is not None and not self.tags:
            raise ValueError("tags: name at least one of zone or sensitivity")
        return self

    @property
    def item(self) -> str:
        """What the grant names, for messages."""
        if self.tags is not None:
            return "tags " + " and ".join(f"{k.value}={'|'.join(v)}" for k, v in self.tags.items())
        if self.database is not None:
            return f"database {self.database}"
        return f"table {self.table}" if self.table is not None else f"dataset {self.dataset}"


class Consumer(_Strict):
    """A principal and what it may read."""

    role_name: Annotated[str, StringConstraints(pattern=ROLE_NAME)] | None = Field(
        default=None, description="An IAM role of this name in each environment's account."
    )
    role_arn: Annotated[str, StringConstraints(pattern=ROLE_ARN)] | None = Field(
        default=None, description="An IAM role by ARN (one account: restrict with environments)."
    )
    group_arn: Annotated[str, StringConstraints(pattern=GROUP_ARN)] | None = Field(
        default=None,
        description=(
            "An IAM Identity Center group: arn:aws:identitystore:::group/<group id>. Not supported yet: "
            "validate refuses it (use role_name or role_arn)."
        ),
    )
    environments: list[ResourceName] | None = Field(
        default=None, description="Environments where the grants apply; default: every environment."
    )
    read: list[ReadGrant] = Field(min_length=1, description="What this principal may read (SELECT, DESCRIBE).")

    @field_validator("group_arn")
    @classmethod
    def _groups_not_yet(cls, value: str | None) -> str | None:
        if value is not None:
            raise ValueError(GROUP_CONSUMERS_UNSUPPORTED)
        return value

    @model_validator(mode="after")
    def _one_principal(self) -> Consumer:
        given = [n for n in ("role_name", "role_arn", "group_arn") if getattr(self, n) is not None]
        if len(given) != 1:
            raise ValueError(f"set exactly one of role_name, role_arn or group_arn, found {given or 'none'}")
        return self

    def principal(self, account: str, partition: str = "aws") -> str:
        """The Lake Formation principal id in an environment's account."""
        if self.role_name is not None:
            return f"arn:{partition}:iam::{account}:role/{self.role_name}"
        return self.role_arn or self.group_arn or ""


class AccessFile(_Strict):
    """config/access.yaml (optional): consumers, and the sensitivity LF-Tag of each database."""

    sensitivity: list[TagValue] = Field(
        default_factory=lambda: ["public", "internal", "confidential"],
        description="Values of the sensitivity LF-Tag.",
    )
    databases: dict[GlueName, Annotated[str, StringConstraints(pattern=r"^[a-z0-9_]{1,50}$")]] = Field(
        default_factory=dict, description="Database -> its sensitivity value (untagged databases have none)."
    )
    consumers: dict[ResourceName, Consumer] = Field(default_factory=dict, description="Consumer name -> principal.")


# --------------------------------------------------------------------------------------------
# What the catalog holds, from the configuration
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CatalogTable:
    """A table the jobs write, as the Glue catalog names it; ``columns`` None when not declared."""

    database: str
    names: tuple[str, ...]  # the catalog tables (MERGE_ON_READ: <t>_ro and <t>_rt)
    columns: tuple[str, ...] | None


def _catalog_names(name: str, table_type: TableType) -> tuple[str, ...]:
    return (f"{name}_ro", f"{name}_rt") if table_type is TableType.MERGE_ON_READ else (name,)


def raw_catalog_table(table: TableConfig) -> CatalogTable:
    columns = None if table.columns is None else (*table.columns, *RAW_SYSTEM_COLUMNS)
    return CatalogTable(table.database, _catalog_names(table.target_table, table.table_type), columns)


def dataset_catalog_table(dataset: DatasetConfig, columns: Sequence[str] | None = None) -> CatalogTable:
    known = None if columns is None else (*columns, *HUDI_META_COLUMNS)
    return CatalogTable(dataset.database, _catalog_names(dataset.name, dataset.table_type), known)


def database_zones(tables: Iterable[TableConfig], datasets: Iterable[DatasetConfig]) -> dict[str, str]:
    """Database -> its zone: raw for the tables' databases, the dataset's zone for the datasets'."""
    zones = {table.database: RAW_ZONE for table in tables}
    zones.update({dataset.database: dataset.zone.value for dataset in datasets})
    return dict(sorted(zones.items()))


# --------------------------------------------------------------------------------------------
# Validation against the configuration
# --------------------------------------------------------------------------------------------


def _target(
    grant: ReadGrant,
    tables: Mapping[str, TableConfig],
    datasets: Mapping[str, DatasetConfig],
    dataset_columns: Mapping[str, Sequence[str]],
) -> CatalogTable | None:
    if grant.table is not None and grant.table in tables:
        return raw_catalog_table(tables[grant.table])
    if grant.dataset is not None and grant.dataset in datasets:
        return dataset_catalog_table(datasets[grant.dataset], dataset_columns.get(grant.dataset))
    return None


def _grant_issues(
    grant: ReadGrant,
    access: AccessFile,
    zones: Mapping[str, str],
    target: CatalogTable | None,
) -> list[tuple[str, str]]:
    """Pure: (path suffix, reason) for one grant."""
    if grant.database is not None and grant.database not in zones:
        return [("database", f"unknown database {grant.database!r} (known: {', '.join(zones)})")]
    if grant.table is not None and target is None:
        return [("table", f"unknown table {grant.table!r} (a table id <source>.<schema>.<table> from tables/)")]
    if grant.dataset is not None and target is None:
        return [("dataset", f"unknown dataset {grant.dataset!r}")]
    issues: list[tuple[str, str]] = []
    for key, values in (grant.tags or {}).items():
        allowed = ZONE_VALUES if key is TagCondition.ZONE else tuple(access.sensitivity)
        issues.extend(
            (f"tags.{key.value}", f"unknown {key.value} value {v!r} (known: {', '.join(allowed)})")
            for v in values
            if v not in allowed
        )
    if grant.columns is not None and target is not None:
        named = grant.columns.include or grant.columns.exclude or []
        which = "include" if grant.columns.include else "exclude"
        if target.columns is None and grant.table is not None:
            reason = f"{grant.item} declares no columns: declare them in tables/ to grant some"
            issues.append((f"columns.{which}", reason))
        elif target.columns is not None:
            issues.extend(
                (f"columns.{which}", f"unknown column {c!r} of {grant.item}") for c in named if c not in target.columns
            )
    return issues


def access_issues(
    access: AccessFile,
    tables: Sequence[TableConfig],
    datasets: Sequence[DatasetConfig],
    environments: Iterable[str],
    dataset_columns: Mapping[str, Sequence[str]] | None = None,
) -> list[tuple[str, str]]:
    """Pure: (path in access.yaml, reason) for each grant naming something the configuration does not have.

    ``dataset_columns``: the output columns of the datasets where known (from their SQL); a column
    list on a dataset whose columns are unknown is not checked.
    """
    by_table = {t.table_id: t for t in tables}
    by_dataset = {d.name: d for d in datasets}
    zones = database_zones(tables, datasets)
    known_envs = set(environments)
    issues: list[tuple[str, str]] = []
    for database, value in access.databases.items():
        if database not in zones:
            issues.append((f"databases.{database}", f"unknown database {database!r} (known: {', '.join(zones)})"))
        if value not in access.sensitivity:
            issues.append((f"databases.{database}", f"unknown sensitivity {value!r} (known: {access.sensitivity})"))
    for name, consumer in access.consumers.items():
        for env in consumer.environments or []:
            if env not in known_envs:
                issues.append((f"consumers.{name}.environments", f"unknown environment {env!r}"))
        for index, grant in enumerate(consumer.read):
            # A dataset's columns come from its SQL (odp.config.catalog): unknown here, not checked.
            target = _target(grant, by_table, by_dataset, dataset_columns or {})
            for where, reason in _grant_issues(grant, access, zones, target):
                issues.append((f"consumers.{name}.read[{index}].{where}", f"consumer {name!r}: {reason}"))
    return issues


# --------------------------------------------------------------------------------------------
# The grants
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DatabaseResource:
    database: str


@dataclass(frozen=True)
class TableResource:
    """One catalog table, or every table of the database (``table`` None: Lake Formation's TableWildcard)."""

    database: str
    table: str | None


@dataclass(frozen=True)
class TableWithColumnsResource:
    """Some columns of a table: ``columns`` only, or all but ``excluded`` (a ColumnWildcard)."""

    database: str
    table: str
    columns: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()


@dataclass(frozen=True)
class DataCellsFilterResource:
    """A Lake Formation data cells filter: rows by ``row_filter``, columns as in TableWithColumnsResource
    (neither: every column)."""

    database: str
    table: str
    name: str
    row_filter: str
    columns: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()


@dataclass(frozen=True)
class TagPolicyResource:
    """Every table whose LF-Tags match: each (key, values) holds (a value of the list), all keys together."""

    expression: tuple[tuple[str, tuple[str, ...]], ...]
    resource_type: str = "TABLE"


Resource = DatabaseResource | TableResource | TableWithColumnsResource | DataCellsFilterResource | TagPolicyResource


@dataclass(frozen=True)
class LakeGrant:
    """One grant: ``source`` is where access.yaml asks for it (``consumers.<name>.read[<n>]``), for messages."""

    consumer: str
    principal: str
    resource: Resource
    permissions: tuple[str, ...]
    source: str = ""

    @property
    def table(self) -> tuple[str, str] | None:
        """(database, table) when the grant names one catalog table (a table, its columns, a data cells filter)."""
        resource = self.resource
        if isinstance(resource, TableResource | TableWithColumnsResource | DataCellsFilterResource):
            return None if resource.table is None else (resource.database, resource.table)
        return None

    @property
    def names_a_table(self) -> bool:
        """Lake Formation resolves the resource to one catalog table when it grants: the table must exist then.
        Grants on a database, on every table of a database (a TableWildcard) or by LF-Tags reach tables created
        later; these do not (docs/decisions/030)."""
        return self.table is not None


@dataclass(frozen=True)
class AccessPlan:
    """Everything Lake Formation needs for one environment's consumers."""

    tags: dict[str, tuple[str, ...]]  # LF-Tag key -> its values
    database_tags: dict[str, dict[str, str]]  # database -> {key: value}
    filters: tuple[DataCellsFilterResource, ...]
    grants: tuple[LakeGrant, ...]

    def grants_of(self, consumer: str) -> list[LakeGrant]:
        return [grant for grant in self.grants if grant.consumer == consumer]

    @property
    def stack_grants(self) -> tuple[LakeGrant, ...]:
        """What the stack may create before any table exists: database, every-table and LF-Tag grants."""
        return tuple(grant for grant in self.grants if not grant.names_a_table)

    @property
    def table_grants(self) -> tuple[LakeGrant, ...]:
        """What waits for its table (Hudi's catalog sync creates it at the first run): one table, some of its
        columns, a data cells filter. ``python -m odp lake-grants`` applies them (odp/operations/lake_grants.py)."""
        return tuple(grant for grant in self.grants if grant.names_a_table)

    @property
    def table_databases(self) -> tuple[str, ...]:
        """The databases of :attr:`table_grants` and :attr:`filters` (where whoever applies them needs grant option)."""
        named = {grant.table[0] for grant in self.table_grants if grant.table} | {f.database for f in self.filters}
        return tuple(sorted(named))


def _filter_name(consumer: str, table: str, index: int) -> str:
    return f"odp_{consumer}_{table}_{index}".replace("-", "_")[:255]


def _table_grants(
    consumer: str, principal: str, index: int, grant: ReadGrant, target: CatalogTable
) -> tuple[list[LakeGrant], list[DataCellsFilterResource]]:
    source = f"consumers.{consumer}.read[{index}]"
    include = tuple(grant.columns.include or ()) if grant.columns else ()
    exclude = tuple(grant.columns.exclude or ()) if grant.columns else ()
    grants, filters = [], []
    for name in target.names:
        if grant.row_filter is not None:
            cells = DataCellsFilterResource(
                target.database, name, _filter_name(consumer, name, index), grant.row_filter, include, exclude
            )
            filters.append(cells)
            grants.append(LakeGrant(consumer, principal, cells, ("SELECT",), source))
        elif grant.columns is not None:
            columns = TableWithColumnsResource(target.database, name, include, exclude)
            grants.append(LakeGrant(consumer, principal, columns, ("SELECT",), source))
        else:
            grants.append(LakeGrant(consumer, principal, TableResource(target.database, name), READ, source))
    return grants, filters


def plan_grants(
    access: AccessFile,
    tables: Sequence[TableConfig],
    datasets: Sequence[DatasetConfig],
    *,
    environment: str,
    account: str,
    partition: str = "aws",
) -> AccessPlan:
    """Pure: the LF-Tags, data cells filters and grants of one environment (a valid access file)."""
    by_table = {t.table_id: t for t in tables}
    by_dataset = {d.name: d for d in datasets}
    zones = database_zones(tables, datasets)
    database_tags = {
        database: {
            ZONE_TAG: zone,
            **({SENSITIVITY_TAG: access.databases[database]} if database in access.databases else {}),
        }
        for database, zone in zones.items()
    }
    grants: list[LakeGrant] = []
    filters: list[DataCellsFilterResource] = []
    for name, consumer in access.consumers.items():
        if consumer.environments is not None and environment not in consumer.environments:
            continue
        principal = consumer.principal(account, partition)
        for index, grant in enumerate(consumer.read):
            source = f"consumers.{name}.read[{index}]"
            if grant.database is not None:
                grants.append(LakeGrant(name, principal, DatabaseResource(grant.database), ("DESCRIBE",), source))
                grants.append(LakeGrant(name, principal, TableResource(grant.database, None), READ, source))
            elif grant.tags is not None:
                expression = tuple((key.value, tuple(values)) for key, values in grant.tags.items())
                grants.append(LakeGrant(name, principal, TagPolicyResource(expression), READ, source))
            else:
                target = _target(grant, by_table, by_dataset, {})
                if target is None:
                    raise ValueError(f"consumer {name!r}: {grant.item} is not configured (validate first)")
                table_grants, table_filters = _table_grants(name, principal, index, grant, target)
                grants.extend(table_grants)
                filters.extend(table_filters)
    tags = {ZONE_TAG: ZONE_VALUES, SENSITIVITY_TAG: tuple(access.sensitivity)}
    return AccessPlan(tags, database_tags, tuple(filters), tuple(grants))
