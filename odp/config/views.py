"""config/views/<database>.<view>.sql: Athena views over the catalog, checked before a deploy.

A view is one SELECT in Athena's (Trino) dialect over ``<database>.<table>`` names of the catalog:
raw tables (their declared columns), datasets (the output columns of their SQL, inferred here from
Spark's dialect) and views before it (by file name). :func:`load_views` parses every file with
sqlglot and resolves each table and column against the configuration; every problem is a
:class:`ConfigIssue` naming the file and the unknown table or column. :func:`glue_view_table`
renders a view as the Glue table Athena stores (a Presto view: ``ViewOriginalText``), and
:func:`create_view_ddl` as Athena DDL.

sqlglot is needed by ``python -m odp.config validate`` and the CDK app, not by the Glue jobs: the
loader (which the jobs use) does not import this module.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import sqlglot
from sqlglot import exp
from sqlglot.errors import OptimizeError, ParseError
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify

from odp.config.access import (
    HUDI_META_COLUMNS,
    RAW_SYSTEM_COLUMNS,
    access_issues,
    database_zones,
    dataset_catalog_table,
    raw_catalog_table,
)
from odp.config.datasets import DatasetConfig
from odp.config.loader import ACCESS_FILE, ConfigIssue, OdpConfig

VIEWS_DIR = "views"
ATHENA_DIALECT = "trino"  # Athena engine version 3
SPARK_DIALECT = "spark"
ATHENA_CATALOG = "awsdatacatalog"
_SYSTEM_TYPES = dict.fromkeys(RAW_SYSTEM_COLUMNS, "string")
Columns = dict[str, str]  # column -> type (Spark / Hive spelling)
Catalog = dict[str, dict[str, Columns | None]]  # database -> table -> columns (None: not declared)


@dataclass(frozen=True)
class ViewColumn:
    name: str
    athena_type: str  # Presto / Trino spelling, as Athena stores it in the view
    hive_type: str  # the Glue table's column type


@dataclass(frozen=True)
class View:
    database: str
    name: str
    sql: str  # the SELECT, as written (no trailing semicolon)
    columns: tuple[ViewColumn, ...]
    file: str


class ViewError(ValueError):
    """A SQL text that does not parse or names something unknown; the message says what."""


def _type_names(data_type: exp.DataType) -> tuple[str, str]:
    """(Athena, Hive) spelling of a type; a timestamp is Athena's ``timestamp`` whatever its zone flavour."""
    if data_type.this in (exp.DataType.Type.TIMESTAMPTZ, exp.DataType.Type.TIMESTAMPLTZ):
        data_type = exp.DataType.build("timestamp")
    # Athena spells a parameterised type without spaces: decimal(10,2).
    return data_type.sql(ATHENA_DIALECT).lower().replace(", ", ","), data_type.sql("hive").lower().replace(", ", ",")


def _select(sql: str, dialect: str) -> exp.Query:
    try:
        statements = [s for s in sqlglot.parse(sql, dialect=dialect) if s is not None]
    except ParseError as error:
        detail = error.errors[0]["description"] if error.errors else str(error)
        raise ViewError(f"does not parse as {dialect} SQL: {detail}") from None
    if len(statements) != 1 or not isinstance(statements[0], exp.Query):
        raise ViewError("must be exactly one SELECT statement")
    return statements[0]


def _output_columns(query: exp.Query, schema: Mapping, dialect: str) -> tuple[ViewColumn, ...]:
    """The query's output columns with their types (every table and column resolved against ``schema``).

    Raises:
        ViewError: an unknown column, or an output column whose type cannot be inferred.
    """
    try:
        qualified = qualify(query.copy(), schema=schema, dialect=dialect, validate_qualify_columns=True)
    except OptimizeError as error:
        raise ViewError(str(error).split(". Line:")[0]) from None
    annotated = annotate_types(qualified, schema=schema, dialect=dialect)
    columns = []
    for select in annotated.selects:
        if select.type is None or select.type.this is exp.DataType.Type.UNKNOWN:
            raise ViewError(f"cannot infer the type of column {select.alias_or_name!r}: CAST it")
        athena, hive = _type_names(select.type)
        columns.append(ViewColumn(select.alias_or_name, athena, hive))
    names = [c.name for c in columns]
    if len(set(names)) != len(names):
        raise ViewError(f"output columns repeat a name: {names}")
    return tuple(columns)


def _referenced_tables(query: exp.Query) -> list[exp.Table]:
    ctes = {cte.alias_or_name for cte in query.find_all(exp.CTE)}
    return [t for t in query.find_all(exp.Table) if not (not t.db and t.name in ctes)]


