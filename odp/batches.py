"""The payloads a cadence's state machine carries between the Batch Manager and the Glue runs: one batch
(the Map's item, whose ``arguments`` go to glue:startJobRun unchanged) and its result (the Map's output,
read back by the summary). One definition for the Lambda, the state machine's sandbox run and the tests."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from odp.contracts.file_processor import FileProcessorJobArgs

SUCCEEDED = "SUCCEEDED"
FAILED = "FAILED"
MAX_ERROR_CHARS = 1_000


@dataclass(frozen=True)
class Batch:
    """One Glue run: a batch id and its tables, oldest pending file first."""

    batch_id: str
    table_ids: tuple[str, ...]

    def to_payload(self) -> dict[str, Any]:
        """The Map item: the state machine passes ``arguments`` to glue:startJobRun unchanged."""
        return {
            "batch_id": self.batch_id,
            "table_ids": list(self.table_ids),
            "arguments": FileProcessorJobArgs.run_arguments(self.table_ids, self.batch_id),
        }


class InvalidBatchResultError(ValueError):
    """A Map result without batch_id, table_ids or a SUCCEEDED / FAILED status."""


@dataclass(frozen=True)
class BatchResult:
    batch_id: str
    table_ids: tuple[str, ...]
    status: str
    error: str | None = None


def _error_text(error: Any) -> str | None:
    """The Map's Catch puts ``{"Error": ..., "Cause": ...}`` in the result; keep it short."""
    if error is None:
        return None
    if isinstance(error, Mapping):
        text = ": ".join(str(error[part]) for part in ("Error", "Cause") if error.get(part))
    else:
        text = str(error)
    return text[:MAX_ERROR_CHARS] or None


def parse_batch_results(raw: Any) -> list[BatchResult]:
    """Validate the Map's output.

    Raises:
        InvalidBatchResultError: an entry is not a batch result; the message says which and why.
    """
    if not isinstance(raw, list):
        raise InvalidBatchResultError(f"batch_results must be a list, got {type(raw).__name__}")
    results = []
    for index, entry in enumerate(raw):
        if not isinstance(entry, Mapping):
            raise InvalidBatchResultError(f"batch_results[{index}] is not an object")
        batch_id, table_ids, status = entry.get("batch_id"), entry.get("table_ids"), entry.get("status")
        if not isinstance(batch_id, str) or not batch_id:
            raise InvalidBatchResultError(f"batch_results[{index}] has no batch_id")
        if not isinstance(table_ids, list) or not all(isinstance(t, str) for t in table_ids):
            raise InvalidBatchResultError(f"batch_results[{index}] table_ids must be a list of table ids")
        if status not in (SUCCEEDED, FAILED):
            raise InvalidBatchResultError(
                f"batch_results[{index}] status must be {SUCCEEDED} or {FAILED}, got {status!r}"
            )
        results.append(BatchResult(batch_id, tuple(table_ids), status, _error_text(entry.get("error"))))
    return results
