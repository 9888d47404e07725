"""Typed models of the three configuration file kinds under ``config/``.

Each model validates what can be checked inside one file. Checks that span files (a table's
cadence exists, table ids are unique across sources, the file name matches its source) live in
:mod:`odp.config.loader`, which also turns pydantic's errors into :class:`ConfigIssue` values that
name the file and the path inside it.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

from odp.config.event_time import DEFAULT_EVENT_TIME_TOLERANCE, parse_floor, parse_tolerance
from odp.planning import PlanTargets
from odp.warm import warm_lifetime_seconds

ACCOUNT_ID = r"^\d{12}$"
REGION = r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$"
AVAILABILITY_ZONE = r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d[a-z]$"
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
AvailabilityZone = Annotated[str, StringConstraints(pattern=AVAILABILITY_ZONE)]
ResourceName = Annotated[str, StringConstraints(pattern=RESOURCE_NAME)]
Identifier = Annotated[str, StringConstraints(pattern=IDENTIFIER)]
GlueName = Annotated[str, StringConstraints(pattern=GLUE_NAME)]
ColumnName = Annotated[str, StringConstraints(min_length=1, max_length=255)]


# A file named by a failure that may pass on a later try (a throttled or timed-out read) is quarantined after
# this many failed runs; a failure that would repeat (bad content) quarantines it at once
# (etl/file_processor/poison.py).
DEFAULT_MAX_FILE_ATTEMPTS = 3
# A table whose runs fail this many times in a row with an error no file is the difference for (its configuration,
# its Hudi table, a read that fails whatever its files) is held: the Batch Manager leaves it out until
# ``python -m odp retry`` (etl/file_processor/failure.py).
DEFAULT_MAX_TABLE_ATTEMPTS = 5
# A table created without ``index`` or ``index_buckets`` takes the simple index when its first write brings fewer rows
# than this (``small_table_rows``; a partitioned table at most SIMPLE_INDEX_MAX_ROWS_PARTITIONED, 50,000, of
# etl/raw_table/write_strategy.py): docs/decisions/004 measured the simple index as fast or faster up to 1,000,000
# rows unpartitioned and even at 50,000 partitioned, and a small commit without the metadata table about a third
# cheaper; 100,000 keeps the default well inside both.
DEFAULT_SMALL_TABLE_ROWS = 100_000


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
    availability_zones: Annotated[list[AvailabilityZone], Field(min_length=2, max_length=2)] = Field(
        description=(
            "The two Availability Zones of the VPC's subnets, in the environment's region (e.g. eu-west-1a, "
            "eu-west-1b). Named here, never derived from the region: AZ letters map to different zones per account."
        )
    )
    alarm_email: Annotated[str, StringConstraints(pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")] | None = Field(
        default=None,
        description=(
            "Address subscribed to the alerts topic; required when manual_approval is true (an environment "
            "someone approves is one someone must hear from)."
        ),
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

    @model_validator(mode="after")
    def _zones_in_region(self) -> Environment:
        outside = [zone for zone in self.availability_zones if zone[:-1] != self.region]
        if outside:
            raise ValueError(f"availability_zones {outside} are not in region {self.region!r}")
        if len(set(self.availability_zones)) != len(self.availability_zones):
            raise ValueError(f"availability_zones {self.availability_zones} must be two different zones")
        return self

    @model_validator(mode="after")
    def _approved_environments_alert_someone(self) -> Environment:
        if self.manual_approval and self.alarm_email is None:
            raise ValueError(
                "alarm_email is required when manual_approval is true: the alerts topic of an approved "
                "environment needs a subscriber"
            )
        return self


# A prefix that every Glue database ODP writes starts with: lower case, at least two characters before its closing "_"
# (so "odp_" never matches "odpx_sales"), Glue's own characters.
DATABASE_PREFIX = r"^[a-z][a-z0-9_]{1,62}_$"


class EnvironmentsFile(_Strict):
    """config/environments.yaml. (prod approval and unique branches are checked by the loader; that every database
    starts with ``database_prefix`` by the loader too.)"""

    deployment: DeploymentAccount
    source: SourceConnection
    environments: dict[ResourceName, Environment] = Field(min_length=1)
    database_prefix: Annotated[str, StringConstraints(pattern=DATABASE_PREFIX)] | None = Field(
        default=None,
        description=(
            "Optional: every Glue database of the tables and datasets starts with this prefix (e.g. odp_; checked "
            "when the configuration loads). The jobs' roles are then granted the catalog by the pattern <prefix>* in "
            "one statement instead of by each database's name, which IAM's policy sizes stop at about 225 databases "
            "(docs/decisions/034). Any database of the account with this prefix is then in the jobs' reach: choose "
            "one that only ODP's databases use."
        ),
    )


# --------------------------------------------------------------------------------------------
# cadences.yaml
# --------------------------------------------------------------------------------------------


class GlueWorkerType(StrEnum):
    G_1X = "G.1X"
    G_2X = "G.2X"
    G_4X = "G.4X"
    G_8X = "G.8X"
    G_025X = "G.025X"


class EngineName(StrEnum):
    """What runs a job: AWS Glue (the default) or an EMR Serverless application
    (infrastructure/jobs/engines/emr_serverless.py)."""

    GLUE = "glue"
    EMR_SERVERLESS = "emr_serverless"


WORKER_DPUS = {
    GlueWorkerType.G_025X: 0.25,
    GlueWorkerType.G_1X: 1.0,
    GlueWorkerType.G_2X: 2.0,
    GlueWorkerType.G_4X: 4.0,
    GlueWorkerType.G_8X: 8.0,
}


def job_dpus(worker_type: str, workers: int) -> float:
    """DPUs of a Glue run of ``workers`` workers of ``worker_type`` (G.025X = 0.25, G.1X = 1, G.2X = 2, ...).

    Raises:
        ValueError: not a Glue worker type.
    """
    return workers * WORKER_DPUS[GlueWorkerType(worker_type)]


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


class CadenceMode(StrEnum):
    """How a cadence's ticks run (docs/decisions/032)."""

    SCHEDULED = "scheduled"  # each tick an execution of the cadence's state machine, one Glue run per planned run
    WARM = "warm"  # one long-lived Glue run keeps its JVM and runs every tick itself (etl/file_processor/warm.py)