def raw_catalog(config: OdpConfig) -> Catalog:
    """The raw tables as the catalog holds them (MERGE_ON_READ: ``_ro`` and ``_rt``)."""
    catalog: Catalog = {}
    for table in config.tables:
        entry = raw_catalog_table(table)
        columns = None if table.columns is None else {**table.columns, **_SYSTEM_TYPES}
        for name in entry.names:
            catalog.setdefault(entry.database, {})[name] = columns
    return catalog


def dataset_columns(dataset: DatasetConfig, sources: Mapping[str, Columns | None]) -> Columns | None:
    """The output columns of a dataset's Spark SQL over its sources (view name -> columns); None when a
    source's columns are unknown.

    Raises:
        ViewError: the SQL names a column its sources do not have.
    """
    if any(columns is None for columns in sources.values()):
        return None
    query = _select(dataset.sql, SPARK_DIALECT)
    return {c.name: c.hive_type for c in _output_columns(query, dict(sources), SPARK_DIALECT)}


def _with_datasets(config: OdpConfig, catalog: Catalog, issues: list[ConfigIssue]) -> dict[str, Columns | None]:
    """Adds each dataset's output columns to ``catalog`` (dependency order); dataset name -> columns."""
    by_table = {t.table_id: t for t in config.tables}
    outputs: dict[str, Columns | None] = {}
    for dataset in config.datasets:
        sources: dict[str, Columns | None] = {}
        for source in dataset.sources:
            if source.table is not None:
                table = by_table[source.table]
                sources[source.name] = None if table.columns is None else {**table.columns, **_SYSTEM_TYPES}
            else:
                sources[source.name] = outputs.get(source.dataset or "")
        try:
            columns = dataset_columns(dataset, sources)
        except ViewError as error:
            issues.append(ConfigIssue(dataset.sql_file, "", str(error)))
            columns = None
        outputs[dataset.name] = columns
        with_meta = None if columns is None else {**columns, **dict.fromkeys(HUDI_META_COLUMNS, "string")}
        for name in dataset_catalog_table(dataset).names:
            catalog.setdefault(dataset.database, {})[name] = with_meta
    return outputs


def parse_view(sql: str, database: str, name: str, catalog: Catalog, *, file: str = "") -> View:
    """One view checked against the catalog.

    Raises:
        ViewError: the SQL does not parse, is not one SELECT, or names an unknown table or column.
    """
    query = _select(sql, ATHENA_DIALECT)
    for table in _referenced_tables(query):
        if not table.db:
            raise ViewError(f"table {table.name!r} must be named <database>.{table.name}")
        if table.db not in catalog:
            raise ViewError(f"unknown database {table.db!r} (in {table.db}.{table.name})")
        if table.name not in catalog[table.db]:
            known = ", ".join(sorted(catalog[table.db]))
            raise ViewError(f"unknown table {table.db}.{table.name} (known in {table.db}: {known})")
    referenced = {(t.db, t.name) for t in _referenced_tables(query)}
    if any(catalog[db][name] is None for db, name in referenced):
        raise ViewError(
            "reads a table whose columns are not declared: declare its columns in tables/ so the view can be checked"
        )
    schema = {db: {t: catalog[db][t] for d, t in referenced if d == db} for db, _ in referenced}
    return View(database, name, sql, _output_columns(query, schema, ATHENA_DIALECT), file)


def _view_files(root: Path) -> list[Path]:
    folder = root / VIEWS_DIR
    return sorted(folder.glob("*.sql")) if folder.is_dir() else []


def _row_filter_issues(config: OdpConfig, catalog: Catalog) -> list[ConfigIssue]:
    """Each access.yaml row filter parses as a condition and names only its table's columns (where they are known)."""
    by_table = {t.table_id: t for t in config.tables}
    by_dataset = {d.name: d for d in config.datasets}
    issues = []
    for name, consumer in config.access.consumers.items():
        for index, grant in enumerate(consumer.read):
            if grant.row_filter is None:
                continue
            if grant.table is not None:
                target = raw_catalog_table(by_table[grant.table])
            else:
                target = dataset_catalog_table(by_dataset[grant.dataset or ""])
            columns = catalog.get(target.database, {}).get(target.names[0])
            if columns is None:
                continue  # columns unknown: the filter is checked by Lake Formation at deploy
            where = f"consumers.{name}.read[{index}].row_filter"
            try:
                condition = sqlglot.condition(grant.row_filter, dialect=ATHENA_DIALECT)
                query = exp.select(exp.alias_(exp.Literal.number(1), "one")).from_("t").where(condition)
                _output_columns(query, {"t": columns}, ATHENA_DIALECT)
            except ParseError as error:
                detail = error.errors[0]["description"] if error.errors else str(error)
                issues.append(
                    ConfigIssue(ACCESS_FILE, where, f"consumer {name!r}: {grant.item}: not a condition: {detail}")
                )
            except ViewError as error:
                issues.append(ConfigIssue(ACCESS_FILE, where, f"consumer {name!r}: {grant.item}: {error}"))
    return issues


