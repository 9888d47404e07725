"""The consumers' grants that name one table, applied once the table exists (boto3 only; no CDK import).

python -m odp lake-grants --env ENV [--config-dir DIR] [--yes]

access.yaml's grants on a table, on some of its columns or through a row filter (a data cells filter) name a catalog
table that Hudi's catalog sync creates at the job's first run; Lake Formation refuses them while it is missing, so
the stack cannot hold them (docs/decisions/030). This command reads the configuration, asks Glue which of those tables
exist (``GetTable``: their columns too), and for each existing one creates or updates its data cells filters and
grants what access.yaml asks. It is idempotent (Lake Formation adds a grant to what the principal already holds; a
filter is created once, then updated only when access.yaml changed it), reports every table still missing with the
grants that wait for it, and names the consumer, its access.yaml entry and AWS's error for each failure. Without
``--yes`` it only prints what it would do. The pipeline's post-deploy step runs it after every deploy (as the
config-loader role, which the stack lets grant exactly these tables); run it once after the first run that creates
the tables. Exit 0 when nothing failed (tables may still be missing), 1 on any failure, 2 for an unknown environment.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import boto3
from botocore.exceptions import ClientError

from odp.config.access import (
    AccessPlan,
    DataCellsFilterResource,
    LakeGrant,
    TableResource,
    TableWithColumnsResource,
    plan_grants,
)
from odp.operations.smoke import config_and_environment, environment_parser

# What the applier holds, with grant option, on every table of each database a table grant names (the stack grants
# it: infrastructure/access/lake_formation.py): a grantor needs the grant option, and a data cells filter's creator
# SELECT with grant option on its table.
APPLIER_PERMISSIONS = ("SELECT", "DESCRIBE")
GRANT_ACTIONS = ("lakeformation:GrantPermissions",)
FILTER_ACTIONS = (
    "lakeformation:GetDataCellsFilter",
    "lakeformation:CreateDataCellsFilter",
    "lakeformation:UpdateDataCellsFilter",
)
NOT_FOUND = "EntityNotFoundException"


def named_tables(plan: AccessPlan) -> list[tuple[str, str]]:
    """Pure: (database, table) of every table the plan's table grants and data cells filters name, sorted."""
    named = {grant.table for grant in plan.table_grants if grant.table is not None}
    named |= {(f.database, f.table) for f in plan.filters}
    return sorted(named)


def describe(resource: object) -> str:
    """Pure: what a table grant's resource is, for the report."""
    if isinstance(resource, DataCellsFilterResource):
        return f"{resource.database}.{resource.table} through data cells filter {resource.name}"
    if isinstance(resource, TableWithColumnsResource):
        if resource.columns:
            return f"{resource.database}.{resource.table} columns {', '.join(resource.columns)}"
        return f"{resource.database}.{resource.table} every column but {', '.join(resource.excluded)}"
    if isinstance(resource, TableResource):
        return f"{resource.database}.{resource.table}"
    raise TypeError(f"not a table grant: {resource!r}")


def grant_request(grant: LakeGrant, account: str) -> dict[str, Any]:
    """Pure: the ``GrantPermissions`` arguments of one table grant (no grant option: a consumer only reads)."""
    resource = grant.resource
    if isinstance(resource, DataCellsFilterResource):
        target: dict[str, Any] = {
            "DataCellsFilter": {
                "TableCatalogId": account,
                "DatabaseName": resource.database,
                "TableName": resource.table,
                "Name": resource.name,
            }
        }
    elif isinstance(resource, TableWithColumnsResource):
        columns: dict[str, Any] = (
            {"ColumnNames": list(resource.columns)}
            if resource.columns
            else {"ColumnWildcard": {"ExcludedColumnNames": list(resource.excluded)}}
        )
        target = {
            "TableWithColumns": {
                "CatalogId": account,
                "DatabaseName": resource.database,
                "Name": resource.table,
                **columns,
            }
        }
    elif isinstance(resource, TableResource) and resource.table is not None:
        target = {"Table": {"CatalogId": account, "DatabaseName": resource.database, "Name": resource.table}}
    else:
        raise ValueError(f"{grant.source or grant.consumer}: not a grant on one table ({resource!r})")
    return {
        "CatalogId": account,
        "Principal": {"DataLakePrincipalIdentifier": grant.principal},
        "Resource": target,
        "Permissions": list(grant.permissions),
        "PermissionsWithGrantOption": [],
    }