class Cadence(_Strict):
    """A refresh cadence: one schedule, one state machine, one Glue job configuration."""

    schedule: str = Field(description="EventBridge Scheduler expression: rate(10 minutes) or cron(...).")
    batch_size: Annotated[int, Field(ge=1, le=500)] = Field(
        description="At most this many tables per job run (the planner packs fewer when their work passes the target)."
    )
    worker_type: GlueWorkerType = Field(default=GlueWorkerType.G_1X, description="Glue worker type.")
    number_of_workers: Annotated[int, Field(ge=2, le=299)] = Field(
        default=2, description="Glue workers of a run of several tables (the base a table's work is estimated on)."
    )
    max_workers: Annotated[int, Field(ge=2, le=299)] | None = Field(
        default=None,
        description=(
            "Workers a table whose work alone exceeds the target may get in its own run; default "
            "number_of_workers (no larger runs)."
        ),
    )
    target_run_minutes: Annotated[float, Field(gt=0, le=2880)] = Field(
        default=5,
        description=(
            "What one job run should take, start-up included: the Batch Manager packs tables into runs by their "
            "estimated work toward it (odp/planning.py)."
        ),
    )
    max_concurrency: Annotated[int, Field(ge=1, le=40)] = Field(
        default=2, description="Glue runs the state machine's Map starts at once."
    )
    job_timeout_minutes: Annotated[int, Field(ge=5, le=2880)] = Field(
        default=60, description="Glue job timeout; a run past it fails and its tables retry next time."
    )
    engine: EngineName = Field(
        default=EngineName.GLUE,
        description=(
            "What runs the cadence's File Processor: glue (its Glue job) or emr_serverless (the stage's EMR "
            "Serverless application; worker_type and number_of_workers then size nothing)."
        ),
    )
    table_concurrency: Annotated[int, Field(ge=1, le=32)] = Field(
        default=4,
        description=(
            "Tables of one batch a Glue run writes at once (threads sharing one Spark application, FAIR "
            "scheduler pools); 1 = one after another."
        ),
    )
    table_metrics: bool = Field(
        default=False,
        description=(
            "Also publish each table run's seconds, DPU-seconds and ignored column values as CloudWatch metrics "
            "with a table dimension (each table-metric pair is a billed custom metric). Off: one set per cadence "
            "and run; each table's figures stay in the job's log and the run history."
        ),
    )

    mode: CadenceMode = Field(
        default=CadenceMode.SCHEDULED,
        description=(
            "scheduled: each tick starts Glue runs (start-up and JVM warm-up paid per run). warm: one long-lived "
            "Glue run polls the trackers every tick and writes in its warm JVM (always-on cost), restarted by the "
            "schedule after a deploy, a failure or its lifetime (job_timeout_minutes); Glue engine and a rate(...) "
            "schedule only (docs/decisions/032)."
        ),
    )

    @field_validator("schedule")
    @classmethod
    def _schedule_is_valid(cls, value: str) -> str:
        schedule_interval_minutes(value)
        return value

    @model_validator(mode="after")
    def _worker_bounds(self) -> Cadence:
        if self.max_workers is not None and self.max_workers < self.number_of_workers:
            raise ValueError(
                f"max_workers ({self.max_workers}) must be at least number_of_workers ({self.number_of_workers})"
            )
        return self

    @model_validator(mode="after")
    def _warm_fits(self) -> Cadence:
        if self.mode is not CadenceMode.WARM:
            return self
        if self.engine is not EngineName.GLUE:
            raise ValueError(f"mode warm runs on the Glue engine only, not {self.engine.value}: use mode scheduled")
        if self.interval_minutes is None:
            raise ValueError(f"mode warm ticks at a fixed interval: use a rate(...) schedule, not {self.schedule!r}")
        warm_lifetime_seconds(self.job_timeout_minutes, self.interval_minutes * 60)  # raises when too short
        return self

    @property
    def interval_minutes(self) -> int | None:
        return schedule_interval_minutes(self.schedule)

    @property
    def plan_targets(self) -> PlanTargets:
        """What the Batch Manager plans this cadence's runs toward (:func:`odp.planning.plan_runs`)."""
        return PlanTargets.of(self)

    @property
    def job_dpus(self) -> float:
        """DPUs of one Glue run: workers x DPUs per worker (G.025X = 0.25, G.1X = 1, G.2X = 2, ...)."""
        return job_dpus(self.worker_type, self.number_of_workers)


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
    FILES = "files"  # plain CSV (with a header) / JSON lines / Parquet drops: every row an upsert (or appended)


