"""The ASL file: every placeholder is known and filled, and the rendered definition is JSON."""

from __future__ import annotations

from pathlib import Path

import pytest

from odp.state_machine import DEFINITION_FILE, PLACEHOLDERS, DefinitionError, placeholders_in, render_definition

VALUES = {
    "AlertsTopicArn": "arn:aws:sns:eu-west-1:123456789012:alerts",
    "BatchManagerFunctionArn": "arn:aws:lambda:eu-west-1:123456789012:function:batch-manager",
    "Cadence": "every_10_minutes",
    "FileProcessorJobName": "odp-dev-file-processor-every_10_minutes",
    "MaxConcurrency": 4,
}


def test_every_asl_file_uses_exactly_the_known_placeholders(repo_root: Path) -> None:
    files = sorted((repo_root / "stepfunctions").glob("*.asl.json"))
    assert DEFINITION_FILE in files
    for path in files:
        if path.name == "datasets.asl.json":
            continue  # the datasets state machine has its own placeholders (tests/unit/odp/test_datasets_state_machine.py)
        assert placeholders_in(path.read_text()) == set(PLACEHOLDERS), path.name


def test_rendered_definition_has_no_placeholder_left_and_bounded_concurrency() -> None:
    definition = render_definition(VALUES)
    assert "${" not in str(definition)
    process = definition["States"]["ProcessBatches"]
    assert process["MaxConcurrency"] == 4
    task = process["Iterator"]["States"]["RunFileProcessor"]
    assert task["Resource"] == "arn:aws:states:::glue:startJobRun.sync"
    assert task["Parameters"]["JobName"] == VALUES["FileProcessorJobName"]


def test_missing_or_extra_values_are_refused() -> None:
    with pytest.raises(DefinitionError, match=r"placeholders without values: \['MaxConcurrency'\]"):
        render_definition({k: v for k, v in VALUES.items() if k != "MaxConcurrency"})
    with pytest.raises(DefinitionError, match=r"values without placeholders: \['Typo'\]"):
        render_definition({**VALUES, "Typo": "x"})
