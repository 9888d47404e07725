"""The dataset job's arguments and where each zone's tables live, each declared once.

The Glue entry point (etl/jobs/dataset_job.py) parses them, the sandbox builds them, and an
orchestrator passes the per-run ones (the datasets, or the raw tables a File Processor run changed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from odp.config.datasets import DatasetConfig, Zone
from odp.config.models import TableConfig
from odp.contracts.arguments import Glue
from odp.contracts.base import NO_LEDGER, Canary, CatalogSync, JobContract, LeaseSeconds, Ledger, TableConfigTable
from odp.naming import DATASET_CONFIG, table_base_path, tracker_table_names


@dataclass(frozen=True)
class LakeRoots:
    """Where each zone's tables live: ``<root>/<database>/<table>`` (s3:// on Glue, file:// locally)."""

    raw: str
    conformed: str
    purpose_built: str

    def dataset_path(self, dataset: DatasetConfig) -> str:
        root = self.conformed if dataset.zone is Zone.CONFORMED else self.purpose_built
        return table_base_path(root, dataset.database, dataset.name)

    def table_path(self, table: TableConfig) -> str:
        return table_base_path(self.raw, table.database, table.target_table)


DatasetConfigTable = Annotated[
    str, Glue("odp_dataset_config", "the dataset_config DynamoDB table: the datasets, their SQL included")
]


def config_tables(environment: str) -> dict[str, str]:
    """The tables the dataset job reads its configuration from, as :class:`DatasetJobArgs` fields: the
    environment's table_config and dataset_config (what the Configuration Manager loads)."""
    names = tracker_table_names(environment)
    return {"table_config_table": names["table_config"], "dataset_config_table": names[DATASET_CONFIG]}


@dataclass(frozen=True)
class DatasetJobArgs(JobContract):
    """One dataset job run: the configuration, the zones, and what to refresh."""

    roots: Annotated[LakeRoots, Glue("odp_{}_root", "where each zone's tables live (odp_raw_root, ...)")]
    table_config_table: TableConfigTable  # the configuration, as loaded by the Configuration Manager: the raw tables
    dataset_config_table: DatasetConfigTable  # and the datasets
    datasets: Annotated[
        tuple[str, ...],
        Glue("odp_datasets", "datasets by name; empty = downstream of the changed tables, else all", of="names"),
    ] = ()
    changed_tables: Annotated[
        tuple[str, ...], Glue("odp_changed_tables", "raw table ids a File Processor run changed", of="names")
    ] = ()
    full_refresh: Annotated[bool, Glue("odp_full_refresh", "recompute every selected dataset from its sources")] = False
    catalog_sync: CatalogSync = False
    hudi_profile: str = "glue"  # not a job argument: etl.hudi.options.HudiProfile, local in the sandbox
    history_table: Annotated[
        str, Glue("odp_dataset_history_table", "DynamoDB run history table; empty = not recorded")
    ] = ""
    topic_arn: Annotated[
        str, Glue("odp_topic_arn", "SNS topic notified of every run that wrote or failed; empty = none")
    ] = ""
    canary: Canary = False
    engine: Annotated[
        Literal["any", "glue", "emr_serverless"],
        Glue("odp_engine", "refresh only the selected datasets of this engine (config engine:); any = every one"),
    ] = "any"
    # processing_tracker: one lease per dataset (dataset:<name>) and each refresh's summary; processing_tracker_history:
    # each refresh (odp.tracker.ledger); NO_LEDGER: neither (a local run)
    ledger: Ledger = NO_LEDGER
    lease_seconds: LeaseSeconds = 900
    lease_wait_seconds: Annotated[
        int, Glue("odp_lease_wait_seconds", "how long a dataset waits for another run's lease before it fails")
    ] = 3600
