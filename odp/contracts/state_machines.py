"""The state machine definitions' ``${placeholders}``, each declared once, and how a definition is rendered.

``stepfunctions/<name>.asl.json`` is loaded by CDK (DefinitionBody.from_file with definition
substitutions) and by the sandbox (moto executes the rendered file). Both fill its placeholders from one
substitutions dataclass: each field is one placeholder, named in CamelCase (``max_concurrency`` ->
``${MaxConcurrency}``). ``${MaxConcurrency}`` stands unquoted where a number goes, so the file is JSON
once rendered.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypedDict, get_origin

from odp.contracts.datasets import DatasetJobArgs
from odp.contracts.file_processor import FileProcessorJobArgs

STEPFUNCTIONS_DIR = Path(__file__).resolve().parents[2] / "stepfunctions"
_PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9_]+)\}")


class DefinitionError(ValueError):
    """A placeholder is missing a value, a value has no placeholder, or the result is not JSON."""


def placeholders_in(text: str) -> set[str]:
    return set(_PLACEHOLDER.findall(text))


def placeholder_name(field: str) -> str:
    """``batch_manager_function_arn`` -> ``BatchManagerFunctionArn``."""
    return "".join(part.capitalize() for part in field.split("_"))


class Substitutions:
    """Base of a frozen dataclass whose fields are the placeholders of the ``DEFINITION`` file."""

    DEFINITION: ClassVar[Path]

    @classmethod
    def placeholders(cls) -> tuple[str, ...]:
        return tuple(placeholder_name(field.name) for field in dataclasses.fields(cls))

    def values(self) -> dict[str, str]:
        """Placeholder -> value, checked against the placeholders the definition file holds.

        Raises:
            DefinitionError: the file's placeholders are not exactly this class's fields.
        """
        values = {placeholder_name(f.name): str(getattr(self, f.name)) for f in dataclasses.fields(self)}
        _check(values, placeholders_in(self.DEFINITION.read_text(encoding="utf-8")))
        return values

    def render(self) -> dict[str, Any]:
        """The definition with every placeholder filled, parsed.

        Raises:
            DefinitionError: see :func:`render_definition`.
        """
        return render_definition(self.values(), self.DEFINITION.read_text(encoding="utf-8"))


GLUE_RUN_JOB = "arn:aws:states:::glue:startJobRun.sync"
EMR_SERVERLESS_RUN_JOB = "arn:aws:states:::emr-serverless:startJobRun.sync"
GLUE_RETRY_ERRORS = (
    "Glue.ConcurrentRunsExceededException",
    "Glue.ThrottlingException",
    "Glue.InternalServiceException",
    "Glue.OperationTimeoutException",
)
EMR_SERVERLESS_RETRY_ERRORS = ("EMRServerless.ThrottlingException", "EMRServerless.InternalServerException")
# etl/jobs/emr_serverless.py's first argument: which job to run.
FILE_PROCESSOR_JOB = "file_processor"
_INTRINSIC_SPECIAL = re.compile(r"([\\'{}])")
_UNRESOLVED_MARK = "${Token["  # a CDK token inside a string


@dataclass(frozen=True)
class RunJobTask:
    """The ``RunFileProcessor`` task's engine-specific parts (``${RunJob...}`` of the File Processor definition).

    The Map item (a :class:`odp.contracts.batches.Batch`) is the task's input either way; the task's result is
    ``{"job_run_id": ...}`` for ``BatchSucceeded``."""

    resource: str
    parameters: Mapping[str, Any]
    result_selector: Mapping[str, str]
    retry_errors: Sequence[str]

    def fields(self) -> dict[str, str]:
        """The four substitution fields of :class:`FileProcessorSubstitutions`, as JSON text."""
        return {
            "run_job_resource": self.resource,
            "run_job_parameters": json.dumps(self.parameters),
            "run_job_result_selector": json.dumps(self.result_selector),
            "run_job_retry_errors": json.dumps(list(self.retry_errors)),
        }


def glue_run_job(job_name: str) -> RunJobTask:
    """glue:startJobRun.sync of the cadence's job; the Map item's ``arguments`` are the run's Arguments."""
    return RunJobTask(
        resource=GLUE_RUN_JOB,
        parameters={"JobName": job_name, "Arguments.$": "$.arguments"},
        result_selector={"job_run_id.$": "$.Id", "state.$": "$.JobRunState"},
        retry_errors=GLUE_RETRY_ERRORS,
    )


def intrinsic_literal(value: str) -> str:
    """A string literal of an intrinsic function (``'...'`` with ``' { } \\`` escaped).

    A value holding a CDK token (a bucket name, a table name) is left unescaped: what it resolves to has none of
    those characters, and escaping would break the token's own braces."""
    if _UNRESOLVED_MARK in value:
        return f"'{value}'"
    return "'" + _INTRINSIC_SPECIAL.sub(r"\\\1", value) + "'"


