"""The File Processor state machine definition: its placeholders and how they are filled.

``stepfunctions/file_processor.asl.json`` is loaded by CDK (DefinitionBody.from_file with definition
substitutions) and by the sandbox (moto executes it). Both fill the same placeholders, named here.
``${MaxConcurrency}`` stands unquoted where a number goes, so the file is JSON once rendered.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

DEFINITION_FILE = Path(__file__).resolve().parents[1] / "stepfunctions" / "file_processor.asl.json"
PLACEHOLDERS = ("AlertsTopicArn", "BatchManagerFunctionArn", "Cadence", "FileProcessorJobName", "MaxConcurrency")
_PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9_]+)\}")


class DefinitionError(ValueError):
    """A placeholder is missing a value, a value has no placeholder, or the result is not JSON."""


def placeholders_in(text: str) -> set[str]:
    return set(_PLACEHOLDER.findall(text))


def render_definition(values: dict[str, Any], text: str | None = None) -> dict[str, Any]:
    """Fill every placeholder and parse the result.

    Raises:
        DefinitionError: a placeholder without a value, a value without a placeholder, or invalid JSON.
    """
    source = DEFINITION_FILE.read_text(encoding="utf-8") if text is None else text
    found = placeholders_in(source)
    missing = found - set(values)
    unused = set(values) - found
    if missing or unused:
        raise DefinitionError(
            f"placeholders without values: {sorted(missing)}; values without placeholders: {sorted(unused)}"
        )
    rendered = _PLACEHOLDER.sub(lambda match: str(values[match.group(1)]), source)
    try:
        return json.loads(rendered)
    except json.JSONDecodeError as error:
        raise DefinitionError(f"the rendered definition is not JSON: {error}") from error
