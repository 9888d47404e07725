"""The Batch Manager's input: the two requests of stepfunctions/file_processor.<engine>.asl.json (states
``PlanBatches`` and ``Summarise``), one pydantic union discriminated on ``action``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from lambdas.batch_manager.manager import BatchManagerError
from odp.contracts.batches import InvalidBatchResultError, MapResults, PlanLocation

NonEmpty = Annotated[str, Field(min_length=1)]


class InvalidRequestError(BatchManagerError):
    """The event is not a plan or summarise request; the message says what is missing."""


class PlanRequest(BaseModel):
    """``{"action": "plan", "cadence", "execution_name"}``: plan the cadence's batches."""

    action: Literal["plan"]
    cadence: NonEmpty
    execution_name: NonEmpty  # the state machine's $$.Execution.Name; batch ids are <execution_name>-<n>


class SummariseRequest(BaseModel):
    """``{"action": "summarise", "cadence", "execution_name", "plan", "results"}``: each planned table's outcome
    after the Map (``plan``: where PlanBatches wrote the plan; ``results``: the Map's ResultWriterDetails, ``null``
    when the Map Run itself failed)."""

    action: Literal["summarise"]
    cadence: NonEmpty
    execution_name: NonEmpty
    plan: PlanLocation
    results: MapResults | None  # None: the Map Run failed (SummariseAfterFailure); every batch counts as failed


Request = PlanRequest | SummariseRequest
_REQUEST = TypeAdapter(Annotated[Request, Field(discriminator="action")])


def parse_request(event: Any) -> Request:
    """The request in a Batch Manager event.

    Raises:
        InvalidRequestError: not an object, an unknown or missing action, a missing or empty field.
        InvalidBatchResultError: ``plan`` or ``results`` is not what the state machine passes.
    """
    try:
        return _REQUEST.validate_python(event)
    except ValidationError as error:
        raise _problem(error.errors()[0]) from error


def _problem(problem: ErrorDetails) -> InvalidRequestError | InvalidBatchResultError:
    loc = problem["loc"]
    if problem["type"] == "union_tag_invalid":
        return InvalidRequestError(f"unknown action {problem['ctx']['tag']!r}: expected 'plan' or 'summarise'")
    if problem["type"] == "union_tag_not_found":
        return InvalidRequestError("event field 'action' must be 'plan' or 'summarise', got None")
    if not loc:
        return InvalidRequestError(f"event must be an object, got {type(problem['input']).__name__}")
    if loc[1] in ("plan", "results"):
        where = ".".join(str(part) for part in loc[1:])
        return InvalidBatchResultError(f"event field {where}: {problem['msg']}")
    value = None if problem["type"] == "missing" else problem["input"]
    return InvalidRequestError(f"event field {loc[1]!r} must be a non-empty string, got {value!r}")