def intrinsic_array(job: str, static_arguments: Mapping[str, str], per_run: Mapping[str, str]) -> str:
    """Pure: ``States.Array(...)`` of ``etl/jobs/emr_serverless.py``'s arguments: the job, the static contract
    arguments (option -> text) and the per-run ones (option -> an intrinsic expression of the state's input)."""
    parts = [intrinsic_literal(job)]
    for name, value in static_arguments.items():
        parts += [intrinsic_literal(name), intrinsic_literal(value)]
    for name, expression in per_run.items():
        parts += [intrinsic_literal(name), expression]
    return f"States.Array({', '.join(parts)})"


def entry_point_arguments(job: str, static_arguments: Mapping[str, str]) -> str:
    """Pure: the ``States.Array(...)`` of ``etl/jobs/emr_serverless.py``'s arguments: the job, the contract's static
    arguments (what Glue holds as DefaultArguments) and each per-run argument from the Map item's field of the same
    name (a tuple as JSON text, as the contract renders it)."""
    per_run: dict[str, str] = {}
    for argument in FileProcessorJobArgs.arguments():
        if argument.per_run:
            path = f"$.{argument.field}"
            per_run[f"--{argument.name}"] = (
                f"States.JsonToString({path})" if get_origin(argument.kind) is tuple else path
            )
    return intrinsic_array(job, static_arguments, per_run)


class EmrJobRunSettings(TypedDict):
    """What every job run of the EMR Serverless application names (infrastructure/emr_serverless.py)."""

    application_id: str
    execution_role_arn: str
    entry_point: str
    spark_submit_parameters: str
    timeout_minutes: int


def emr_job_parameters(settings: EmrJobRunSettings, name: Mapping[str, str], arguments: str) -> dict[str, Any]:
    """Pure: StartJobRun's parameters of ``etl/jobs/emr_serverless.py``: ``name`` (``Name`` or ``Name.$``) and its
    ``EntryPointArguments.$`` (an intrinsic ``States.Array``)."""
    return {
        "ApplicationId": settings["application_id"],
        "ExecutionRoleArn": settings["execution_role_arn"],
        **name,
        "ExecutionTimeoutMinutes": settings["timeout_minutes"],
        "JobDriver": {
            "SparkSubmit": {
                "EntryPoint": settings["entry_point"],
                "EntryPointArguments.$": arguments,
                "SparkSubmitParameters": settings["spark_submit_parameters"],
            }
        },
    }


def emr_serverless_run_job(
    *,
    application_id: str,
    execution_role_arn: str,
    entry_point: str,
    static_arguments: Mapping[str, str],
    spark_submit_parameters: str,
    timeout_minutes: int,
) -> RunJobTask:
    """emr-serverless:startJobRun.sync of ``etl/jobs/emr_serverless.py file_processor`` with the same contract."""
    settings = EmrJobRunSettings(
        application_id=application_id,
        execution_role_arn=execution_role_arn,
        entry_point=entry_point,
        spark_submit_parameters=spark_submit_parameters,
        timeout_minutes=timeout_minutes,
    )
    return RunJobTask(
        resource=EMR_SERVERLESS_RUN_JOB,
        parameters=emr_job_parameters(
            settings, {"Name.$": "$.batch_id"}, entry_point_arguments(FILE_PROCESSOR_JOB, static_arguments)
        ),
        result_selector={"job_run_id.$": "$.JobRunId"},
        retry_errors=EMR_SERVERLESS_RETRY_ERRORS,
    )


@dataclass(frozen=True)
class FileProcessorSubstitutions(Substitutions):
    """``stepfunctions/file_processor.asl.json``, one state machine per cadence; the ``run_job_*`` fields come from
    :meth:`RunJobTask.fields` (:func:`glue_run_job` or :func:`emr_serverless_run_job`)."""

    DEFINITION: ClassVar[Path] = STEPFUNCTIONS_DIR / "file_processor.asl.json"

    alerts_topic_arn: str
    batch_manager_function_arn: str
    cadence: str
    max_concurrency: int
    run_job_resource: str
    run_job_parameters: str
    run_job_result_selector: str
    run_job_retry_errors: str


DATASET_JOB = "dataset_job"
# The datasets state machine's state after the Glue run when no dataset runs on EMR Serverless.
NO_DATASETS_ON_EMR = json.dumps(
    {"Type": "Pass", "Comment": "No dataset runs on EMR Serverless (config/datasets/*.yaml engine:).", "Next": "Done"}
)


def datasets_emr_state(settings: EmrJobRunSettings, static_arguments: Mapping[str, str]) -> str:
    """Pure: the ``RefreshDatasetsOnEmr`` state (JSON text) of the datasets state machine:
    emr-serverless:startJobRun.sync of ``etl/jobs/emr_serverless.py dataset_job`` with the dataset job's static
    contract arguments, the changed tables and ``--odp_engine emr_serverless`` (only the datasets on EMR
    Serverless; the Glue run refreshed the others)."""

    per_run = {
        DatasetJobArgs.option("engine"): intrinsic_literal("emr_serverless"),
        DatasetJobArgs.option("changed_tables"): "States.JsonToString($.table_ids)",
    }
    state = {
        "Type": "Task",
        "Comment": (
            "The datasets with engine emr_serverless, after the Glue run; one refresh of a dataset at a time is the "
            "dataset lease's (etl/datasets/lease.py), EMR Serverless has no MaxConcurrentRuns."
        ),
        "Resource": EMR_SERVERLESS_RUN_JOB,
        "Parameters": emr_job_parameters(
            settings,
            {"Name.$": "$$.Execution.Name"},
            intrinsic_array(DATASET_JOB, static_arguments, per_run),
        ),
        "ResultSelector": {"job_run_id.$": "$.JobRunId"},
        "ResultPath": "$.emr_result",
        "Retry": [
            {
                "ErrorEquals": list(EMR_SERVERLESS_RETRY_ERRORS),
                "IntervalSeconds": 60,
                "MaxAttempts": 10,
                "BackoffRate": 1.5,
                "JitterStrategy": "FULL",
            }
        ],
        "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "NotifyFailure"}],
        "Next": "Done",
    }
    return json.dumps(state)


