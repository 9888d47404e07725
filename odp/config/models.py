"""Typed models of the three configuration file kinds under ``config/``.

Each model validates what can be checked inside one file. Checks that span files (a table's
cadence exists, table ids are unique across sources, the file name matches its source) live in
:mod:`odp.config.loader`, which also turns pydantic's errors into :class:`ConfigIssue` values that
name the file and the path inside it.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

ACCOUNT_ID = r"^\d{12}$"
REGION = r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$"
# Names that end up in resource names (state machines, Glue jobs, DynamoDB keys): lower case,
# digits, dash and underscore, starting with a letter or digit.
RESOURCE_NAME = r"^[a-z0-9][a-z0-9_-]{0,39}$"
# Identifiers as they appear in S3 keys and Glue names. Glue lowercases database and table names.
IDENTIFIER = r"^[A-Za-z0-9_][A-Za-z0-9_$-]{0,127}$"
GLUE_NAME = r"^[a-z0-9_]{1,255}$"
# Spark SQL type names accepted for column declarations.
SPARK_TYPE = re.compile(
    r"^(string|boolean|tinyint|smallint|int|bigint|float|double|date|timestamp|timestamp_ntz|binary"
    r"|decimal\(\s*\d{1,2}\s*,\s*\d{1,2}\s*\))$"
)
_RATE = re.compile(r"^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$")
_CRON = re.compile(r"^cron\(([^ )]+ ){5}[^ )]+\)$")

AccountId = Annotated[str, StringConstraints(pattern=ACCOUNT_ID)]
Region = Annotated[str, StringConstraints(pattern=REGION)]
ResourceName = Annotated[str, StringConstraints(pattern=RESOURCE_NAME)]
Identifier = Annotated[str, StringConstraints(pattern=IDENTIFIER)]
GlueName = Annotated[str, StringConstraints(pattern=GLUE_NAME)]
ColumnName = Annotated[str, StringConstraints(min_length=1, max_length=255)]


# A file that fails its table this many runs in a row is quarantined (see odp/tracker).
DEFAULT_MAX_FILE_ATTEMPTS = 3


class _Strict(BaseModel):
    """Base for every config model: unknown keys are errors (a typo must not pass silently)."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


# --------------------------------------------------------------------------------------------
# environments.yaml
# --------------------------------------------------------------------------------------------


class RemovalPolicy(StrEnum):
    """What happens to data resources when their stack is deleted."""

    RETAIN = "retain"
    DESTROY = "destroy"


class DeploymentAccount(_Strict):
    """The account and region that hold the CDK pipelines."""

    account: AccountId = Field(description="12-digit AWS account id of the deployment (pipeline) account.")
    region: Region = Field(description="Region of the pipelines, e.g. eu-west-1.")


class SourceConnection(_Strict):
    """Where the pipelines read this repository from."""

    repository: Annotated[str, StringConstraints(pattern=r"^[\w.-]+/[\w.-]+$")] = Field(
        description="owner/name of the git repository."
    )
    connection_arn: Annotated[
        str,
        StringConstraints(
            pattern=r"^arn:aws[a-z-]*:(codeconnections|codestar-connections):[a-z0-9-]+:\d{12}:connection/[\w-]+$"
        ),
    ] = Field(description="ARN of the CodeConnections connection to the git host.")