class TableType(StrEnum):
    COPY_ON_WRITE = "COPY_ON_WRITE"
    MERGE_ON_READ = "MERGE_ON_READ"


class IndexKind(StrEnum):
    """A table's Hudi index (the bucket index is chosen by ``index_buckets`` instead)."""

    RECORD = "record"  # Hudi's record level index in the metadata table: a lookup per changed key
    SIMPLE = "simple"  # Hudi's (GLOBAL_)SIMPLE index without the metadata table: a join with the stored keys


class TableMode(StrEnum):
    """current: one row per key, the latest state. historical: every change, kept."""

    CURRENT = "current"
    HISTORICAL = "historical"


class NewColumns(StrEnum):
    """What a file's column (or a record's attribute) outside the table's configured ``columns`` does."""

    ADD = "add"  # added to the table as a new column (schema evolution)
    REFUSE = "refuse"  # the file is refused, naming the column (and the row for record formats)
    IGNORE = "ignore"  # dropped, logged and counted (run history, metric IgnoredColumnValues)


class MissingColumns(StrEnum):
    """What a change does with a column its file's format declares it lacks (Parquet, CSV with a header)."""

    REFUSE = "refuse"  # the file fails, naming the column (the default: never NULL by surprise)
    KEEP = "keep"  # the stored value stays: a partial update
    NULL = "null"  # the column is NULL in the file's changes (the behaviour before this setting)


# Debezium's ``unavailable.value.placeholder`` default: an unchanged TOASTed Postgres column of an update
# (REPLICA IDENTITY DEFAULT). Binary columns carry its UTF-8 bytes, base64 in JSON.
DEBEZIUM_UNAVAILABLE_VALUE = "__debezium_unavailable_value"


class DebeziumShape(StrEnum):
    """How a Debezium table's records are written to S3."""

    ENVELOPE = "envelope"  # the change event: op, before, after, source
    FLATTENED = "flattened"  # ExtractNewRecordState: the row plus __op, __source_ts_ms, __deleted, ...