@dataclass(frozen=True)
class DatasetsSubstitutions(Substitutions):
    """``stepfunctions/datasets.asl.json``, the dataset job after each File Processor execution: the Glue run, then
    ``refresh_on_emr`` (:func:`datasets_emr_state`, or :data:`NO_DATASETS_ON_EMR`)."""

    DEFINITION: ClassVar[Path] = STEPFUNCTIONS_DIR / "datasets.asl.json"

    dataset_job_name: str
    alerts_topic_arn: str
    refresh_on_emr: str = NO_DATASETS_ON_EMR


DEFINITION_FILE = FileProcessorSubstitutions.DEFINITION
PLACEHOLDERS = FileProcessorSubstitutions.placeholders()


def _check(values: dict[str, Any], found: set[str]) -> None:
    missing = found - set(values)
    unused = set(values) - found
    if missing or unused:
        raise DefinitionError(
            f"placeholders without values: {sorted(missing)}; values without placeholders: {sorted(unused)}"
        )


def render_definition(values: dict[str, Any], text: str | None = None) -> dict[str, Any]:
    """Fill every placeholder of ``text`` (default: the File Processor's definition) and parse the result.

    Raises:
        DefinitionError: a placeholder without a value, a value without a placeholder, or invalid JSON.
    """
    source = DEFINITION_FILE.read_text(encoding="utf-8") if text is None else text
    _check(values, placeholders_in(source))
    rendered = _PLACEHOLDER.sub(lambda match: str(values[match.group(1)]), source)
    try:
        return json.loads(rendered)
    except json.JSONDecodeError as error:
        raise DefinitionError(f"the rendered definition is not JSON: {error}") from error


_ARRAY_ITEM = re.compile(r"\s*(?:'((?:\\.|[^'\\])*)'|States\.JsonToString\(\$\.(\w+)\)|\$\.(\w+))\s*(?:,|$)")


def evaluate_entry_point_arguments(expression: str, item: Mapping[str, Any]) -> list[str]:
    """Pure: what Step Functions makes of :func:`entry_point_arguments`' ``States.Array(...)`` for a Map item
    (the post-deploy canary starts the EMR Serverless run exactly as the state machine does, with its own item).

    Raises:
        DefinitionError: the expression is not the ``States.Array`` of literals and ``$.field`` paths it writes,
            or the item has no such field.
    """
    if not (expression.startswith("States.Array(") and expression.endswith(")")):
        raise DefinitionError(f"not a States.Array(...) expression: {expression[:60]!r}")
    body = expression.removeprefix("States.Array(").removesuffix(")")
    values: list[str] = []
    position = 0
    while position < len(body):
        match = _ARRAY_ITEM.match(body, position)
        if match is None or match.end() == position:
            raise DefinitionError(f"cannot read States.Array item at {body[position : position + 40]!r}")
        literal, as_json, path = match.groups()
        if literal is not None:
            values.append(re.sub(r"\\(.)", r"\1", literal))
        else:
            field = as_json or path
            if field not in item:
                raise DefinitionError(f"the Map item has no field {field!r} (States.Array reads $.{field})")
            values.append(json.dumps(item[field], separators=(",", ":")) if as_json else str(item[field]))
        position = match.end()
    return values


def emr_serverless_start_request(parameters: Mapping[str, Any], item: Mapping[str, Any]) -> dict[str, Any]:
    """Pure: boto3 ``emr-serverless.start_job_run`` keyword arguments equal to what the state machine's
    :func:`emr_serverless_run_job` task starts for a Map item (``Name.$``: the item's batch id).

    Raises:
        DefinitionError: see :func:`evaluate_entry_point_arguments`.
    """
    submit = parameters["JobDriver"]["SparkSubmit"]
    return {
        "applicationId": parameters["ApplicationId"],
        "executionRoleArn": parameters["ExecutionRoleArn"],
        "name": str(item["batch_id"]),
        "executionTimeoutMinutes": int(parameters["ExecutionTimeoutMinutes"]),
        "jobDriver": {
            "sparkSubmit": {
                "entryPoint": submit["EntryPoint"],
                "entryPointArguments": evaluate_entry_point_arguments(submit["EntryPointArguments.$"], item),
                "sparkSubmitParameters": submit["SparkSubmitParameters"],
            }
        },
    }
