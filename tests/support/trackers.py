"""Tracked files as the trackers store them."""

from __future__ import annotations

from odp.tracker import (
    FileKind,
    FileStatus,
    TrackedFile,
    make_file_id,
)


def tracked(
    key: str,
    *,
    etag: str = "etag-1",
    size: int = 100,
    landed_at: str = "2024-05-01T11:00:00.000Z",
    status: FileStatus = FileStatus.LANDED,
    table_id: str = "dms.public.trips",
) -> TrackedFile:
    return TrackedFile(
        table_id=table_id,
        file_id=make_file_id("staging", key, etag),
        bucket="staging",
        key=key,
        size=size,
        etag=etag,
        landed_at=landed_at,
        file_kind=FileKind.CDC,
        status=status,
    )
