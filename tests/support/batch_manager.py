"""Landed file items and bulk puts for the Batch Manager tests."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from odp.tracker import FileKind, TrackedFile, make_file_id


def pending_file(table_id: str, name: str, landed_at: str, size: int = 100) -> dict[str, Any]:
    """A landed file's item, as FileTracker.register writes it."""
    key = "/".join(table_id.split(".")) + "/" + name
    return TrackedFile(
        table_id=table_id,
        file_id=make_file_id("odp-test-staging", key, "etag"),
        bucket="odp-test-staging",
        key=key,
        size=size,
        etag="etag",
        landed_at=landed_at,
        file_kind=FileKind.CDC,
    ).to_item()


def put_all(table: Any, items: Iterable[dict[str, Any]]) -> None:
    with table.batch_writer() as writer:
        for item in items:
            writer.put_item(Item=item)
