"""Datasets of the conformed and purpose-built zones: ``config/datasets/<name>.yaml`` + ``<name>.sql``.

A dataset is SQL over raw tables (by table id) or other datasets, written to a Hudi table of its
zone and gated by quality rules. :class:`DatasetFile` validates one file; :func:`load_datasets`
adds what spans files (the SQL file exists, every source exists, no cycle, what an incremental
refresh needs) and returns the datasets in dependency order. Whether the SQL parses and produces
the key needs Spark's parser: ``etl.datasets.sql_check`` does that (see etl/datasets/README.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from odp.config.models import ColumnName, EngineName, GlueName, TableConfig, TableMode, TableType, _Strict

DATASETS_DIR = "datasets"
HISTORICAL_SEQ = "_odp_seq"  # historical raw tables keep every change: their record key adds it
# A dataset name is a Glue table name and a SQL identifier.
DatasetName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,127}$")]
ViewName = Annotated[str, StringConstraints(pattern=r"^[a-z_][a-z0-9_]{0,127}$")]


class Zone(StrEnum):
    CONFORMED = "conformed"
    PURPOSE_BUILT = "purpose_built"


class Refresh(StrEnum):
    """incremental: only the source rows changed since the last run. full: recompute from the sources."""

    INCREMENTAL = "incremental"
    FULL = "full"


class Severity(StrEnum):
    """fail: the dataset is not written. warn: written, the rule is reported."""

    FAIL = "fail"
    WARN = "warn"


class _Rule(_Strict):
    name: Annotated[str, StringConstraints(pattern=r"^[a-z0-9_]{1,64}$")] | None = Field(
        default=None, description="Name in reports; default: the rule type and its columns."
    )
    severity: Severity = Field(default=Severity.FAIL, description="fail (default) or warn.")


class NotNullRule(_Rule):
    type: Literal["not_null"]
    columns: list[ColumnName] = Field(min_length=1, description="Columns that may not be null.")


class UniqueRule(_Rule):
    type: Literal["unique"]
    columns: list[ColumnName] = Field(min_length=1, description="Columns whose combination is unique.")


class AcceptedValuesRule(_Rule):
    type: Literal["accepted_values"]
    column: ColumnName = Field(description="Column whose non-null values must be in values.")
    values: list[str | int | float | bool] = Field(min_length=1, description="The accepted values.")


class RowCountRule(_Rule):
    type: Literal["row_count"]
    min: Annotated[int, Field(ge=0)] | None = Field(default=None, description="Fewest rows the dataset may hold.")
    max: Annotated[int, Field(ge=0)] | None = Field(default=None, description="Most rows the dataset may hold.")

    @model_validator(mode="after")
    def _has_a_bound(self) -> RowCountRule:
        if self.min is None and self.max is None:
            raise ValueError("set min, max or both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min {self.min} is greater than max {self.max}")
        return self


class ExpressionRule(_Rule):
    type: Literal["expression"]
    expression: Annotated[str, StringConstraints(min_length=1)] = Field(
        description="Spark SQL boolean expression every row must satisfy (NULL counts as a failure)."
    )


QualityRule = Annotated[
    NotNullRule | UniqueRule | AcceptedValuesRule | RowCountRule | ExpressionRule, Field(discriminator="type")
]


def rule_name(rule: QualityRule) -> str:
    """The rule's name in reports: its own, else the type and its columns."""
    if rule.name:
        return rule.name
    columns = getattr(rule, "columns", None) or ([rule.column] if hasattr(rule, "column") else [])
    return "_".join([rule.type, *columns])


class DatasetSource(_Strict):
    """One input of the SQL, visible in it as a view named ``name``."""

    name: ViewName = Field(description="The name the SQL uses for this source.")
    table: str | None = Field(default=None, description="A raw table id <source>.<schema>.<table>.")
    dataset: DatasetName | None = Field(default=None, description="Another dataset, by name.")

    @model_validator(mode="after")
    def _exactly_one(self) -> DatasetSource:
        if (self.table is None) == (self.dataset is None):
            raise ValueError("set exactly one of table (a raw table id) or dataset (a dataset name)")
        return self