class Environment(_Strict):
    """One deployment target: dev, test or prod."""

    account: AccountId = Field(description="12-digit AWS account id this environment deploys into.")
    region: Region = Field(description="Primary region of the environment.")
    branch: Annotated[str, StringConstraints(pattern=r"^[\w./-]+$")] | None = Field(
        default=None, description="Git branch whose pipeline deploys this environment; none = no pipeline."
    )
    vpc_cidr: Annotated[str, StringConstraints(pattern=r"^\d{1,3}(\.\d{1,3}){3}/\d{1,2}$")] = Field(
        default="10.20.0.0/16", description="CIDR block of the environment's VPC (/16 to /24)."
    )
    removal_policy: RemovalPolicy = Field(
        default=RemovalPolicy.RETAIN,
        description="retain keeps buckets, keys and tables when the stack is deleted; destroy removes them.",
    )
    data_retention_days: Annotated[int, Field(ge=1, le=36500)] = Field(
        default=365, description="Days before noncurrent object versions and tracker history expire."
    )
    staging_retention_days: Annotated[int, Field(ge=1, le=36500)] = Field(
        default=30, description="Days a landed CDC file is kept in the staging bucket."
    )
    manual_approval: bool = Field(default=False, description="Whether a deploy waits for a person to approve it.")
    dr_region: Region | None = Field(
        default=None, description="Optional disaster-recovery region: tracker tables replicate there."
    )
    alarm_email: Annotated[str, StringConstraints(pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")] | None = Field(
        default=None, description="Optional address subscribed to the alerts topic."
    )

    @field_validator("vpc_cidr")
    @classmethod
    def _cidr_is_valid(cls, value: str) -> str:
        address, prefix = value.split("/")
        if any(int(octet) > 255 for octet in address.split(".")):
            raise ValueError(f"{value!r} is not an IPv4 CIDR block")
        if not 16 <= int(prefix) <= 24:
            raise ValueError(f"prefix /{prefix} must be between /16 and /24 so the VPC has room for subnets")
        return value

    @model_validator(mode="after")
    def _dr_region_differs(self) -> Environment:
        if self.dr_region is not None and self.dr_region == self.region:
            raise ValueError(f"dr_region {self.dr_region!r} must differ from region")
        return self


class EnvironmentsFile(_Strict):
    """config/environments.yaml. (prod approval and unique branches are checked by the loader.)"""

    deployment: DeploymentAccount
    source: SourceConnection
    environments: dict[ResourceName, Environment] = Field(min_length=1)


# --------------------------------------------------------------------------------------------
# cadences.yaml
# --------------------------------------------------------------------------------------------


class GlueWorkerType(StrEnum):
    G_1X = "G.1X"
    G_2X = "G.2X"
    G_4X = "G.4X"
    G_8X = "G.8X"
    G_025X = "G.025X"


def schedule_interval_minutes(expression: str) -> int | None:
    """Minutes between runs for a ``rate(...)`` expression, ``None`` for ``cron(...)``.

    Raises:
        ValueError: the expression is neither a valid rate nor a cron expression.
    """
    rate = _RATE.match(expression)
    if rate:
        amount, unit = int(rate.group(1)), rate.group(2)
        if amount < 1:
            raise ValueError(f"rate amount must be at least 1 in {expression!r}")
        singular = unit.rstrip("s")
        if (amount == 1) != (unit == singular):
            raise ValueError(f"use '{amount} {singular if amount == 1 else singular + 's'}' in {expression!r}")
        return amount * {"minute": 1, "hour": 60, "day": 1440}[singular]
    if _CRON.match(expression):
        return None
    raise ValueError(
        f"{expression!r} is not a schedule expression: use rate(N minutes|hours|days) or cron(m h dom mon dow y)"
    )


class Cadence(_Strict):
    """A refresh cadence: one schedule, one state machine, one Glue job configuration."""

    schedule: str = Field(description="EventBridge Scheduler expression: rate(10 minutes) or cron(...).")
    batch_size: Annotated[int, Field(ge=1, le=500)] = Field(description="Tables per Glue job run.")
    worker_type: GlueWorkerType = Field(default=GlueWorkerType.G_1X, description="Glue worker type.")
    number_of_workers: Annotated[int, Field(ge=2, le=299)] = Field(default=2, description="Glue workers per run.")
    max_concurrency: Annotated[int, Field(ge=1, le=40)] = Field(
        default=2, description="Glue runs the state machine's Map starts at once."
    )
    job_timeout_minutes: Annotated[int, Field(ge=5, le=2880)] = Field(
        default=60, description="Glue job timeout; a run past it fails and its tables retry next time."
    )

    @field_validator("schedule")
    @classmethod
    def _schedule_is_valid(cls, value: str) -> str:
        schedule_interval_minutes(value)
        return value

    @property
    def interval_minutes(self) -> int | None:
        return schedule_interval_minutes(self.schedule)


class CadencesFile(_Strict):
    """config/cadences.yaml."""

    cadences: dict[ResourceName, Cadence] = Field(min_length=1)


# --------------------------------------------------------------------------------------------
# tables/<source>.yaml
# --------------------------------------------------------------------------------------------


class SourceFormat(StrEnum):
    """How a source writes change files."""

    DMS = "dms"
    DEBEZIUM = "debezium"
    DYNAMODB = "dynamodb"


class TableType(StrEnum):
    COPY_ON_WRITE = "COPY_ON_WRITE"
    MERGE_ON_READ = "MERGE_ON_READ"


class TableMode(StrEnum):
    """current: one row per key, the latest state. historical: every change, kept."""

    CURRENT = "current"
    HISTORICAL = "historical"


class TableSettings(_Strict):
    """Settings a table may take from its file's ``defaults`` block or set itself."""

    primary_key: list[ColumnName] | None = Field(default=None, min_length=1, description="Record key column(s).")
    ordering_column: ColumnName | None = Field(
        default=None,
        description=(
            "Column that orders changes to one key (dms: required, e.g. the DMS change-sequence column; "
            "debezium and dynamodb: optional, they order by source.ts_ms / ApproximateCreationDateTime)."
        ),
    )
    partition_by: list[ColumnName] | None = Field(
        default=None, description="Hive-style partition columns; [] or omitted = not partitioned."
    )
    table_type: TableType | None = Field(default=None, description="Hudi table type; default COPY_ON_WRITE.")
    mode: TableMode | None = Field(default=None, description="current (default) or historical.")
    cadence: ResourceName | None = Field(default=None, description="Name of a cadence in cadences.yaml.")
    database: GlueName | None = Field(default=None, description="Target Glue database (lower case).")
    is_active: bool | None = Field(default=None, description="Inactive tables are kept but not processed.")
    max_file_attempts: Annotated[int, Field(ge=1, le=100)] | None = Field(
        default=None,
        description=(
            "Failed runs a file may cause before it is quarantined (status quarantined in file_tracker, its error "
            f"kept) and the table goes on without it; default {DEFAULT_MAX_FILE_ATTEMPTS}."
        ),
    )
    columns: dict[ColumnName, str] | None = Field(
        default=None, description="Optional column name -> Spark SQL type (string, bigint, decimal(10,2), ...)."
    )

    @field_validator("columns")
    @classmethod
    def _types_are_spark_types(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        if value is None:
            return value
        bad = [f"{name}: {kind!r}" for name, kind in value.items() if not SPARK_TYPE.match(kind.strip().lower())]
        if bad:
            raise ValueError("unknown Spark SQL type for " + ", ".join(bad))
        return {name: kind.strip().lower() for name, kind in value.items()}


class TableEntry(TableSettings):
    """One table of a source file."""

    schema_name: Identifier = Field(alias="schema", description="Schema (or namespace) of the source table.")
    table: Identifier = Field(description="Source table name, as in the staging key.")
    target_table: GlueName | None = Field(default=None, description="Glue table name; default: table, lower case.")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, str_strip_whitespace=True)


class TablesFile(_Strict):
    """config/tables/<source>.yaml: the tables of one source."""

    source: Identifier = Field(description="Source name: the first segment of the staging key; the file name.")
    format: SourceFormat = Field(description="dms | debezium | dynamodb.")
    defaults: TableSettings = Field(default_factory=TableSettings, description="Settings every table inherits.")
    tables: list[TableEntry] = Field(min_length=1)


# --------------------------------------------------------------------------------------------
# The resolved view the rest of the code uses
# --------------------------------------------------------------------------------------------


class TableConfig(_Strict):
    """One table with every setting resolved: what the Glue job and the Lambdas consume."""

    source: str
    schema_name: str
    table: str
    format: SourceFormat
    primary_key: tuple[str, ...]
    ordering_column: str | None = None
    partition_by: tuple[str, ...]
    table_type: TableType
    mode: TableMode
    cadence: str
    database: str
    target_table: str
    is_active: bool
    columns: dict[str, str] | None = None
    max_file_attempts: int = DEFAULT_MAX_FILE_ATTEMPTS

    @property
    def table_id(self) -> str:
        """``<source>.<schema>.<table>``, as derived from the staging key."""
        return table_id(self.source, self.schema_name, self.table)

    @property
    def staging_prefix(self) -> str:
        """Key prefix under which this table's change files land in the staging bucket."""
        return f"{self.source}/{self.schema_name}/{self.table}/"


def table_id(source: str, schema_name: str, table: str) -> str:
    """The table id used by every tracker: ``<source>.<schema>.<table>``."""
    return f"{source}.{schema_name}.{table}"