def filter_definition(cells: DataCellsFilterResource, account: str) -> dict[str, Any]:
    """Pure: the ``TableData`` of a data cells filter (``CreateDataCellsFilter`` / ``UpdateDataCellsFilter``)."""
    columns: dict[str, Any] = (
        {"ColumnNames": list(cells.columns)}
        if cells.columns
        else {"ColumnWildcard": {"ExcludedColumnNames": list(cells.excluded)}}
    )
    return {
        "TableCatalogId": account,
        "DatabaseName": cells.database,
        "TableName": cells.table,
        "Name": cells.name,
        "RowFilter": {"FilterExpression": cells.row_filter},
        **columns,
    }


def _filter_shape(definition: Mapping[str, Any]) -> tuple[Any, ...]:
    """What makes two filter definitions equal (column order and AWS's version id aside)."""
    wildcard = definition.get("ColumnWildcard")
    return (
        (definition.get("RowFilter") or {}).get("FilterExpression"),
        tuple(sorted(definition.get("ColumnNames") or ())),
        None if wildcard is None else tuple(sorted(wildcard.get("ExcludedColumnNames") or ())),
    )


def same_filter(existing: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """Pure: whether an existing data cells filter already is what access.yaml asks."""
    return _filter_shape(existing) == _filter_shape(wanted)


def table_columns(table: Mapping[str, Any]) -> set[str]:
    """Pure: the column names of a ``GetTable`` answer's table (its columns and partition keys)."""
    columns = (table.get("StorageDescriptor") or {}).get("Columns") or []
    return {c["Name"] for c in [*columns, *(table.get("PartitionKeys") or [])]}


def unknown_columns(resource: object, columns: set[str]) -> list[str]:
    """Pure: the columns a grant or filter names that the table does not have, in their order."""
    named: Iterable[str] = ()
    if isinstance(resource, TableWithColumnsResource | DataCellsFilterResource):
        named = (*resource.columns, *resource.excluded)
    return [c for c in named if c not in columns]


def _error(error: ClientError) -> str:
    return f"{error.response['Error']['Code']}: {error.response['Error'].get('Message', '')}".rstrip(": ")


@dataclass
class LakeGrantsReport:
    """What a run did (or would do), what waits for its table, what failed."""

    done: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def render(self, environment: str, applied: bool) -> str:
        lines = [f"{'done' if applied else 'would'}: {line}" for line in self.done]
        lines += [f"pending: {line}" for line in self.pending]
        lines += [f"FAIL {line}" for line in self.failures]
        summary = (
            f"lake-grants of {environment}: {len(self.done)} {'applied' if applied else 'to apply'}, "
            f"{len(self.pending)} table(s) not created yet, {len(self.failures)} failure(s)"
        )
        if not applied and self.done:
            summary += "; nothing changed: run again with --yes to do this"
        return "\n".join([*lines, summary])


def _existing_tables(
    plan: AccessPlan, account: str, glue: Any, report: LakeGrantsReport
) -> dict[tuple[str, str], set[str]]:
    """(database, table) -> its columns, for each named table that exists; the missing ones reported as pending."""
    found: dict[tuple[str, str], set[str]] = {}
    waiting: dict[tuple[str, str], list[LakeGrant]] = {}
    for grant in plan.table_grants:
        if grant.table is not None:
            waiting.setdefault(grant.table, []).append(grant)
    for database, table in named_tables(plan):
        try:
            answer = glue.get_table(CatalogId=account, DatabaseName=database, Name=table)
        except ClientError as error:
            if error.response["Error"]["Code"] != NOT_FOUND:
                report.failures.append(f"reading table {database}.{table} from the Glue catalog: {_error(error)}")
                continue
            who = sorted({f"{g.consumer} ({g.source})" for g in waiting.get((database, table), [])})
            report.pending.append(
                f"table {database}.{table} does not exist yet (the first run of its job creates it): "
                f"{len(waiting.get((database, table), []))} grant(s) wait, for {', '.join(who)}; run this again then"
            )
            continue
        found[(database, table)] = table_columns(answer["Table"])
    return found


def _ensure_filter(cells: DataCellsFilterResource, account: str, lakeformation: Any, apply: bool) -> str:
    """Create the filter, or update it when access.yaml changed it; what was (or would be) done.

    Raises:
        ClientError: Lake Formation refused a call.
    """
    wanted = filter_definition(cells, account)
    key = {"TableCatalogId": account, "DatabaseName": cells.database, "TableName": cells.table, "Name": cells.name}
    try:
        existing = lakeformation.get_data_cells_filter(**key)["DataCellsFilter"]
    except ClientError as error:
        if error.response["Error"]["Code"] != NOT_FOUND:
            raise
        existing = None
    where = f"data cells filter {cells.name} on {cells.database}.{cells.table} (rows: {cells.row_filter})"
    if existing is None:
        if apply:
            lakeformation.create_data_cells_filter(TableData=wanted)
        return f"create {where}"
    if same_filter(existing, wanted):
        return ""
    if apply:
        lakeformation.update_data_cells_filter(TableData={**wanted, "VersionId": existing.get("VersionId")})
    return f"update {where}"


def apply_table_grants(
    plan: AccessPlan, account: str, glue: Any, lakeformation: Any, *, apply: bool
) -> LakeGrantsReport:
    """Each table grant and data cells filter of ``plan`` whose table exists: checked against the table's columns,
    then applied (``apply``) or only reported. A failure is reported and the others go on."""
    report = LakeGrantsReport()
    existing = _existing_tables(plan, account, glue, report)
    failed_filters: set[str] = set()
    for cells in plan.filters:
        columns = existing.get((cells.database, cells.table))
        if columns is None:
            continue
        unknown = unknown_columns(cells, columns)
        if unknown:
            owner = next((g for g in plan.table_grants if g.resource == cells), None)
            where = f"consumer {owner.consumer!r} ({owner.source})" if owner else f"data cells filter {cells.name}"
            report.failures.append(
                f"{where}: table {cells.database}.{cells.table} has no column {', '.join(unknown)} "
                f"(it has {', '.join(sorted(columns))}): fix access.yaml or the table's columns"
            )
            failed_filters.add(cells.name)
            continue
        try:
            done = _ensure_filter(cells, account, lakeformation, apply)
        except ClientError as error:
            report.failures.append(f"data cells filter {cells.name} on {cells.database}.{cells.table}: {_error(error)}")
            failed_filters.add(cells.name)
            continue
        if done:
            report.done.append(done)
    for grant in plan.table_grants:
        resource = grant.resource
        columns = None if grant.table is None else existing.get(grant.table)
        if grant.table is None or columns is None:
            continue
        database, table = grant.table
        what = f"{', '.join(grant.permissions)} on {describe(resource)} to {grant.principal}"
        who = f"consumer {grant.consumer!r} ({grant.source})"
        if isinstance(resource, DataCellsFilterResource) and resource.name in failed_filters:
            report.failures.append(f"{who}: not granted {what}: its data cells filter failed (above)")
            continue
        unknown = [] if isinstance(resource, DataCellsFilterResource) else unknown_columns(resource, columns)
        if unknown:
            report.failures.append(
                f"{who}: table {database}.{table} has no column {', '.join(unknown)} "
                f"(it has {', '.join(sorted(columns))}): fix access.yaml or the table's columns"
            )
            continue
        if apply:
            try:
                lakeformation.grant_permissions(**grant_request(grant, account))
            except ClientError as error:
                report.failures.append(f"{who}: grant {what}: {_error(error)}")
                continue
        report.done.append(f"grant {what} ({who})")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = environment_parser("python -m odp lake-grants", __doc__ or "")
    parser.add_argument("--yes", action="store_true", help="apply (without: print what would be done)")
    args = parser.parse_args(argv)
    loaded = config_and_environment(args.config_dir, args.env)
    if isinstance(loaded, int):
        return loaded
    config, environment = loaded
    plan = plan_grants(config.access, config.tables, config.datasets, environment=args.env, account=environment.account)
    if not plan.table_grants:
        print(f"lake-grants of {args.env}: no grant names a table (nothing to apply)")
        return 0
    session = boto3.session.Session(region_name=environment.region)
    report = apply_table_grants(
        plan, environment.account, session.client("glue"), session.client("lakeformation"), apply=args.yes
    )
    text = report.render(args.env, args.yes)
    for line in text.splitlines():
        print(line, file=sys.stderr if line.startswith("FAIL ") else sys.stdout)
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