def load_views(root: Path, config: OdpConfig, issues: list[ConfigIssue]) -> list[View]:
    """Every ``views/<database>.<view>.sql``, checked; problems go to ``issues`` (one bad view does not stop the rest).

    Also checks the datasets' SQL against their sources' declared columns, and the column lists of
    access.yaml's dataset grants against the datasets' outputs.
    """
    catalog = raw_catalog(config)
    outputs = _with_datasets(config, catalog, issues)
    known_columns = {name: tuple(columns) for name, columns in outputs.items() if columns is not None}
    # The loader checked the rest of access.yaml; what it could not check is a dataset's columns.
    environments = config.environments.environments
    for where, reason in access_issues(config.access, config.tables, config.datasets, environments, known_columns):
        issues.append(ConfigIssue(ACCESS_FILE, where, reason))
    issues.extend(_row_filter_issues(config, catalog))
    zones = database_zones(config.tables, config.datasets)
    views = []
    for path in _view_files(root):
        display = f"{VIEWS_DIR}/{path.name}"
        database, _, name = path.stem.partition(".")
        if not name or "." in name:
            issues.append(ConfigIssue(display, "", "name a view file <database>.<view>.sql"))
            continue
        if database not in zones:
            issues.append(ConfigIssue(display, "", f"unknown database {database!r} (known: {', '.join(zones)})"))
            continue
        if name in catalog.get(database, {}):
            issues.append(ConfigIssue(display, "", f"{database}.{name} is already a table"))
            continue
        sql = _without_leading_comments(path.read_text(encoding="utf-8"))
        try:
            view = parse_view(sql, database, name, catalog, file=display)
        except ViewError as error:
            issues.append(ConfigIssue(display, "", str(error)))
            continue
        catalog.setdefault(database, {})[name] = {c.name: c.hive_type for c in view.columns}
        views.append(view)
    return views


def _without_leading_comments(text: str) -> str:
    """The SELECT of a view file: its leading ``--`` lines (the file's description) and the final ``;`` removed."""
    lines = text.strip().splitlines()
    while lines and (not lines[0].strip() or lines[0].lstrip().startswith("--")):
        lines.pop(0)
    return "\n".join(lines).strip().rstrip(";").strip()


def presto_view_text(view: View) -> str:
    """The ``ViewOriginalText`` Athena writes for a view: its definition, base64 JSON in a comment."""
    definition = {
        "originalSql": view.sql,
        "catalog": ATHENA_CATALOG,
        "schema": view.database,
        "columns": [{"name": c.name, "type": c.athena_type} for c in view.columns],
    }
    encoded = base64.b64encode(json.dumps(definition, separators=(",", ":")).encode()).decode()
    return f"/* Presto View: {encoded} */"


def glue_view_table(view: View) -> dict:
    """The Glue ``TableInput`` of a view as Athena creates it (CreateTable / a CfnTable's tableInput)."""
    return {
        "Name": view.name,
        "TableType": "VIRTUAL_VIEW",
        "Parameters": {"presto_view": "true", "comment": "Presto View"},
        "ViewOriginalText": presto_view_text(view),
        "ViewExpandedText": "/* Presto View */",
        "StorageDescriptor": {
            "Columns": [{"Name": c.name, "Type": c.hive_type} for c in view.columns],
            "SerdeInfo": {},
        },
    }


def create_view_ddl(view: View) -> str:
    """The view as an Athena statement (for a one-off or a custom resource)."""
    return f'CREATE OR REPLACE VIEW "{view.database}"."{view.name}" AS\n{view.sql}'


def check_views(root: Path, config: OdpConfig) -> tuple[list[View], list[ConfigIssue]]:
    """The views of ``root`` and every issue (datasets' columns, access columns on datasets, views)."""
    issues: list[ConfigIssue] = []
    views = load_views(root, config, issues)
    return views, issues
