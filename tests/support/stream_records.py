"""DynamoDB change records in the Kinesis form, and files of Kinesis event records for the local source.

The builders are the streaming demo's (sandbox/streaming_demo.py); here with a fixed base time. The published
Kinesis sample (tests/samples/dynamodb-kinesis/dynamodb-stream.json) decodes with :func:`kinesis_sample`.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from sandbox.streaming_demo import KinesisFolder, change_record, with_precision

__all__ = ["BASE_MS", "StreamFolder", "change", "kinesis_sample", "with_precision"]

BASE_MS = 1_731_924_555_000


def change(event: str, table: str, item: dict[str, Any], *, ms: int, event_id: str | None = None) -> dict[str, Any]:
    """One DynamoDB-for-Kinesis record, ``ms`` milliseconds after BASE_MS."""
    return change_record(event, table, item, created_ms=BASE_MS + ms, event_id=event_id)


class StreamFolder(KinesisFolder):
    """A KinesisFolder written from documents (a new sequence number each) and raw lines."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)

    def write_documents(self, documents: list[dict[str, Any]], *, raw_lines: tuple[str, ...] = ()) -> Path:
        return self.write([self.record(document) for document in documents] + list(raw_lines))


def kinesis_sample(samples_dir: Path) -> list[dict[str, Any]]:
    """The DynamoDB change records inside the published Lambda Kinesis event, decoded (two INSERTs, milliseconds,
    no precision field)."""
    event = json.loads((samples_dir / "dynamodb-kinesis" / "dynamodb-stream.json").read_text())
    return [json.loads(base64.b64decode(record["kinesis"]["data"])) for record in event["Records"]]
