"""A dataset's SQL on Spark's own parser and analyzer, before any data is read or written.

``check_dataset_sql`` returns every problem as a ConfigIssue naming the dataset's file and field:
the SQL does not parse, reads a table by a catalog name instead of a declared source, does not
analyse over its sources' schemas, does not produce the key or partition columns, a quality rule
names a missing column or its expression is not valid, or an ``incremental`` dataset is not one
row per source row (an aggregate, join, window, DISTINCT, LIMIT, UNION or subquery). It starts no
job: the sources are empty frames with the sources' schemas. The dataset job runs it on the real
source schemas before every refresh; ``python -m etl.datasets check`` (and
tests/unit/etl/datasets/test_sql_check.py) runs it on every configured dataset over the schemas
declared in config/tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.errors import AnalysisException, ParseException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from odp.config.datasets import (
    AcceptedValuesRule,
    DatasetConfig,
    ExpressionRule,
    NotNullRule,
    Refresh,
    UniqueRule,
    rule_name,
)
from odp.config.loader import ConfigIssue, OdpConfig
from odp.config.models import TableConfig

# Logical plan nodes of a query that maps each source row to at most one output row of its own.
ROW_WISE_NODES = frozenset({"Project", "Filter", "SubqueryAlias", "View", "LocalRelation", "LogicalRDD", "Sort"})


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0]


def _walk(plan: Any) -> list[Any]:
    nodes, stack = [], [plan]
    while stack:
        node = stack.pop()
        nodes.append(node)
        children = node.children()
        stack.extend(children.apply(i) for i in range(children.size()))
    return nodes


def parse_relations(spark: SparkSession, sql: str) -> list[str]:
    """The table names the SQL reads, as written (CTE names included).

    Raises:
        ParseException: the SQL does not parse.
    """
    plan = spark._jsparkSession.sessionState().sqlParser().parsePlan(sql)
    names = []
    for node in _walk(plan):
        if node.nodeName() == "UnresolvedRelation":
            names.append(str(node.tableName()))
        inner = node.innerChildren()
        for i in range(inner.size()):
            for child in _walk(inner.apply(i)):
                if child.nodeName() == "UnresolvedRelation":
                    names.append(str(child.tableName()))
    return names


def non_row_wise_nodes(frame: DataFrame) -> list[str]:
    """Nodes of the analysed plan that make the query more than one output row per input row."""
    plan = frame._jdf.queryExecution().analyzed()
    found = []
    for node in _walk(plan):
        name = str(node.nodeName())
        if name not in ROW_WISE_NODES:
            found.append(name)
        if node.subqueries().size():
            found.append("subquery")
    return sorted(set(found))


def declared_schema(table: TableConfig) -> T.StructType | None:
    """A raw table's schema from its declared columns (``None`` when it declares none)."""
    if table.columns is None:
        return None
    return T._parse_datatype_string(", ".join(f"`{name}` {kind}" for name, kind in table.columns.items()))


def bind_sources(spark: SparkSession, dataset: DatasetConfig, frames: Mapping[str, DataFrame]) -> None:
    """Make each source visible to the SQL under its name (session temp views)."""
    for source in dataset.sources:
        frames[source.name].createOrReplaceTempView(source.name)


def check_dataset_sql(
    spark: SparkSession, dataset: DatasetConfig, source_schemas: Mapping[str, T.StructType]
) -> tuple[list[ConfigIssue], T.StructType | None]:
    """Every problem of the dataset's SQL over sources of these schemas (by source name), and its output schema."""
    file, issues = dataset.file, []
    sql_file = dataset.sql_file
    try:
        relations = parse_relations(spark, dataset.sql)
    except ParseException as error:
        return [ConfigIssue(file, "sql", f"{sql_file} does not parse: {_first_line(error)}")], None
    declared = {source.name for source in dataset.sources}
    for name in relations:
        if "." in name:
            issues.append(
                ConfigIssue(file, "sql", f"{sql_file} reads {name!r} by its catalog name: declare it in sources")
            )
    if issues:
        return issues, None
    empty = {
        name: spark.createDataFrame(spark.sparkContext.emptyRDD(), schema) for name, schema in source_schemas.items()
    }
    bind_sources(spark, dataset, empty)
    try:
        output = spark.sql(dataset.sql)
    except AnalysisException as error:
        unknown = sorted(set(relations) - declared)
        hint = f" (not a source: {', '.join(unknown)})" if unknown else ""
        return [ConfigIssue(file, "sql", f"{sql_file} is not valid over its sources: {_first_line(error)}{hint}")], None
    columns = set(output.columns)
    for role, names in (("key", dataset.key), ("partition_by", dataset.partition_by)):
        for index, name in enumerate(names):
            if name not in columns:
                issues.append(
                    ConfigIssue(
                        file,
                        f"{role}[{index}]",
                        f"column {name!r} is not produced by {sql_file} (it produces: {', '.join(output.columns)})",
                    )
                )
    for index, rule in enumerate(dataset.quality):
        issues.extend(_check_rule(output, rule, f"quality[{index}]", file))
    if dataset.refresh is Refresh.INCREMENTAL:
        shape = non_row_wise_nodes(output)
        if shape:
            issues.append(
                ConfigIssue(
                    file,
                    "refresh",
                    f"incremental needs one output row per source row; {sql_file} has {', '.join(shape)}: use full",
                )
            )
    return issues, output.schema


def _check_rule(output: DataFrame, rule: Any, where: str, file: str) -> list[ConfigIssue]:
    columns = set(output.columns)
    named: list[str] = []
    if isinstance(rule, NotNullRule | UniqueRule):
        named = list(rule.columns)
    elif isinstance(rule, AcceptedValuesRule):
        named = [rule.column]
    missing = [name for name in named if name not in columns]
    if missing:
        return [ConfigIssue(file, where, f"rule {rule_name(rule)}: no column {', '.join(missing)} in the output")]
    if isinstance(rule, ExpressionRule):
        try:
            output.where(rule.expression)
        except (AnalysisException, ParseException) as error:
            return [ConfigIssue(file, f"{where}.expression", f"not a valid expression: {_first_line(error)}")]
    return []


def check_all_sql(spark: SparkSession, config: OdpConfig) -> list[ConfigIssue]:
    """Every dataset's SQL over the declared ``columns`` of its raw tables and the outputs of its datasets.

    A dataset reading a raw table that declares no columns is reported as not checkable here (the
    dataset job still checks it on the real schema before every refresh).
    """
    issues: list[ConfigIssue] = []
    outputs: dict[str, T.StructType | None] = {}
    for dataset in config.datasets:  # dependency order: a dataset's sources come first
        schemas: dict[str, T.StructType] = {}
        for index, source in enumerate(dataset.sources):
            schema = declared_schema(config.table(source.table)) if source.table else outputs.get(source.dataset)
            if schema is None:
                what = (
                    f"raw table {source.table} declares no columns"
                    if source.table
                    else f"dataset {source.dataset} was not checked"
                )
                issues.append(ConfigIssue(dataset.file, f"sources[{index}]", f"SQL not checked: {what}"))
            else:
                schemas[source.name] = schema
        if len(schemas) != len(dataset.sources):
            outputs[dataset.name] = None
            continue
        found, outputs[dataset.name] = check_dataset_sql(spark, dataset, schemas)
        issues.extend(found)
    return issues
