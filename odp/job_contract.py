"""The File Processor job's arguments, spelled in one place.

The Glue job script parses them (getResolvedOptions on Glue, argparse locally), the CDK Glue
construct sets the static ones as default arguments, the Batch Manager emits the per-run ones for
each batch (the state machine passes them to glue:startJobRun unchanged), and the sandbox builds
both. Lists travel as JSON, never as Python literals, and are never evaluated.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from odp.naming import TrackerTableNames

# The metrics the job publishes per table run (etl/cost.py) and the dashboard reads (infrastructure/monitoring.py).
JOB_METRICS_NAMESPACE = "ODP"
TABLE_SECONDS_METRIC = "TableRunSeconds"
TABLE_DPU_SECONDS_METRIC = "TableDpuSeconds"
TABLE_DIMENSION = "table_id"
CADENCE_DIMENSION = "cadence"

DEFAULT_TABLE_CONCURRENCY = 4  # tables of one batch written at once (the cadence's table_concurrency)


class JobArgumentError(ValueError):
    """A job argument is missing or malformed; the message names it."""


def plain_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """Resolved job arguments by name, with or without the leading ``--`` in the input."""
    return {str(name).removeprefix("--"): value for name, value in arguments.items()}


def required_argument(plain: dict[str, Any], name: str) -> str:
    """Raises: JobArgumentError: the argument is missing or blank."""
    value = plain.get(name)
    if value is None or str(value).strip() == "":
        raise JobArgumentError(f"job argument --{name} is required")
    return str(value)


def json_names(raw: str, name: str, *, of: str | None = None) -> list[str]:
    """A job argument holding a JSON list of non-empty strings (parsed as JSON, never evaluated).

    Raises:
        JobArgumentError: not JSON (the message says a JSON list ``of`` what is expected), or not a list of strings.
    """
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as error:
        expected = f"a JSON list of {of}" if of else "a JSON list"
        raise JobArgumentError(f"job argument --{name} must be {expected}, got {raw!r}") from error
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise JobArgumentError(f"job argument --{name} must be a JSON list of strings, got {raw!r}")
    return value


@dataclass(frozen=True)
class FileProcessorJobArgs:
    """Everything one File Processor run needs.

    Static (set once per environment and cadence on the Glue job): environment, cadence, raw_root,
    the tracker table names, catalog_sync, lease_seconds, history_retention_days, table_concurrency
    (tables of the batch written at once, the cadence's setting), hudi_profile (``glue`` or ``local``:
    etl.hudi_options) and job_dpus (the job's DPUs, to share its DPU-seconds among the tables; 0 = unknown).
    Per run (from the Batch Manager, one batch of tables): table_ids, batch_id.
    """

    environment: str
    cadence: str
    table_ids: tuple[str, ...]
    raw_root: str  # s3://raw-bucket or file:///path/to/lake/raw: tables live at <raw_root>/<database>/<table>
    tracker_tables: TrackerTableNames
    batch_id: str = "manual"
    catalog_sync: bool = True  # Hudi meta sync to the Glue Data Catalog (off locally)
    lease_seconds: int = 900
    history_retention_days: int = 365
    table_concurrency: int = DEFAULT_TABLE_CONCURRENCY
    hudi_profile: str = "glue"
    job_dpus: float = 0.0

    # Glue argument names (without the leading "--"). One spelling, used everywhere.
    ENVIRONMENT: ClassVar[str] = "odp_environment"
    CADENCE: ClassVar[str] = "odp_cadence"
    TABLE_IDS: ClassVar[str] = "odp_table_ids"
    BATCH_ID: ClassVar[str] = "odp_batch_id"
    RAW_ROOT: ClassVar[str] = "odp_raw_root"
    CATALOG_SYNC: ClassVar[str] = "odp_catalog_sync"
    LEASE_SECONDS: ClassVar[str] = "odp_lease_seconds"
    HISTORY_RETENTION_DAYS: ClassVar[str] = "odp_history_retention_days"
    TABLE_CONCURRENCY: ClassVar[str] = "odp_table_concurrency"
    HUDI_PROFILE: ClassVar[str] = "odp_hudi_profile"
    JOB_DPUS: ClassVar[str] = "odp_job_dpus"
    HUDI_PROFILES: ClassVar[tuple[str, ...]] = ("glue", "local")
    TABLE_PREFIX: ClassVar[str] = "odp_table_"  # + logical tracker name, e.g. odp_table_file_tracker

    RUN_ARGUMENTS: ClassVar[tuple[str, ...]] = (TABLE_IDS, BATCH_ID)

    @classmethod
    def tracker_argument_names(cls) -> dict[str, str]:
        """Logical tracker table -> Glue argument name."""
        return {field.name: cls.TABLE_PREFIX + field.name for field in fields(TrackerTableNames)}

    @classmethod
    def argument_names(cls) -> tuple[str, ...]:
        """Every argument the job takes, in the order getResolvedOptions is asked for them."""
        return (
            cls.ENVIRONMENT,
            cls.CADENCE,
            cls.TABLE_IDS,
            cls.BATCH_ID,
            cls.RAW_ROOT,
            cls.CATALOG_SYNC,
            cls.LEASE_SECONDS,
            cls.HISTORY_RETENTION_DAYS,
            cls.TABLE_CONCURRENCY,
            cls.HUDI_PROFILE,
            cls.JOB_DPUS,
            *cls.tracker_argument_names().values(),
        )

    @staticmethod
    def static_arguments(
        *,
        environment: str,
        cadence: str,
        raw_root: str,
        tracker_tables: TrackerTableNames,
        catalog_sync: bool = True,
        lease_seconds: int = 900,
        history_retention_days: int = 365,
        table_concurrency: int = DEFAULT_TABLE_CONCURRENCY,
        hudi_profile: str = "glue",
        job_dpus: float = 0.0,
    ) -> dict[str, str]:
        """The Glue job's DefaultArguments (keys with the leading ``--``)."""
        cls = FileProcessorJobArgs
        arguments = {
            cls.ENVIRONMENT: environment,
            cls.CADENCE: cadence,
            cls.RAW_ROOT: raw_root,
            cls.CATALOG_SYNC: "true" if catalog_sync else "false",
            cls.LEASE_SECONDS: str(lease_seconds),
            cls.HISTORY_RETENTION_DAYS: str(history_retention_days),
            cls.TABLE_CONCURRENCY: str(table_concurrency),
            cls.HUDI_PROFILE: hudi_profile,
            cls.JOB_DPUS: str(job_dpus),
        }
        for logical, name in cls.tracker_argument_names().items():
            arguments[name] = getattr(tracker_tables, logical)
        return {f"--{name}": value for name, value in arguments.items()}

    @staticmethod
    def run_arguments(table_ids: list[str] | tuple[str, ...], batch_id: str) -> dict[str, str]:
        """The per-run Arguments of glue:startJobRun (keys with the leading ``--``)."""
        cls = FileProcessorJobArgs
        return {f"--{cls.TABLE_IDS}": json.dumps(list(table_ids)), f"--{cls.BATCH_ID}": batch_id}

    def to_arguments(self) -> dict[str, str]:
        """All arguments, as a Glue run would see them (static merged with per run)."""
        return {
            **self.static_arguments(
                environment=self.environment,
                cadence=self.cadence,
                raw_root=self.raw_root,
                tracker_tables=self.tracker_tables,
                catalog_sync=self.catalog_sync,
                lease_seconds=self.lease_seconds,
                history_retention_days=self.history_retention_days,
                table_concurrency=self.table_concurrency,
                hudi_profile=self.hudi_profile,
                job_dpus=self.job_dpus,
            ),
            **self.run_arguments(self.table_ids, self.batch_id),
        }

    @classmethod
    def from_arguments(cls, arguments: dict[str, Any]) -> FileProcessorJobArgs:
        """Build from resolved arguments (names with or without ``--``).

        Raises:
            JobArgumentError: an argument is missing or malformed; the message names it.
        """
        plain = plain_arguments(arguments)

        def need(name: str) -> str:
            return required_argument(plain, name)

        def number(name: str, default: int) -> int:
            raw = plain.get(name)
            if raw is None or str(raw).strip() == "":
                return default
            try:
                value = int(str(raw))
            except ValueError as error:
                raise JobArgumentError(f"job argument --{name} must be a whole number, got {raw!r}") from error
            if value < 1:
                raise JobArgumentError(f"job argument --{name} must be at least 1, got {value}")
            return value

        table_ids = json_names(need(cls.TABLE_IDS), cls.TABLE_IDS, of="table ids")
        sync = plain.get(cls.CATALOG_SYNC, "true")
        if str(sync).lower() not in ("true", "false"):
            raise JobArgumentError(f"job argument --{cls.CATALOG_SYNC} must be true or false, got {sync!r}")
        profile = str(plain.get(cls.HUDI_PROFILE) or "glue").lower()
        if profile not in cls.HUDI_PROFILES:
            raise JobArgumentError(f"job argument --{cls.HUDI_PROFILE} must be glue or local, got {profile!r}")
        raw_dpus = plain.get(cls.JOB_DPUS)
        try:
            job_dpus = float(str(raw_dpus)) if raw_dpus is not None and str(raw_dpus).strip() else 0.0
        except ValueError as error:
            raise JobArgumentError(f"job argument --{cls.JOB_DPUS} must be a number, got {raw_dpus!r}") from error
        if job_dpus < 0:
            raise JobArgumentError(f"job argument --{cls.JOB_DPUS} must not be negative, got {job_dpus}")
        tracker = TrackerTableNames(**{logical: need(name) for logical, name in cls.tracker_argument_names().items()})
        return cls(
            environment=need(cls.ENVIRONMENT),
            cadence=need(cls.CADENCE),
            table_ids=tuple(dict.fromkeys(table_ids)),
            raw_root=need(cls.RAW_ROOT).rstrip("/"),
            tracker_tables=tracker,
            batch_id=str(plain.get(cls.BATCH_ID) or "manual"),
            catalog_sync=str(sync).lower() == "true",
            lease_seconds=number(cls.LEASE_SECONDS, 900),
            history_retention_days=number(cls.HISTORY_RETENTION_DAYS, 365),
            table_concurrency=number(cls.TABLE_CONCURRENCY, DEFAULT_TABLE_CONCURRENCY),
            hudi_profile=profile,
            job_dpus=job_dpus,
        )

    def table_base_path(self, database: str, table: str) -> str:
        """Where a table's Hudi files live."""
        return f"{self.raw_root}/{database}/{table}"
