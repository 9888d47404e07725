"""config/streams.yaml: the Kinesis data streams that carry DynamoDB changes to streamed tables.

A table is streamed when its entry in ``tables/<source>.yaml`` names a stream (``stream: <name>``)
instead of a cadence. The checks that span files (the stream exists, the table is a dynamodb table,
a stream has tables) are :func:`check_streams`; the loader calls it.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Annotated

from pydantic import Field, StringConstraints

from odp.config.models import GlueWorkerType, ResourceName, SourceFormat, TableConfig, _Strict

STREAMS_FILE = "streams.yaml"
# An S3 key prefix below the artifacts bucket: no leading slash, ends with one.
CHECKPOINT_PREFIX = r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*/$"


class StartingPosition(StrEnum):
    """Where a stream's first run starts reading (later runs resume from their checkpoint)."""

    TRIM_HORIZON = "TRIM_HORIZON"
    LATEST = "LATEST"


class Stream(_Strict):
    """One Kinesis data stream (on demand) and the Glue streaming job that reads it."""

    window_seconds: Annotated[int, Field(ge=10, le=3600)] = Field(
        default=100, description="Micro-batch window: the job commits once per window (Glue windowSize)."
    )
    starting_position: StartingPosition = Field(
        default=StartingPosition.TRIM_HORIZON, description="Where the first run starts: TRIM_HORIZON or LATEST."
    )
    worker_type: GlueWorkerType = Field(default=GlueWorkerType.G_1X, description="Glue worker type.")
    number_of_workers: Annotated[int, Field(ge=2, le=299)] = Field(default=2, description="Glue workers.")
    checkpoint_prefix: Annotated[str, StringConstraints(pattern=CHECKPOINT_PREFIX)] | None = Field(
        default=None,
        description="Key prefix of the job's checkpoint (artifacts bucket); default streaming/<stream>/checkpoint/.",
    )
    retention_hours: Annotated[int, Field(ge=24, le=8760)] = Field(
        default=24, description="How long Kinesis keeps records: the longest the job may stop without losing any."
    )
    wire_dynamodb: bool = Field(
        default=True,
        description=(
            "Turn on the Kinesis streaming destination of each streamed DynamoDB table (same account). "
            "false for tables in another account: see etl/streaming/README.md."
        ),
    )

    def checkpoint_key_prefix(self, name: str) -> str:
        """The checkpoint's key prefix, configured or derived from the stream name."""
        return self.checkpoint_prefix or f"streaming/{name}/checkpoint/"


class StreamsFile(_Strict):
    """config/streams.yaml (optional: without it no table is streamed)."""

    streams: dict[ResourceName, Stream] = Field(default_factory=dict)


def stream_issues(
    tables: Iterable[TableConfig], streams: StreamsFile, *, check_unused: bool = True
) -> list[tuple[str, str]]:
    """(table id or stream name, reason) for every rule across tables and streams.

    A streamed table must name a stream of streams.yaml and be a dynamodb table (the records on the
    stream are DynamoDB change records); every stream must carry at least one table (``check_unused``:
    off when table files already have errors, since a rejected table may be the one naming the stream).
    """
    problems: list[tuple[str, str]] = []
    used: set[str] = set()
    for table in tables:
        if table.stream is None:
            continue
        if table.stream not in streams.streams:
            known = ", ".join(sorted(streams.streams)) or f"none: add it to {STREAMS_FILE}"
            problems.append((table.table_id, f"unknown stream {table.stream!r} (known: {known})"))
            continue
        if table.format is not SourceFormat.DYNAMODB:
            problems.append(
                (table.table_id, f"only dynamodb tables can be streamed, this source's format is {table.format.value}")
            )
            continue
        used.add(table.stream)
    problems += [
        (name, "no table names this stream (set `stream: <name>` on a dynamodb table, or remove the stream)")
        for name in sorted(set(streams.streams) - used)
        if check_unused
    ]
    return problems


def streamed_tables(tables: Iterable[TableConfig], stream: str) -> list[TableConfig]:
    """The tables one stream writes, in table id order."""
    return sorted((t for t in tables if t.stream == stream), key=lambda t: t.table_id)
