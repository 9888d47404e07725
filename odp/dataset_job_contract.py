"""The dataset job's arguments and where each zone's tables live, spelled in one place.

The Glue entry point (etl/jobs/dataset_job.py) parses them, the sandbox builds them, and an
orchestrator passes the per-run ones (the datasets, or the raw tables a File Processor run
changed). Lists travel as JSON, never evaluated.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

from odp.config.datasets import DatasetConfig, Zone
from odp.config.models import TableConfig
from odp.job_contract import JobArgumentError, json_names, plain_arguments


@dataclass(frozen=True)
class LakeRoots:
    """Where each zone's tables live: ``<root>/<database>/<table>`` (s3:// on Glue, file:// locally)."""

    raw: str
    conformed: str
    purpose_built: str

    def dataset_path(self, dataset: DatasetConfig) -> str:
        root = self.conformed if dataset.zone is Zone.CONFORMED else self.purpose_built
        return f"{root.rstrip('/')}/{dataset.database}/{dataset.name}"

    def table_path(self, table: TableConfig) -> str:
        return f"{self.raw.rstrip('/')}/{table.database}/{table.target_table}"


@dataclass(frozen=True)
class DatasetJobArgs:
    """One dataset job run: the configuration, the zones, and what to refresh."""

    roots: LakeRoots
    config_dir: str = "config"  # the config/ tree shipped with the job (datasets/*.yaml + SQL, tables/)
    datasets: tuple[str, ...] = ()  # by name; empty = those downstream of changed_tables, else all
    changed_tables: tuple[str, ...] = ()  # raw table ids a File Processor run changed
    full_refresh: bool = False  # recompute every selected dataset from its sources
    catalog_sync: bool = False
    hudi_profile: str = "glue"  # etl.hudi_options.HudiProfile: glue (production) or local (sandbox)
    history_table: str = ""  # DynamoDB run history table; empty = not recorded
    topic_arn: str = ""  # SNS topic notified of every run that wrote or failed; empty = none

    CONFIG_DIR: ClassVar[str] = "odp_config_dir"
    RAW_ROOT: ClassVar[str] = "odp_raw_root"
    CONFORMED_ROOT: ClassVar[str] = "odp_conformed_root"
    PURPOSE_BUILT_ROOT: ClassVar[str] = "odp_purpose_built_root"
    DATASETS: ClassVar[str] = "odp_datasets"
    CHANGED_TABLES: ClassVar[str] = "odp_changed_tables"
    FULL_REFRESH: ClassVar[str] = "odp_full_refresh"
    CATALOG_SYNC: ClassVar[str] = "odp_catalog_sync"
    HISTORY_TABLE: ClassVar[str] = "odp_dataset_history_table"
    TOPIC_ARN: ClassVar[str] = "odp_topic_arn"

    REQUIRED: ClassVar[tuple[str, ...]] = (CONFIG_DIR, RAW_ROOT, CONFORMED_ROOT, PURPOSE_BUILT_ROOT)
    OPTIONAL: ClassVar[tuple[str, ...]] = (
        DATASETS,
        CHANGED_TABLES,
        FULL_REFRESH,
        CATALOG_SYNC,
        HISTORY_TABLE,
        TOPIC_ARN,
    )

    def to_arguments(self) -> dict[str, str]:
        """Every argument as a Glue run sees it (keys with the leading ``--``)."""
        return {
            f"--{self.CONFIG_DIR}": self.config_dir,
            f"--{self.RAW_ROOT}": self.roots.raw,
            f"--{self.CONFORMED_ROOT}": self.roots.conformed,
            f"--{self.PURPOSE_BUILT_ROOT}": self.roots.purpose_built,
            f"--{self.DATASETS}": json.dumps(list(self.datasets)),
            f"--{self.CHANGED_TABLES}": json.dumps(list(self.changed_tables)),
            f"--{self.FULL_REFRESH}": "true" if self.full_refresh else "false",
            f"--{self.CATALOG_SYNC}": "true" if self.catalog_sync else "false",
            f"--{self.HISTORY_TABLE}": self.history_table,
            f"--{self.TOPIC_ARN}": self.topic_arn,
        }

    @classmethod
    def from_arguments(cls, arguments: dict[str, Any]) -> DatasetJobArgs:
        """Build from resolved arguments (names with or without ``--``).

        Raises:
            JobArgumentError: an argument is missing or malformed; the message names it.
        """
        plain = plain_arguments(arguments)
        missing = [f"--{name}" for name in cls.REQUIRED if not str(plain.get(name) or "").strip()]
        if missing:
            raise JobArgumentError(f"job argument(s) {', '.join(missing)} required")

        def names(name: str) -> tuple[str, ...]:
            return tuple(json_names(plain.get(name) or "[]", name, of="names"))

        def flag(name: str) -> bool:
            raw = str(plain.get(name) or "false").lower()
            if raw not in ("true", "false"):
                raise JobArgumentError(f"job argument --{name} must be true or false, got {raw!r}")
            return raw == "true"

        return cls(
            roots=LakeRoots(plain[cls.RAW_ROOT], plain[cls.CONFORMED_ROOT], plain[cls.PURPOSE_BUILT_ROOT]),
            config_dir=str(plain[cls.CONFIG_DIR]),
            datasets=names(cls.DATASETS),
            changed_tables=names(cls.CHANGED_TABLES),
            full_refresh=flag(cls.FULL_REFRESH),
            catalog_sync=flag(cls.CATALOG_SYNC),
            history_table=str(plain.get(cls.HISTORY_TABLE) or ""),
            topic_arn=str(plain.get(cls.TOPIC_ARN) or ""),
        )
