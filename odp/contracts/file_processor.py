"""The File Processor job's arguments, each declared once.

The Glue job script parses them (getResolvedOptions on Glue, argparse locally), the CDK Glue construct
sets the static ones as DefaultArguments, the Batch Manager emits the per-run ones for each batch (the
state machine passes them to glue:startJobRun unchanged), and the sandbox builds both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from odp.contracts.arguments import Glue, PerRun
from odp.contracts.base import CatalogSync, Environment, JobContract, LeaseSeconds, RawRoot, TableIds
from odp.naming import TrackerTableNames, table_base_path

DEFAULT_TABLE_CONCURRENCY = 4  # tables of one batch written at once (the cadence's table_concurrency)
MODE_ARGUMENT = "odp_mode"
WARM_BATCH_ID = "warm"  # a warm run's own id; each tick's runs are "warm-<tick>-<n>"


@dataclass(frozen=True)
class FileProcessorJobArgs(JobContract):
    """Everything one File Processor run needs: per run (from the Batch Manager, one batch of tables)
    ``table_ids`` and ``batch_id``; every other argument is static (set once per environment and cadence
    on the Glue job)."""

    environment: Environment
    cadence: Annotated[str, Glue("odp_cadence", "the cadence whose batch this run writes")]
    table_ids: Annotated[TableIds, PerRun]
    raw_root: RawRoot
    tracker_tables: Annotated[
        TrackerTableNames, Glue("odp_table_{}", "the tracker tables' physical names, one argument per table")
    ]
    batch_id: Annotated[str, Glue("odp_batch_id", "the batch's id in the execution"), PerRun] = "manual"
    catalog_sync: CatalogSync = True
    lease_seconds: LeaseSeconds = 900
    history_retention_days: Annotated[
        int, Glue("odp_history_retention_days", "days the tracker history rows are kept")
    ] = 365
    table_concurrency: Annotated[
        int, Glue("odp_table_concurrency", "tables of the batch written at once (the cadence's setting)")
    ] = DEFAULT_TABLE_CONCURRENCY
    hudi_profile: Annotated[
        Literal["glue", "local"], Glue("odp_hudi_profile", "the Hudi write profile (etl.hudi.options)")
    ] = "glue"
    job_dpus: Annotated[
        float, Glue("odp_job_dpus", "the job's DPUs, to share its DPU-seconds among the tables; 0 = unknown")
    ] = 0.0
    table_metrics: Annotated[
        bool, Glue("odp_table_metrics", "each table's cost metrics with a table dimension (the cadence's setting)")
    ] = False
    mode: Annotated[
        Literal["scheduled", "warm"],
        Glue(MODE_ARGUMENT, "scheduled: write table_ids once; warm: run the cadence's ticks (etl.file_processor.warm)"),
        PerRun,
    ] = "scheduled"

    @classmethod
    def tracker_argument_names(cls) -> dict[str, str]:
        """Logical tracker table -> Glue argument name."""
        return {a.member: a.name for a in cls.arguments() if a.field == "tracker_tables" and a.member}

    @classmethod
    def run_arguments(cls, table_ids: list[str] | tuple[str, ...], batch_id: str) -> dict[str, str]:
        """The per-run Arguments of glue:startJobRun of a scheduled run (keys with the leading ``--``); its mode is
        the default, not passed."""
        rendered = cls.render({"table_ids": tuple(table_ids), "batch_id": batch_id}, per_run=True)
        del rendered[f"--{MODE_ARGUMENT}"]
        return rendered

    @classmethod
    def warm_arguments(cls) -> dict[str, str]:
        """The per-run Arguments that start a warm cadence's long-lived run: no tables (it plans its own ticks)."""
        return cls.render({"table_ids": (), "batch_id": WARM_BATCH_ID, "mode": "warm"}, per_run=True)

    def table_base_path(self, database: str, table: str) -> str:
        """Where a table's Hudi files live."""
        return table_base_path(self.raw_root, database, table)
