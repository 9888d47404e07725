"""The ASL file: every placeholder is known and filled, and the rendered definition is JSON."""

from __future__ import annotations

from pathlib import Path

import pytest

from odp.contracts.state_machines import (
    DEFINITION_FILE,
    PLACEHOLDERS,
    DatasetsSubstitutions,
    DefinitionError,
    FileProcessorSubstitutions,
    glue_run_job,
    placeholder_name,
    placeholders_in,
    render_definition,
)

VALUES = {
    "AlertsTopicArn": "arn:aws:sns:eu-west-1:123456789012:alerts",
    "BatchManagerFunctionArn": "arn:aws:lambda:eu-west-1:123456789012:function:batch-manager",
    "Cadence": "every_10_minutes",
    "MaxConcurrency": 4,
    **{placeholder_name(k): v for k, v in glue_run_job("odp-dev-file-processor-every_10_minutes").fields().items()},
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
    assert task["Parameters"] == {"JobName": "odp-dev-file-processor-every_10_minutes", "Arguments.$": "$.arguments"}
    assert task["ResultSelector"] == {"job_run_id.$": "$.Id", "state.$": "$.JobRunState"}
    assert "Glue.ConcurrentRunsExceededException" in task["Retry"][0]["ErrorEquals"]


def test_missing_or_extra_values_are_refused() -> None:
    with pytest.raises(DefinitionError, match=r"placeholders without values: \['MaxConcurrency'\]"):
        render_definition({k: v for k, v in VALUES.items() if k != "MaxConcurrency"})
    with pytest.raises(DefinitionError, match=r"values without placeholders: \['Typo'\]"):
        render_definition({**VALUES, "Typo": "x"})


def test_each_placeholder_is_one_field_of_its_substitutions_class() -> None:
    assert placeholder_name("batch_manager_function_arn") == "BatchManagerFunctionArn"
    assert PLACEHOLDERS == (
        "AlertsTopicArn",
        "BatchManagerFunctionArn",
        "Cadence",
        "MaxConcurrency",
        "RunJobResource",
        "RunJobParameters",
        "RunJobResultSelector",
        "RunJobRetryErrors",
    )
    filled = FileProcessorSubstitutions(
        alerts_topic_arn=VALUES["AlertsTopicArn"],
        batch_manager_function_arn=VALUES["BatchManagerFunctionArn"],
        cadence=VALUES["Cadence"],
        max_concurrency=4,
        **glue_run_job("odp-dev-file-processor-every_10_minutes").fields(),
    )
    assert filled.values() == {name: str(value) for name, value in VALUES.items()}
    assert filled.render() == render_definition(VALUES)
    assert DatasetsSubstitutions.placeholders() == ("DatasetJobName", "AlertsTopicArn", "RefreshOnEmr")
