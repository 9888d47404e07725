"""The streaming job's arguments, each declared once: the Glue script parses them, the CDK construct sets
them as DefaultArguments (all but ``canary`` are static: one Glue streaming job per configured stream)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from odp.contracts.arguments import Glue, NonEmpty
from odp.contracts.base import (
    Canary,
    CatalogSync,
    Environment,
    JobContract,
    Ledger,
    RawRoot,
    TableConfigTable,
    TableIds,
)


@dataclass(frozen=True)
class StreamingJobArgs(JobContract):
    """Everything one streaming job needs."""

    environment: Environment
    stream: Annotated[str, Glue("odp_stream", "the stream's name in streams.yaml")]
    stream_arn: Annotated[str, Glue("odp_stream_arn", "the Kinesis stream's ARN")]
    table_ids: Annotated[TableIds, NonEmpty]  # the tables this stream writes (their table_config items give the rest)
    raw_root: RawRoot
    error_root: Annotated[
        str, Glue("odp_error_root", "s3://bucket/prefix: bad records at <error_root>/<stream>/...", strip_slash=True)
    ]
    checkpoint_location: Annotated[str, Glue("odp_checkpoint_location", "s3://bucket/prefix/ of Spark's checkpoint")]
    table_config_table: TableConfigTable
    ledger: Ledger  # each table's micro-batch commits recorded as its runs (odp.tracker.ledger)
    window_seconds: Annotated[
        int, Glue("odp_window_seconds", "the micro-batch window (forEachBatch windowSize)", unit="seconds")
    ] = 100
    starting_position: Annotated[
        Literal["TRIM_HORIZON", "LATEST"], Glue("odp_starting_position", "where a new checkpoint starts reading")
    ] = "TRIM_HORIZON"
    catalog_sync: CatalogSync = True
    canary: Canary = False
