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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

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


@dataclass(frozen=True)
class FileProcessorSubstitutions(Substitutions):
    """``stepfunctions/file_processor.asl.json``, one state machine per cadence."""

    DEFINITION: ClassVar[Path] = STEPFUNCTIONS_DIR / "file_processor.asl.json"

    alerts_topic_arn: str
    batch_manager_function_arn: str
    cadence: str
    file_processor_job_name: str
    max_concurrency: int


@dataclass(frozen=True)
class DatasetsSubstitutions(Substitutions):
    """``stepfunctions/datasets.asl.json``, the dataset job after each File Processor execution."""

    DEFINITION: ClassVar[Path] = STEPFUNCTIONS_DIR / "datasets.asl.json"

    dataset_job_name: str
    alerts_topic_arn: str


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
