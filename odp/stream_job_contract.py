"""The streaming job's arguments, spelled in one place: the Glue script parses them, the CDK construct sets them.

All are static (one Glue streaming job per configured stream). Lists travel as JSON, never evaluated.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

from odp.job_contract import JobArgumentError, json_names, plain_arguments, required_argument


@dataclass(frozen=True)
class StreamingJobArgs:
    """Everything one streaming job needs."""

    environment: str
    stream: str  # the stream's name in streams.yaml
    stream_arn: str
    table_ids: tuple[str, ...]  # the tables this stream writes (their table_config items give the rest)
    raw_root: str  # s3://raw-bucket: tables at <raw_root>/<database>/<table>
    error_root: str  # s3://bucket/prefix: bad records at <error_root>/<stream>/...
    checkpoint_location: str  # s3://bucket/prefix/ of Spark's checkpoint
    table_config_table: str  # the table_config DynamoDB table
    window_seconds: int = 100
    starting_position: str = "TRIM_HORIZON"
    catalog_sync: bool = True

    ENVIRONMENT: ClassVar[str] = "odp_environment"
    STREAM: ClassVar[str] = "odp_stream"
    STREAM_ARN: ClassVar[str] = "odp_stream_arn"
    TABLE_IDS: ClassVar[str] = "odp_table_ids"
    RAW_ROOT: ClassVar[str] = "odp_raw_root"
    ERROR_ROOT: ClassVar[str] = "odp_error_root"
    CHECKPOINT_LOCATION: ClassVar[str] = "odp_checkpoint_location"
    TABLE_CONFIG_TABLE: ClassVar[str] = "odp_table_config"
    WINDOW_SECONDS: ClassVar[str] = "odp_window_seconds"
    STARTING_POSITION: ClassVar[str] = "odp_starting_position"
    CATALOG_SYNC: ClassVar[str] = "odp_catalog_sync"

    @classmethod
    def argument_names(cls) -> tuple[str, ...]:
        return (
            cls.ENVIRONMENT,
            cls.STREAM,
            cls.STREAM_ARN,
            cls.TABLE_IDS,
            cls.RAW_ROOT,
            cls.ERROR_ROOT,
            cls.CHECKPOINT_LOCATION,
            cls.TABLE_CONFIG_TABLE,
            cls.WINDOW_SECONDS,
            cls.STARTING_POSITION,
            cls.CATALOG_SYNC,
        )

    def to_arguments(self) -> dict[str, str]:
        """The Glue job's default arguments (keys with the leading ``--``)."""
        return {
            f"--{self.ENVIRONMENT}": self.environment,
            f"--{self.STREAM}": self.stream,
            f"--{self.STREAM_ARN}": self.stream_arn,
            f"--{self.TABLE_IDS}": json.dumps(list(self.table_ids)),
            f"--{self.RAW_ROOT}": self.raw_root,
            f"--{self.ERROR_ROOT}": self.error_root,
            f"--{self.CHECKPOINT_LOCATION}": self.checkpoint_location,
            f"--{self.TABLE_CONFIG_TABLE}": self.table_config_table,
            f"--{self.WINDOW_SECONDS}": str(self.window_seconds),
            f"--{self.STARTING_POSITION}": self.starting_position,
            f"--{self.CATALOG_SYNC}": "true" if self.catalog_sync else "false",
        }

    @classmethod
    def from_arguments(cls, arguments: dict[str, Any]) -> StreamingJobArgs:
        """Build from resolved arguments (names with or without ``--``).

        Raises:
            JobArgumentError: an argument is missing or malformed; the message names it.
        """
        plain = plain_arguments(arguments)

        def need(name: str) -> str:
            return required_argument(plain, name).strip()

        table_ids = json_names(need(cls.TABLE_IDS), cls.TABLE_IDS)
        if not table_ids:
            raise JobArgumentError(f"job argument --{cls.TABLE_IDS} must be a non-empty JSON list of table ids")
        window = need(cls.WINDOW_SECONDS)
        if not window.isdigit() or int(window) < 1:
            raise JobArgumentError(
                f"job argument --{cls.WINDOW_SECONDS} must be a whole number of seconds, got {window!r}"
            )
        position = need(cls.STARTING_POSITION)
        if position not in ("TRIM_HORIZON", "LATEST"):
            raise JobArgumentError(f"job argument --{cls.STARTING_POSITION} must be TRIM_HORIZON or LATEST")
        sync = need(cls.CATALOG_SYNC).lower()
        if sync not in ("true", "false"):
            raise JobArgumentError(f"job argument --{cls.CATALOG_SYNC} must be true or false, got {sync!r}")
        return cls(
            environment=need(cls.ENVIRONMENT),
            stream=need(cls.STREAM),
            stream_arn=need(cls.STREAM_ARN),
            table_ids=tuple(dict.fromkeys(table_ids)),
            raw_root=need(cls.RAW_ROOT).rstrip("/"),
            error_root=need(cls.ERROR_ROOT).rstrip("/"),
            checkpoint_location=need(cls.CHECKPOINT_LOCATION),
            table_config_table=need(cls.TABLE_CONFIG_TABLE),
            window_seconds=int(window),
            starting_position=position,
            catalog_sync=sync == "true",
        )


# The job's own CloudWatch metrics, one per micro-batch (the construct alarms on them).
METRICS_NAMESPACE = "ODP/Streaming"
STREAM_DIMENSION = "stream"
BATCH_SECONDS_METRIC = "BatchSeconds"
BAD_RECORDS_METRIC = "BadRecords"
FAILED_TABLES_METRIC = "FailedTables"
RECORDS_METRIC = "Records"