class DatasetFile(_Strict):
    """config/datasets/<name>.yaml: one dataset."""

    name: DatasetName = Field(description="Dataset name: the Glue table name; the file name.")
    zone: Zone = Field(description="conformed | purpose_built.")
    database: GlueName = Field(description="Glue database of the dataset (one per zone, lower case).")
    sources: list[DatasetSource] = Field(min_length=1, description="Raw tables or datasets the SQL reads.")
    sql: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]+\.sql$")] | None = Field(
        default=None, description="SQL file beside this one; default <name>.sql."
    )
    key: list[ColumnName] = Field(min_length=1, description="Record key column(s) of the dataset.")
    partition_by: list[ColumnName] = Field(default_factory=list, description="Partition columns; [] = none.")
    table_type: TableType = Field(default=TableType.COPY_ON_WRITE, description="Hudi table type.")
    refresh: Refresh = Field(
        default=Refresh.INCREMENTAL,
        description="incremental (one source, one output row per source row) or full (any SQL).",
    )
    quality: list[QualityRule] = Field(default_factory=list, description="Rules checked before every write.")
    engine: EngineName = Field(
        default=EngineName.GLUE,
        description=(
            "What runs the dataset: glue (the Glue dataset job) or emr_serverless (the stage's EMR Serverless "
            "application, after the Glue run; a glue dataset may not read an emr_serverless one)."
        ),
    )

    @model_validator(mode="after")
    def _names_are_unique(self) -> DatasetFile:
        names = [source.name for source in self.sources]
        if len(set(names)) != len(names):
            raise ValueError(f"sources: a name is used twice: {names}")
        if len(set(self.key)) != len(self.key):
            raise ValueError(f"key repeats a column: {self.key}")
        return self


class DatasetConfig(_Strict):
    """One dataset, resolved: its file's settings, its SQL text and where it came from."""

    name: str
    zone: Zone
    database: str
    sources: tuple[DatasetSource, ...]
    sql: str
    key: tuple[str, ...]
    partition_by: tuple[str, ...]
    table_type: TableType
    refresh: Refresh
    quality: tuple[QualityRule, ...]
    file: str  # config-relative path of the YAML, for error messages
    engine: EngineName = EngineName.GLUE

    @property
    def sql_file(self) -> str:
        return self.file.rsplit("/", 1)[0] + "/" + self.name + ".sql"

    def source_ids(self) -> tuple[str, ...]:
        """What each source reads: the raw table id, or ``dataset:<name>``."""
        return tuple(source.table or f"dataset:{source.dataset}" for source in self.sources)


def record_key_of(table: TableConfig) -> tuple[str, ...]:
    """The record key of a raw table's Hudi rows (historical tables add the change sequence)."""
    keys = tuple(table.primary_key)
    return (*keys, HISTORICAL_SEQ) if table.mode is TableMode.HISTORICAL else keys


def dependency_order(datasets: Iterable[DatasetConfig]) -> list[DatasetConfig]:
    """Datasets so that each comes after every dataset it reads; ties by name.

    Raises:
        ValueError: the datasets form a cycle (the message lists it).
    """
    by_name = {d.name: d for d in datasets}
    ordered: list[DatasetConfig] = []
    state: dict[str, str] = {}

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == "done":
            return
        if state.get(name) == "visiting":
            cycle = [*path[path.index(name) :], name]
            raise ValueError("cycle: " + " -> ".join(cycle))
        state[name] = "visiting"
        for source in by_name[name].sources:
            if source.dataset in by_name:
                visit(source.dataset, [*path, name])
        state[name] = "done"
        ordered.append(by_name[name])

    for name in sorted(by_name):
        visit(name, [])
    return ordered


def of_engine(datasets: Iterable[DatasetConfig], engine: EngineName) -> list[DatasetConfig]:
    """The datasets that run on ``engine``, in the order given."""
    return [dataset for dataset in datasets if dataset.engine is engine]


def engines_of(datasets: Iterable[DatasetConfig]) -> set[EngineName]:
    """The engines the datasets run on (the datasets state machine starts one run on each)."""
    return {dataset.engine for dataset in datasets}


# In a list of changed raw tables: every table (the File Processor's summary past its bound of table ids).
ALL_TABLES = "*"


def downstream_of(datasets: Iterable[DatasetConfig], changed_tables: Iterable[str]) -> list[DatasetConfig]:
    """The datasets that read a changed raw table, directly or through other datasets, in dependency order
    (every dataset when ``changed_tables`` holds ALL_TABLES)."""
    ordered = dependency_order(datasets)
    changed = set(changed_tables)
    if ALL_TABLES in changed:
        return ordered
    selected: set[str] = set()
    for dataset in ordered:
        if any(s.table in changed or s.dataset in selected for s in dataset.sources):
            selected.add(dataset.name)
    return [d for d in ordered if d.name in selected]