# The change frame's bookkeeping columns as one struct in a transform's input; the SELECT must keep it.
TRANSFORM_META = "_odp"
TRANSFORM_SOURCE = "<SRC>"
# Column names of ODP's change frame and of Hudi's meta columns: a source column may not take them.
RESERVED_COLUMN_PREFIXES = ("_odp_", "_hoodie_")


def is_reserved_column(name: str) -> bool:
    """Pure: whether a column name is ODP's or Hudi's own (``_odp``, ``_odp_*``, ``_hoodie_*``, any case)."""
    lower = name.lower()
    return lower == TRANSFORM_META or lower.startswith(RESERVED_COLUMN_PREFIXES)


def transform_problems(sql: str, required: list[str]) -> list[str]:
    """What is wrong with a per-table transform, checked without Spark (Spark checks again at run time).

    A transform is one SELECT over ``<SRC>`` (the change frame) that keeps ``_odp`` (the change's op and
    ordering) and every column in ``required`` (key and partition columns) by name.
    """
    problems = []
    text = sql.strip()
    if not re.match(r"(?is)^select\b", text):
        problems.append("must be one SELECT statement")
    if ";" in text.rstrip(";"):
        problems.append("must be one statement (no ';' inside)")
    if TRANSFORM_SOURCE not in text:
        problems.append(f"must read from {TRANSFORM_SOURCE} (the table's changes)")
    for name in [TRANSFORM_META, *required]:
        if not re.search(rf"(?i)(?<![\w`]){re.escape(name)}(?![\w`])|`{re.escape(name)}`", text):
            problems.append(f"must keep column {name}")
    return problems


INDEX_CONFLICT = "index: simple and index_buckets exclude each other (index_buckets chooses the bucket index)"


def codec_name(encoding: str) -> str:
    """Pure: a table's ``encoding`` as Python's codec name; ValueError for an unknown one."""
    try:
        return codecs.lookup(encoding).name
    except LookupError as error:
        raise ValueError(f"unknown encoding {encoding!r} (use a Python codec name: utf-8, latin-1, cp1252)") from error


