"""The payloads a cadence's state machine carries between the Batch Manager and the Glue runs: one batch
(the Map's item, whose ``arguments`` go to glue:startJobRun unchanged) and its result (the Map's output,
read back by the summary). One definition for the Lambda, the state machine's sandbox run and the tests."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, TypeAdapter, ValidationError, computed_field
from pydantic_core import ErrorDetails

from odp.contracts.file_processor import FileProcessorJobArgs

SUCCEEDED = "SUCCEEDED"
FAILED = "FAILED"
MAX_ERROR_CHARS = 1_000


class Batch(BaseModel):
    """One Glue run: a batch id and its tables, oldest pending file first."""

    model_config = ConfigDict(frozen=True)

    batch_id: str
    table_ids: tuple[str, ...]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def arguments(self) -> dict[str, str]:
        """The state machine passes these to glue:startJobRun unchanged."""
        return FileProcessorJobArgs.run_arguments(self.table_ids, self.batch_id)

    def to_payload(self) -> dict[str, Any]:
        """The Map item: ``{"batch_id", "table_ids", "arguments"}`` as JSON values."""
        return self.model_dump(mode="json")


class InvalidBatchResultError(ValueError):
    """A Map result without batch_id, table_ids or a SUCCEEDED / FAILED status."""


def _error_text(error: Any) -> str | None:
    """The Map's Catch puts ``{"Error": ..., "Cause": ...}`` in the result; keep it short."""
    if error is None:
        return None
    if isinstance(error, Mapping):
        text = ": ".join(str(error[part]) for part in ("Error", "Cause") if error.get(part))
    else:
        text = str(error)
    return text[:MAX_ERROR_CHARS] or None


class BatchResult(BaseModel):
    """One entry of the Map's output (states ``BatchSucceeded`` / ``BatchFailed`` of the ASL)."""

    model_config = ConfigDict(frozen=True)

    batch_id: str = Field(min_length=1)
    table_ids: tuple[str, ...]
    status: Literal["SUCCEEDED", "FAILED"]
    error: Annotated[str | None, BeforeValidator(_error_text)] = None  # FAILED: the Catch's Error: Cause
    job_run_id: str | None = None  # SUCCEEDED: the Glue job run


BatchResults = TypeAdapter(list[BatchResult])
# What a field of a batch result must be, in the error text.
_MUST = {
    "batch_id": "has no batch_id",
    "table_ids": "table_ids must be a list of table ids",
    "status": f"status must be {SUCCEEDED} or {FAILED}",
}


def batch_results_problem(problem: ErrorDetails, loc: tuple[int | str, ...]) -> InvalidBatchResultError:
    """Word one validation problem of ``batch_results``; ``loc`` is its path inside the list."""
    if not loc:
        return InvalidBatchResultError(f"batch_results must be a list, got {type(problem['input']).__name__}")
    entry = f"batch_results[{loc[0]}]"
    if len(loc) == 1:
        return InvalidBatchResultError(f"{entry} is not an object")
    field = str(loc[1])
    if field == "status":
        value = None if problem["type"] == "missing" else problem["input"]
        return InvalidBatchResultError(f"{entry} {_MUST[field]}, got {value!r}")
    return InvalidBatchResultError(f"{entry} {_MUST.get(field, f'{field}: ' + problem['msg'])}")


def parse_batch_results(raw: Any) -> list[BatchResult]:
    """Validate the Map's output.

    Raises:
        InvalidBatchResultError: an entry is not a batch result; the message says which and why.
    """
    try:
        return BatchResults.validate_python(raw)
    except ValidationError as error:
        first = error.errors()[0]
        raise batch_results_problem(first, first["loc"]) from error
