"""Resource names, spelled in one place.

Physical names are derived from the environment name so that the CDK stacks, the Lambdas, the
Glue job, the Configuration Manager and the sandbox all agree without passing names around by hand.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

PROJECT = "odp"


def resource_prefix(environment: str) -> str:
    """``odp-<environment>``: the prefix of every physical name in an environment."""
    return f"{PROJECT}-{environment}"


@dataclass(frozen=True)
class TrackerTableNames:
    """Physical names of the six DynamoDB tables of ARCHITECTURE.md section 3."""

    file_tracker: str
    file_tracker_history: str
    processing_tracker: str
    processing_tracker_history: str
    batch_config: str
    table_config: str

    @classmethod
    def for_environment(cls, environment: str) -> TrackerTableNames:
        prefix = resource_prefix(environment)
        return cls(
            file_tracker=f"{prefix}-file-tracker",
            file_tracker_history=f"{prefix}-file-tracker-history",
            processing_tracker=f"{prefix}-processing-tracker",
            processing_tracker_history=f"{prefix}-processing-tracker-history",
            batch_config=f"{prefix}-batch-config",
            table_config=f"{prefix}-table-config",
        )

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def file_processor_job_name(environment: str, cadence: str) -> str:
    """The Glue job of one cadence (worker type and count differ per cadence)."""
    return f"{resource_prefix(environment)}-file-processor-{cadence}"


def state_machine_name(environment: str, cadence: str) -> str:
    return f"{resource_prefix(environment)}-file-processor-{cadence}"


TOMBSTONE_FOLDER = "_odp_tombstones"  # beside the tables of a database; target names starting _odp are reserved


def table_base_path(raw_root: str, database: str, target_table: str) -> str:
    """Where a table's Hudi files live: ``<raw_root>/<database>/<table>``."""
    return f"{raw_root.rstrip('/')}/{database}/{target_table}"


def tombstone_path(raw_root: str, database: str, target_table: str) -> str:
    """Where a table's tombstones live: beside the table, in the database's ``_odp_tombstones`` folder."""
    return f"{raw_root.rstrip('/')}/{database}/{TOMBSTONE_FOLDER}/{target_table}"
