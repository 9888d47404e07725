"""file_tracker_history: the files a commit applied (or skipped), moved there from file_tracker in transactions."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timedelta
from typing import Any

from boto3.dynamodb.conditions import Attr, Key

from odp.dynamodb import table_items
from odp.faults import fault_point
from odp.tracker.items import TrackedFile, iso, utc_now
from odp.tracker.statuses import FileStatus

Clock = Callable[[], datetime]
# A transaction takes at most 100 actions; moving a file is two (put history, delete tracker).
FILES_PER_TRANSACTION = 50
BATCH_GET_LIMIT = 100
_BACKOFF_SECONDS = 0.05
_MAX_BACKOFF_SECONDS = 2.0


class ProcessedFiles:
    """A table's processed files (file_tracker_history) and the moves between it and file_tracker."""

    def __init__(self, tracker_table: Any, history_table: Any, *, clock: Clock = utc_now) -> None:
        self._tracker = tracker_table
        self._history = history_table
        self._client = tracker_table.meta.client
        self._clock = clock

    def processed_files(self, table_id: str) -> list[TrackedFile]:
        """file_tracker_history items of a table (applied or skipped), in key order."""
        items = table_items(
            self._history, "query", KeyConditionExpression=Key("table_id").eq(table_id), ConsistentRead=True
        )
        return sorted((TrackedFile.from_item(item) for item in items), key=lambda f: (f.key, f.landed_at))

    def applied_content(self, table_id: str) -> dict[str, TrackedFile]:
        """ETag -> the processed file (file_tracker_history) that applied that content to the table first."""
        items = table_items(
            self._history,
            "query",
            KeyConditionExpression=Key("table_id").eq(table_id),
            FilterExpression=Attr("status").eq(FileStatus.PROCESSED.value),
            ConsistentRead=True,
        )
        applied: dict[str, TrackedFile] = {}
        for tracked in sorted((TrackedFile.from_item(item) for item in items), key=lambda f: f.processed_at or ""):
            applied.setdefault(tracked.content_tag, tracked)
        return applied

    def processed_ids(self, table_id: str, file_ids: Iterable[str]) -> set[str]:
        """Which of these files are already in file_tracker_history."""
        wanted = list(dict.fromkeys(file_ids))
        found: set[str] = set()
        for start in range(0, len(wanted), BATCH_GET_LIMIT):
            keys = [{"table_id": table_id, "file_id": file_id} for file_id in wanted[start : start + BATCH_GET_LIMIT]]
            request: dict[str, Any] = {
                self._history.name: {"Keys": keys, "ProjectionExpression": "file_id", "ConsistentRead": True}
            }
            for response in batch_get(self._history.meta.client, request):
                for item in response.get("Responses", {}).get(self._history.name, []):
                    found.add(item["file_id"])
        return found

    def mark_processed(
        self,
        files: Iterable[TrackedFile],
        *,
        commit_instant: str,
        run_id: str,
        retention: timedelta | None = None,
        status: FileStatus = FileStatus.PROCESSED,
        skip_reason: str | None = None,
    ) -> int:
        """Move files to file_tracker_history with the commit that applied them. Idempotent.

        Each file moves in a transaction (put into history, delete from the tracker), so a file is
        never in neither table; a crash between chunks leaves the rest landed, and the next run
        reconciles them from the Hudi commit metadata. ``status`` / ``skip_reason``: a file moved
        without being applied (its content was applied already by ``commit_instant``).
        """
        now = self._clock()
        expires_at = int((now + retention).timestamp()) if retention else None
        # One transaction may not touch an item twice: a file listed twice moves once.
        batch = [
            tracked.processed(
                commit_instant=commit_instant,
                run_id=run_id,
                processed_at=iso(now),
                expires_at=expires_at,
                status=status,
                skip_reason=skip_reason,
            )
            for tracked in {(tracked.table_id, tracked.file_id): tracked for tracked in files}.values()
        ]
        moved = 0
        for start in range(0, len(batch), FILES_PER_TRANSACTION):
            chunk = batch[start : start + FILES_PER_TRANSACTION]
            self._client.transact_write_items(
                TransactItems=[a for done in chunk for a in self._move(done, self._history, self._tracker)]
            )
            moved += len(chunk)
            if moved < len(batch):
                fault_point("tracker.between_moves")  # some files moved to history, the rest still landed
        return moved

    def _move(self, moved: TrackedFile, to_table: Any, from_table: Any) -> list[dict[str, Any]]:
        """The two transaction actions that move a file between the tracker and its history: put, delete."""
        key = {"table_id": moved.table_id, "file_id": moved.file_id}
        return [
            {"Put": {"TableName": to_table.name, "Item": moved.to_item()}},
            {"Delete": {"TableName": from_table.name, "Key": key}},
        ]

    def reland(self, files: Iterable[TrackedFile], *, replay: bool) -> int:
        """Move processed files (file_tracker_history) back to file_tracker as landed, for a replay.

        Each file moves in one transaction (put landed, delete from history): it is never in neither
        table. ``replay`` marks them to be applied even where a historical table refuses known content.
        Returns how many moved.
        """
        moved = 0
        for tracked in files:
            landed = tracked.relanded(replay=replay)
            self._client.transact_write_items(TransactItems=self._move(landed, self._tracker, self._history))
            moved += 1
        return moved


def batch_get(client: Any, request: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """BatchGetItem until no key is left unprocessed, backing off between retries (throttling).

    ``client`` is a Table resource's client: keys and items are plain Python values both ways.
    """
    attempt = 0
    while request:
        if attempt:
            time.sleep(min(_BACKOFF_SECONDS * 2 ** (attempt - 1), _MAX_BACKOFF_SECONDS))
        response = client.batch_get_item(RequestItems=request)
        yield response
        request = response.get("UnprocessedKeys") or {}
        attempt += 1
