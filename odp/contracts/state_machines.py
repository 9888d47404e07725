"""The state machine definitions of every job kind on every engine, and how each is filled and rendered.

``stepfunctions/<stem>.<engine>.asl.json`` (odp.contracts.job_kinds: ``JobKind.definition``) is plain ASL: each
``${Placeholder}`` is one scalar, a string inside a JSON string or a number standing alone (``${MaxConcurrency}``),
never a piece of JSON. CDK loads the file (DefinitionBody.from_file with definition substitutions) and the sandbox
executes the same file on moto; both fill it from one substitutions dataclass, each field one placeholder in
CamelCase (``max_concurrency`` -> ``${MaxConcurrency}``). A string value is JSON-escaped before it goes in.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from odp.config.models import EngineName
from odp.contracts.job_kinds import DATASET_JOB, FILE_PROCESSOR, STEPFUNCTIONS_DIR, JobKind

_PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9_]+)\}")

GLUE_RUN_JOB = "arn:aws:states:::glue:startJobRun.sync"
EMR_SERVERLESS_RUN_JOB = "arn:aws:states:::emr-serverless:startJobRun.sync"
# etl/jobs/emr_serverless.py's first argument: which job to run
FILE_PROCESSOR_JOB = FILE_PROCESSOR.name
DATASET_JOB_NAME = DATASET_JOB.name
_INTRINSIC_SPECIAL = re.compile(r"([\\'{}])")
_UNRESOLVED_MARK = "${Token["  # a CDK token inside a string


class DefinitionError(ValueError):
    """A placeholder is missing a value, a value has no placeholder, a number is not one, or the result is not JSON."""


def placeholders_in(text: str) -> set[str]:
    return set(_PLACEHOLDER.findall(text))


def placeholder_name(field: str) -> str:
    """``batch_manager_function_arn`` -> ``BatchManagerFunctionArn``."""
    return "".join(part.capitalize() for part in field.split("_"))


def quoted_placeholders(text: str) -> dict[str, bool]:
    """Pure: each placeholder of a JSON text, and whether it stands inside a JSON string (else it stands alone, where
    a number goes).

    Raises:
        DefinitionError: a placeholder stands both inside and outside strings.
    """
    found: dict[str, bool] = {}
    in_string, escaped, position = False, False, 0
    while position < len(text):
        char = text[position]
        match = _PLACEHOLDER.match(text, position) if char == "$" else None
        if match is not None:
            name = match.group(1)
            if found.setdefault(name, in_string) != in_string:
                raise DefinitionError(f"${{{name}}} stands both inside and outside a JSON string")
            position = match.end()
            continue
        if in_string and escaped:
            escaped = False
        elif in_string and char == "\\":
            escaped = True
        elif char == '"':
            in_string = not in_string
        position += 1
    return found


def fill(text: str, values: Mapping[str, Any]) -> str:
    """Pure: ``text`` with each placeholder replaced by its value: a string inside a JSON string JSON-escaped, a
    value standing alone as the number it is.

    Raises:
        DefinitionError: a placeholder without a value, a value without a placeholder, or a value standing alone that
            is not a number.
    """
    contexts = quoted_placeholders(text)
    _check(dict(values), set(contexts))
    rendered: dict[str, str] = {}
    for name, quoted in contexts.items():
        value = values[name]
        if quoted:
            rendered[name] = json.dumps(str(value))[1:-1]
        elif isinstance(value, int | float) and not isinstance(value, bool):
            rendered[name] = str(value)
        else:
            raise DefinitionError(f"${{{name}}} stands where a number goes: {value!r} is not a number")
    return _PLACEHOLDER.sub(lambda match: rendered[match.group(1)], text)


def render_definition(values: Mapping[str, Any], text: str) -> dict[str, Any]:
    """Fill every placeholder of ``text`` (:func:`fill`) and parse the result.

    Raises:
        DefinitionError: see :func:`fill`, or the result is not JSON.
    """
    try:
        return json.loads(fill(text, values))
    except json.JSONDecodeError as error:
        raise DefinitionError(f"the rendered definition is not JSON: {error}") from error


def render_substituted(substitutions: Mapping[str, Any], text: str) -> dict[str, Any]:
    """The definition as Step Functions renders a deployed one: each ``${Placeholder}`` replaced by its definition
    substitution's text as it stands (what :meth:`Substitutions.values` gave CloudFormation, escaping included).

    Raises:
        DefinitionError: a placeholder without a value, a value without a placeholder, or the result is not JSON.
    """
    _check(dict(substitutions), placeholders_in(text))
    try:
        return json.loads(_PLACEHOLDER.sub(lambda match: str(substitutions[match.group(1)]), text))
    except json.JSONDecodeError as error:
        raise DefinitionError(f"the rendered definition is not JSON: {error}") from error


def _check(values: dict[str, Any], found: set[str]) -> None:
    missing = found - set(values)
    unused = set(values) - found
    if missing or unused:
        raise DefinitionError(
            f"placeholders without values: {sorted(missing)}; values without placeholders: {sorted(unused)}"
        )


class Substitutions:
    """Base of a frozen dataclass whose fields are the placeholders of its ``DEFINITION`` file."""

    DEFINITION: ClassVar[Path]

    @classmethod
    def placeholders(cls) -> tuple[str, ...]:
        return tuple(placeholder_name(field.name) for field in dataclasses.fields(cls))

    def raw_values(self) -> dict[str, Any]:
        """Placeholder -> value as given (a number stays a number)."""
        return {placeholder_name(f.name): getattr(self, f.name) for f in dataclasses.fields(self)}

    def values(self) -> dict[str, str]:
        """Placeholder -> the text that replaces it (CDK's definition substitutions): JSON-escaped in a string.

        Raises:
            DefinitionError: the file's placeholders are not exactly this class's fields, or a number is not one.
        """
        text = self.DEFINITION.read_text(encoding="utf-8")
        raw = self.raw_values()
        fill(text, raw)  # refuses a placeholder without a value, a value without one, a number that is none
        contexts = quoted_placeholders(text)
        return {name: json.dumps(str(value))[1:-1] if contexts[name] else str(value) for name, value in raw.items()}

    def render(self) -> dict[str, Any]:
        """The definition with every placeholder filled, parsed.

        Raises:
            DefinitionError: see :func:`render_definition`.
        """
        return render_definition(self.raw_values(), self.DEFINITION.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class EmrServerlessRun:
    """What a run on the EMR Serverless application names, as the definitions of that engine hold it."""

    application_id: str
    execution_role_arn: str
    entry_point: str
    entry_point_arguments: str  # States.Array(...) of etl/jobs/emr_serverless.py's arguments
    spark_submit_parameters: str
    execution_timeout_minutes: int

    def fields(self) -> dict[str, Any]:
        """This run's fields by name (to spread into a definition's substitutions)."""
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(EmrServerlessRun)}


@dataclass(frozen=True)
class FileProcessorOnGlue(Substitutions):
    """``stepfunctions/file_processor.glue.asl.json``: one state machine per cadence on Glue."""

    DEFINITION: ClassVar[Path] = FILE_PROCESSOR.definition(EngineName.GLUE)

    alerts_topic_arn: str
    batch_manager_function_arn: str
    cadence: str
    max_concurrency: int
    job_name: str
    plan_bucket: str  # the artifacts bucket: the plans (ItemReader) and the Map's results (ResultWriter)


@dataclass(frozen=True)
class FileProcessorWarmOnGlue(Substitutions):
    """``stepfunctions/file_processor_warm.glue.asl.json``: a warm cadence's state machine (``mode: warm``): each tick
    starts the warm run unless one is running (docs/decisions/032)."""

    DEFINITION: ClassVar[Path] = STEPFUNCTIONS_DIR / "file_processor_warm.glue.asl.json"

    alerts_topic_arn: str
    cadence: str
    job_name: str


@dataclass(frozen=True, kw_only=True)
class FileProcessorOnEmrServerless(EmrServerlessRun, Substitutions):
    """``stepfunctions/file_processor.emr_serverless.asl.json``: a cadence on the EMR Serverless application (its
    :class:`EmrServerlessRun` fields and the cadence's)."""

    DEFINITION: ClassVar[Path] = FILE_PROCESSOR.definition(EngineName.EMR_SERVERLESS)

    alerts_topic_arn: str
    batch_manager_function_arn: str
    cadence: str
    max_concurrency: int
    plan_bucket: str  # the artifacts bucket: the plans (ItemReader) and the Map's results (ResultWriter)


@dataclass(frozen=True)
class DatasetsOnGlue(Substitutions):
    """``stepfunctions/datasets.glue.asl.json``: the dataset job after each File Processor execution."""

    DEFINITION: ClassVar[Path] = DATASET_JOB.definition(EngineName.GLUE)

    alerts_topic_arn: str
    job_name: str


@dataclass(frozen=True, kw_only=True)
class DatasetsOnEmrServerless(EmrServerlessRun, Substitutions):
    """``stepfunctions/datasets.emr_serverless.asl.json``: the Glue run, then the datasets on EMR Serverless (its
    :class:`EmrServerlessRun` fields, the alerts topic and the Glue job)."""

    DEFINITION: ClassVar[Path] = DATASET_JOB.definition(EngineName.EMR_SERVERLESS)

    alerts_topic_arn: str
    job_name: str


DEFINITIONS: dict[tuple[str, EngineName], type[Substitutions]] = {
    (FILE_PROCESSOR.name, EngineName.GLUE): FileProcessorOnGlue,
    (FILE_PROCESSOR.name, EngineName.EMR_SERVERLESS): FileProcessorOnEmrServerless,
    (DATASET_JOB.name, EngineName.GLUE): DatasetsOnGlue,
    (DATASET_JOB.name, EngineName.EMR_SERVERLESS): DatasetsOnEmrServerless,
}


def substitutions_for(kind: JobKind, engine: EngineName) -> type[Substitutions]:
    """The substitutions class of a kind's definition on ``engine``.

    Raises:
        KeyError: the kind has no state machine on that engine.
    """
    return DEFINITIONS[(kind.name, engine)]


def intrinsic_literal(value: str) -> str:
    """A string literal of an intrinsic function (``'...'`` with ``' { } \\`` escaped).

    A value holding a CDK token (a bucket name, a table name) is left unescaped: what it resolves to has none of
    those characters, and escaping would break the token's own braces."""
    if _UNRESOLVED_MARK in value:
        return f"'{value}'"
    return "'" + _INTRINSIC_SPECIAL.sub(r"\\\1", value) + "'"


def entry_point_arguments(kind: JobKind, static_arguments: Mapping[str, str]) -> str:
    """Pure: ``States.Array(...)`` of ``etl/jobs/emr_serverless.py``'s arguments for a run of ``kind``: the kind's
    name, its static contract arguments (what Glue holds as DefaultArguments) and its per-run ones
    (:attr:`JobKind.run_inputs`, intrinsic expressions over the state's input)."""
    parts = [intrinsic_literal(kind.name)]
    for name, value in static_arguments.items():
        parts += [intrinsic_literal(name), intrinsic_literal(value)]
    for name, expression in kind.run_inputs.items():
        parts += [intrinsic_literal(name), expression]
    return f"States.Array({', '.join(parts)})"


_ARRAY_ITEM = re.compile(r"\s*(?:'((?:\\.|[^'\\])*)'|States\.JsonToString\(\$\.(\w+)\)|\$\.(\w+))\s*(?:,|$)")


def evaluate_entry_point_arguments(expression: str, item: Mapping[str, Any]) -> list[str]:
    """Pure: what Step Functions makes of :func:`entry_point_arguments`' ``States.Array(...)`` for a state's input
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
                raise DefinitionError(f"the state's input has no field {field!r} (States.Array reads $.{field})")
            values.append(json.dumps(item[field], separators=(",", ":")) if as_json else str(item[field]))
        position = match.end()
    return values


def emr_serverless_start_request(parameters: Mapping[str, Any], item: Mapping[str, Any]) -> dict[str, Any]:
    """Pure: boto3 ``emr-serverless.start_job_run`` keyword arguments equal to what an
    ``emr-serverless:startJobRun.sync`` task of these definitions starts for a state's input (``Name.$``: the item's
    batch id).

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