def checked_column_types(columns: dict[str, str]) -> dict[str, str]:
    """Pure: a table's ``columns`` with their Spark SQL types normalised; ValueError for an unknown type, a column
    name of ODP's or Hudi's own, or two names that differ only in case."""
    bad = [f"{name}: {kind!r}" for name, kind in columns.items() if not SPARK_TYPE.match(kind.strip().lower())]
    if bad:
        raise ValueError("unknown Spark SQL type for " + ", ".join(bad))
    reserved = [name for name in columns if is_reserved_column(name)]
    if reserved:
        raise ValueError(f"column {reserved[0]}: _odp, _odp_* and _hoodie_* are ODP's and Hudi's own columns")
    spelled: dict[str, str] = {}
    for name in columns:
        first = spelled.setdefault(name.lower(), name)
        if first != name:
            raise ValueError(f"columns {first} and {name} differ only in case: Spark takes them for one column")
    return {name: kind.strip().lower() for name, kind in columns.items()}


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
    stream: ResourceName | None = Field(
        default=None,
        description="Name of a stream in streams.yaml (dynamodb tables only); a table has a cadence or a stream.",
    )
    database: GlueName | None = Field(default=None, description="Target Glue database (lower case).")
    is_active: bool | None = Field(default=None, description="Inactive tables are kept but not processed.")
    max_file_attempts: Annotated[int, Field(ge=1, le=100)] | None = Field(
        default=None,
        description=(
            "Failed runs a file may cause before it is quarantined (status quarantined in file_tracker, its error "
            "kept) and the table goes on without it, for failures that may pass on a later try (a throttled or "
            "timed-out read of the file); a file whose content fails (parse, type, event time, unknown op) is "
            f"quarantined at its first failure. Default {DEFAULT_MAX_FILE_ATTEMPTS}."
        ),
    )
    max_table_attempts: Annotated[int, Field(ge=1, le=100)] | None = Field(
        default=None,
        description=(
            "Failed runs in a row a table may have before it is held: the Batch Manager leaves it out (its files "
            "stay landed, their age shows in the freshness metric) until python -m odp retry, after a fix. Counts "
            "the failures no file is the difference for (the table's configuration or Hudi table, a read that "
            "fails whatever its files); a file that fails is quarantined instead and the table goes on. "
            f"Default {DEFAULT_MAX_TABLE_ATTEMPTS}."
        ),
    )
    index_buckets: Annotated[int, Field(ge=1, le=4096)] | None = Field(
        default=None,
        description=(
            "Batch tables only. Omitted (the default): Hudi's record level index, global (a key is found in any "
            "partition, and a row whose partition value changes moves). N: Hudi's bucket index with N buckets per "
            "partition: no index lookup and no index to write (about 28% less time per run on the benchmark), but "
            "a key is only looked for in the partition its change names. Set it only when the partition columns "
            "of a row never change (or the table is not partitioned), and size N for the table's expected size "
            "(about 1,000,000 rows per bucket). Fixed at the table's first write: ODP refuses to write a table "
            "whose stored index differs from this setting."
        ),
    )
    index: IndexKind | None = Field(
        default=None,
        description=(
            "Batch tables only. Omitted: chosen at the table's first write by its size (small_table_rows). "
            "record: Hudi's record level index, kept in the table's metadata table. "
            "simple: for small tables (measured: unpartitioned up to 1,000,000 rows, partitioned under 50,000): "
            "Hudi's SIMPLE index (GLOBAL_SIMPLE when the table is partitioned, so a row whose partition value "
            "changes still moves) and no metadata table: each run "
            "joins its changes with the stored keys instead of looking them up, and commits no metadata table "
            "(about a third of a small commit's work; docs/decisions/004). The run's reason "
            "says when the table has grown past the size it suits. Not with index_buckets. Fixed at the table's "
            "first write, like index_buckets."
        ),
    )
    small_table_rows: Annotated[int, Field(ge=0, le=1_000_000)] | None = Field(
        default=None,
        description=(
            "Batch current tables without index or index_buckets: a table whose first write brings fewer rows than "
            f"this is created with the simple index (index: simple), a larger one with the record level index; "
            "a partitioned table at most 50,000 (where the simple index stops paying, docs/decisions/004). Decided "
            "once, at the table's first write, and the run's reason says which and why. 0: always the record "
            f"level index. Default {DEFAULT_SMALL_TABLE_ROWS}."
        ),
    )
    columns: dict[ColumnName, str] | None = Field(
        default=None,
        description=(
            "Optional column name -> Spark SQL type (string, bigint, decimal(10,2), ...), in the order of the "
            "source's fields: headerless DMS CSV is read in this order (after Op). Values that do not convert "
            "to their type fail the file (never NULL)."
        ),
    )
    csv_header: bool | None = Field(
        default=None,
        description=(
            "dms CSV: true = every file starts with a header row (DMS AddColumnName=true), false = never; "
            "omitted = detected (a first line that names the configured columns is a header)."
        ),
    )
    csv_delimiter: Annotated[str, StringConstraints(min_length=1, max_length=1, strip_whitespace=False)] | None = Field(
        default=None, description="dms CSV: the field delimiter (DMS CsvDelimiter); default ','."
    )
    csv_null_value: Annotated[str, StringConstraints(strip_whitespace=False)] | None = Field(
        default=None,
        description=(
            "dms CSV: the text DMS writes for NULL (CsvNullValue); default: an empty field is NULL. When set, "
            "an empty field is an empty string."
        ),
    )
    encoding: str | None = Field(
        default=None,
        description="Text encoding of CSV and JSON files (a Python codec name); default utf-8. Bytes that do "
        "not decode fail the file.",
    )
    debezium_shape: DebeziumShape | None = Field(
        default=None,
        description=(
            "debezium: envelope (op/before/after/source) or flattened (ExtractNewRecordState with "
            "add.fields=op,source.ts_ms,...); omitted = detected per record."
        ),
    )
    event_time_tolerance: str | None = Field(
        default=None,
        description=(
            "How far past the run's start (the micro-batch's processing time on a stream) an event time may be: "
            "a whole number and a unit d, h, m or s (1d, 6h, 30m, 90s); default 1d. A later event time fails its "
            "file (a bad record on a stream). Applies to event-time orderings only (dms/files: a timestamp or date "
            "ordering column; debezium: source.ts_ms; dynamodb: ApproximateCreationDateTime)."
        ),
    )
    event_time_floor: str | None = Field(
        default=None,
        description=(
            "The earliest event time accepted: an ISO date or date-time (no offset = UTC); default none. An "
            "earlier event time fails its file (a bad record on a stream). Same orderings as event_time_tolerance."
        ),
    )
    new_columns: NewColumns | None = Field(
        default=None,
        description=(
            "What a column outside columns does (a file's column, a Debezium field, a DynamoDB attribute; "
            "DynamoDB's nested types flattened as always): add (default) = a new table column, refuse = the file "
            "is refused naming the column (and the row), ignore = dropped, logged and counted in the run's "
            "history. refuse and ignore need columns."
        ),
    )
    missing_columns: MissingColumns | None = Field(
        default=None,
        description=(
            "A file whose format declares its columns (Parquet, CSV with a header) without a configured column "
            "(without columns: a column of the stored table): refuse (default: the file fails, naming the column), "
            "keep (the stored value stays: a partial update; a key with no stored row fails its file) or null "
            "(the column is NULL in that file's changes)."
        ),
    )
    unavailable_value_placeholder: Annotated[str, StringConstraints(min_length=1, strip_whitespace=False)] | None = (
        Field(
            default=None,
            description=(
                "debezium: the connector's unavailable.value.placeholder (formerly toasted.value.placeholder); "
                f"default {DEBEZIUM_UNAVAILABLE_VALUE}. A column whose new value is the placeholder (text, its "
                "base64 in a binary column, or an array of it) keeps its stored value (Postgres TOAST); a key with "
                "no earlier change in the run and no stored row fails its file."
            ),
        )
    )
    transform: str | None = Field(
        default=None,
        description=(
            "Optional Spark SQL SELECT over <SRC> (the table's changes), applied before the write: it must keep "
            "_odp (each change's op and ordering) and the key and partition columns, e.g. "
            '"SELECT _odp, id, upper(name) AS name FROM <SRC>".'
        ),
    )

    @field_validator("encoding")
    @classmethod
    def _encoding_is_known(cls, value: str | None) -> str | None:
        return None if value is None else codec_name(value)

    @field_validator("event_time_tolerance")
    @classmethod
    def _tolerance_is_a_duration(cls, value: str | None) -> str | None:
        if value is not None:
            parse_tolerance(value)
        return value

    @field_validator("event_time_floor")
    @classmethod
    def _floor_is_a_time(cls, value: str | None) -> str | None:
        if value is not None:
            parse_floor(value)
        return value

    @field_validator("columns")
    @classmethod
    def _types_are_spark_types(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        return None if value is None else checked_column_types(value)


# Reader settings a table resolves from its entry or the file's defaults (None = the reader's default).
SOURCE_SETTINGS = (
    "csv_header",
    "csv_delimiter",
    "csv_null_value",
    "encoding",
    "debezium_shape",
    "transform",
    "event_time_tolerance",
    "event_time_floor",
    "new_columns",
    "missing_columns",
    "unavailable_value_placeholder",
)
_SETTINGS_OF_FORMAT = {
    "csv_header": "dms",
    "csv_delimiter": "dms",
    "csv_null_value": "dms",
    "debezium_shape": "debezium",
    "unavailable_value_placeholder": "debezium",
}


def source_setting_issues(
    source_format: SourceFormat, pick: Callable[[str], Any], required: list[str]
) -> list[tuple[str, str]]:
    """(setting, reason) for reader settings that do not fit the source format or the table.

    ``pick(name)`` gives a setting as resolved (table entry over defaults); ``required`` are the key and
    partition columns a transform must keep.
    """
    issues = [
        (name, f"only for {only} sources, this is a {source_format.value} source")
        for name, only in _SETTINGS_OF_FORMAT.items()
        if pick(name) is not None and only != source_format.value
    ]
    if pick("new_columns") not in (None, NewColumns.ADD) and pick("columns") is None:
        issues.append(
            ("new_columns", f"{pick('new_columns').value} needs columns (the declared columns it keeps the table to)")
        )
    transform = pick("transform")
    if transform is not None:
        issues += [("transform", problem) for problem in transform_problems(transform, required)]
    return issues


# A table pattern: ``<schema glob>.<table glob>`` matched against a staging key's schema and table segments with
# shell-style globs (Python's fnmatch, case-sensitive): ``*`` any run of characters, ``?`` one, ``[abc]`` / ``[!abc]``
# one of (or none of) a set. Exactly one dot separates the schema glob from the table glob.
TABLE_GLOB = r"^[A-Za-z0-9_$*?\[\]!-]{1,128}\.[A-Za-z0-9_$*?\[\]!-]{1,128}$"
TableGlob = Annotated[str, StringConstraints(pattern=TABLE_GLOB)]
DEFAULT_SHARD_COLUMN = "shard"


class ShardFrom(StrEnum):
    """Where a merged table's shard value comes from."""

    SCHEMA = "schema"  # the staging key's schema segment (<source>/<shard>/<table>/...)
    TABLE = "table"  # the staging key's table segment (<source>/<schema>/<shard>/...)
    COLUMN = "column"  # a column of the rows themselves (shard_column names it)


class TableEntry(TableSettings):
    """One table of a source file, or (``from``) one target table fed by every source table a glob matches."""

    schema_name: Identifier | None = Field(
        default=None, alias="schema", description="Schema (or namespace) of the source table (not with from)."
    )
    table: Identifier | None = Field(
        default=None, description="Source table name, as in the staging key (not with from)."
    )
    target_table: GlueName | None = Field(
        default=None, description="Glue table name; default: table, lower case (required with from)."
    )
    from_: TableGlob | None = Field(
        default=None,
        alias="from",
        description=(
            "Shards merged: a glob <schema>.<table> (fnmatch: *, ?, [..]) on the staging key's schema and table "
            "segments, e.g. shard_*.orders; every matching source table writes this one target table, the shard "
            "(shard_from) a column of it and the first column of its key. Instead of schema and table."
        ),
    )
    shard_column: ColumnName | None = Field(
        default=None,
        description=f"with from: the target column holding the shard; default {DEFAULT_SHARD_COLUMN!r}.",
    )
    shard_from: ShardFrom | None = Field(
        default=None,
        description=(
            "with from: schema (default) = the staging key's schema segment is the shard; table = its table "
            "segment; column = the rows carry it in shard_column."
        ),
    )

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, str_strip_whitespace=True)

    @model_validator(mode="after")
    def _names_or_from(self) -> TableEntry:
        if self.from_ is None:
            missing = [name for name in ("schema", "table") if getattr(self, _ENTRY_FIELDS[name]) is None]
            if missing:
                raise ValueError(f"{' and '.join(missing)} required (or from: <schema glob>.<table glob>)")
            if self.shard_column is not None or self.shard_from is not None:
                raise ValueError("shard_column and shard_from apply to merged tables only (from: ...)")
            return self
        if self.schema_name is not None or self.table is not None:
            raise ValueError("from replaces schema and table: set one or the other")
        if self.target_table is None:
            raise ValueError("target_table required with from (the one table every shard writes)")
        return self

    @property
    def source_schema(self) -> str:
        """The schema segment of the staging key: the schema, or the schema glob of ``from``."""
        return self.schema_name if self.from_ is None else self.from_.split(".", 1)[0]

    @property
    def source_table(self) -> str:
        """The table segment of the staging key: the table, or the table glob of ``from``."""
        return self.table if self.from_ is None else self.from_.split(".", 1)[1]


