"""The payloads a cadence's state machine carries between the Batch Manager and the Glue runs: one batch
(the Map's item, whose ``arguments`` go to glue:startJobRun unchanged) and its result (a child execution's output,
read back by the summary), and where they are: the plan in S3 (:class:`PlanLocation`), the Map's results
(:class:`MapResults`, the ResultWriter's manifest and files). One definition for the Lambda, the state machine's
sandbox run and the tests."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, TypeAdapter, ValidationError, computed_field
from pydantic_core import ErrorDetails

from odp.config.models import job_dpus
from odp.contracts.file_processor import FileProcessorJobArgs

SUCCEEDED = "SUCCEEDED"
FAILED = "FAILED"
MAX_ERROR_CHARS = 1_000


class Batch(BaseModel):
    """One job run: a batch id and its tables, oldest pending file first, the run's size and why it is so
    (odp/planning.py). The state machine passes ``worker_type`` and ``number_of_workers`` to glue:startJobRun (an
    EMR Serverless run gets ``number_of_workers - 1`` executors at most: Glue counts the driver's worker)."""

    model_config = ConfigDict(frozen=True)

    batch_id: str
    table_ids: tuple[str, ...]
    worker_type: str = "G.1X"
    number_of_workers: Annotated[int, Field(ge=2)] = 2
    estimated_seconds: int = 0  # the planner's estimate, start-up included
    reason: str = ""  # why the run holds these tables with these workers

    @computed_field  # type: ignore[prop-decorator]
    @property
    def arguments(self) -> dict[str, str]:
        """The state machine passes these to glue:startJobRun unchanged; Glue merges them over the job's
        DefaultArguments. The run's own DPUs go with them: its workers may not be the job's, and each table's share
        of the run's DPU-seconds is counted from them (etl/file_processor/cost.py)."""
        dpus = {FileProcessorJobArgs.option("job_dpus"): str(job_dpus(self.worker_type, self.number_of_workers))}
        return {**FileProcessorJobArgs.run_arguments(self.table_ids, self.batch_id), **dpus}

    def to_payload(self) -> dict[str, Any]:
        """The Map item: every field and ``arguments``, as JSON values."""
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


# --- a plan of any size: in S3, read by the Distributed Map, its results written back to S3 --------------------------

PLANS_PREFIX = "plans"  # in the artifacts bucket; expired by its lifecycle rule (infrastructure/foundation/storage.py)
PLAN_RETENTION_DAYS = 14  # a plan, its Map's results and its summary: kept for two weeks of investigation
# What may stay in a state: Step Functions caps a state's input and output at 256 KiB (262,144 bytes). The
# Summarise answer lists failed tables first and is cut at this size; the whole summary is in S3 beside the plan.
MAX_SUMMARY_BYTES = 50_000


class PlanLocation(BaseModel):
    """Where one execution's plan is (``key``: a JSON array of :class:`Batch` payloads, the Distributed Map's
    ItemReader) and where the Batch Manager writes the whole summary (``summary_key``). The Map writes its results
    under ``plans/<cadence>/results/<map run id>/`` (its ResultWriter's fixed prefix: :func:`results_prefix`)."""

    model_config = ConfigDict(frozen=True)

    bucket: str = Field(min_length=3)
    key: str = Field(min_length=1)
    summary_key: str = Field(min_length=1)

    @classmethod
    def for_execution(cls, bucket: str, cadence: str, execution_name: str) -> PlanLocation:
        """``plans/<cadence>/<execution name>/``: batches.json, summary.json."""
        folder = f"{PLANS_PREFIX}/{cadence}/{execution_name}"
        return cls(bucket=bucket, key=f"{folder}/batches.json", summary_key=f"{folder}/summary.json")


def results_prefix(cadence: str) -> str:
    """Where the cadence's Map writes its results (the ResultWriter's ``Prefix``: ``plans/${Cadence}/results``)."""
    return f"{PLANS_PREFIX}/{cadence}/results"


class PlanAnswer(BaseModel):
    """The Batch Manager's answer to ``plan`` (state ``PlanBatches``): where the plan is and how large it is; never
    the plan itself."""

    model_config = ConfigDict(frozen=True)

    location: PlanLocation
    batches: int = Field(ge=0)
    tables: int = Field(ge=0)
    pending: dict[str, int]


class MapResults(BaseModel):
    """The Distributed Map's ResultWriter answer (``ResultWriterDetails``): the manifest of its result files."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    bucket: str = Field(alias="Bucket", min_length=3)
    key: str = Field(alias="Key", min_length=1)


class ResultFile(BaseModel):
    """One result file the manifest lists."""

    key: str = Field(alias="Key")
    size: int = Field(alias="Size", default=0)


class ResultManifest(BaseModel):
    """``manifest.json`` of a Map Run's ResultWriter (Step Functions' format): the files of child executions that
    succeeded, failed (or were aborted) and never ran."""

    destination_bucket: str = Field(alias="DestinationBucket")
    map_run_arn: str = Field(alias="MapRunArn")
    result_files: dict[Literal["SUCCEEDED", "FAILED", "PENDING"], list[ResultFile]] = Field(alias="ResultFiles")


class ChildExecution(BaseModel):
    """One child execution in a result file: its input (the batch) and, when it succeeded, its output (the batch
    result); a failed one has its error and cause instead."""

    input: str | None = Field(alias="Input", default=None)
    output: str | None = Field(alias="Output", default=None)
    status: str = Field(alias="Status")
    error: str | None = Field(alias="Error", default=None)
    cause: str | None = Field(alias="Cause", default=None)

    def batch_result(self) -> BatchResult:
        """The batch result this child execution stands for.

        Raises:
            InvalidBatchResultError: a succeeded child without the output of ``BatchSucceeded`` / ``BatchFailed``,
                or a failed one without its batch as input.
        """
        if self.status == SUCCEEDED and self.output:
            return parse_batch_results([json.loads(self.output)])[0]
        if not self.input:
            raise InvalidBatchResultError(f"a {self.status} child execution of the Map has no input")
        batch = Batch.model_validate(json.loads(self.input))
        why = ": ".join(part for part in (self.error, self.cause) if part) or f"its child execution {self.status}"
        return BatchResult(batch_id=batch.batch_id, table_ids=batch.table_ids, status=FAILED, error=why)


def planned_results(batches: list[Batch], results: list[BatchResult]) -> list[BatchResult]:
    """Every planned batch's result, in plan order: a batch the Map's results do not hold counts as FAILED (never
    passed over in silence); a result for a batch that was not planned is refused.

    Raises:
        InvalidBatchResultError: a result names a batch the plan does not hold.
    """
    by_id = {result.batch_id: result for result in results}
    planned = {batch.batch_id for batch in batches}
    strangers = sorted(set(by_id) - planned)
    if strangers:
        raise InvalidBatchResultError(f"the Map's results name batches the plan does not hold: {', '.join(strangers)}")
    missing = "the Map's results hold no result for this batch"
    return [
        by_id.get(batch.batch_id)
        or BatchResult(batch_id=batch.batch_id, table_ids=batch.table_ids, status=FAILED, error=missing)
        for batch in batches
    ]