_ENTRY_FIELDS = {"schema": "schema_name", "table": "table"}


class TablesFile(_Strict):
    """config/tables/<source>.yaml: the tables of one source."""

    source: Identifier = Field(description="Source name: the first segment of the staging key; the file name.")
    format: SourceFormat = Field(
        description="dms | debezium | dynamodb | files (plain CSV/JSON/Parquet drops: upsert by key, or append "
        "with mode historical)."
    )
    defaults: TableSettings = Field(default_factory=TableSettings, description="Settings every table inherits.")
    tables: list[TableEntry] = Field(
        default_factory=list, description="The tables, one entry each; they override include (required without it)."
    )
    include: list[TableGlob] | None = Field(
        default=None,
        min_length=1,
        description=(
            "A whole source in one entry: globs <schema>.<table> (fnmatch: *, ?, [..]) on the staging key; a file "
            "under a matching prefix with no entry of its own onboards its table (the File Manager writes its "
            "table_config item from defaults; columns are read from the files). E.g. ['public.*']."
        ),
    )
    exclude: list[TableGlob] = Field(
        default_factory=list, description="Globs (as include) of tables include must not onboard."
    )

    @model_validator(mode="after")
    def _tables_or_include(self) -> TablesFile:
        if not self.tables and self.include is None:
            raise ValueError("tables: at least one entry required, or include: globs of the tables to onboard")
        if self.exclude and self.include is None:
            raise ValueError("exclude applies to include: set include too")
        return self


# --------------------------------------------------------------------------------------------
# The resolved view the rest of the code uses
# --------------------------------------------------------------------------------------------


class TableConfig(_Strict):
    """One table with every setting resolved: what the Glue job and the Lambdas consume.

    The defaults are ODP's (a current copy-on-write table, unpartitioned, active, its Glue table the source
    table's name in lower case), so a table is built one way everywhere: the Configuration Manager
    (:func:`odp.config.patterns.resolve_table`), the tests, the benchmarks and the sandbox name only what differs.
    """

    source: str
    schema_name: str
    table: str
    format: SourceFormat
    primary_key: tuple[str, ...]
    ordering_column: str | None = None
    partition_by: tuple[str, ...] = ()
    table_type: TableType = TableType.COPY_ON_WRITE
    mode: TableMode = TableMode.CURRENT
    cadence: str | None = None  # None for a streamed table (``stream`` set instead)
    database: str
    target_table: str = ""  # "": the source table's name in lower case
    is_active: bool = True
    columns: dict[str, str] | None = None  # ordered: the source's field order
    stream: str | None = None  # the stream that writes this table (then no cadence)
    csv_header: bool | None = None
    csv_delimiter: str = ","
    csv_null_value: str | None = None
    encoding: str = "utf-8"
    debezium_shape: DebeziumShape | None = None
    transform: str | None = None
    event_time_tolerance: str = DEFAULT_EVENT_TIME_TOLERANCE  # see odp.config.event_time
    event_time_floor: str | None = None
    new_columns: NewColumns = NewColumns.ADD  # columns outside ``columns``: add, refuse or ignore
    missing_columns: MissingColumns = MissingColumns.REFUSE
    unavailable_value_placeholder: str = DEBEZIUM_UNAVAILABLE_VALUE  # read by debezium sources only
    max_file_attempts: int = DEFAULT_MAX_FILE_ATTEMPTS
    max_table_attempts: int = DEFAULT_MAX_TABLE_ATTEMPTS
    index_buckets: int | None = None  # None: ``index``; N: the bucket index, N per partition
    index: IndexKind = IndexKind.RECORD  # with index_buckets None: the record level index or the simple index
    # > 0: ``index`` was not set, and the first write chooses it by its rows
    # (etl.raw_table.write_strategy.choose_index);
    # 0: ``index`` as set (every TableConfig built in code, a table with index or index_buckets, a historical or
    # streamed table). The Configuration Manager resolves a configured table's to DEFAULT_SMALL_TABLE_ROWS.
    small_table_rows: int = 0
    # Shards merged (an entry with from): schema_name/table are then globs, primary_key starts with shard_column.
    shard_column: str | None = None
    shard_from: ShardFrom | None = None
    onboarded: bool = False  # written by the File Manager from the source's include rule, not by an entry

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False)

    @model_validator(mode="before")
    @classmethod
    def _target_table_defaults_to_table(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("target_table") and isinstance(data.get("table"), str):
            return {**data, "target_table": data["table"].lower()}
        return data

    @model_validator(mode="after")
    def _one_index(self) -> TableConfig:
        if self.index is not IndexKind.RECORD and self.index_buckets is not None:
            raise ValueError(INDEX_CONFLICT)
        return self

    @property
    def shard_from_key(self) -> bool:
        """Whether the shard value is a segment of the staging key (the readers do not see that column)."""
        return self.shard_from in (ShardFrom.SCHEMA, ShardFrom.TABLE)

    def as_read(self) -> TableConfig:
        """The table as its reader sees the files: a shard taken from the staging key is added after reading."""
        if not self.shard_from_key:
            return self
        return self.model_copy(update={"primary_key": tuple(c for c in self.primary_key if c != self.shard_column)})

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
