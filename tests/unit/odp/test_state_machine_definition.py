"""The ASL files: one per (job kind, engine), each placeholder one scalar of its substitutions class, the rendered
definition JSON, and an engine's variant differing from the other's only in how it runs the job."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from odp.config.models import EngineName
from odp.contracts.job_kinds import DATASET_JOB, FILE_PROCESSOR, JOB_KINDS
from odp.contracts.state_machines import (
    DEFINITIONS,
    DatasetsOnEmrServerless,
    DatasetsOnGlue,
    DefinitionError,
    EmrServerlessRun,
    FileProcessorOnEmrServerless,
    FileProcessorOnGlue,
    FileProcessorWarmOnGlue,
    fill,
    placeholder_name,
    placeholders_in,
    quoted_placeholders,
    render_definition,
    render_substituted,
    substitutions_for,
)

GLUE = FileProcessorOnGlue(
    alerts_topic_arn="arn:aws:sns:eu-west-1:123456789012:alerts",
    batch_manager_function_arn="arn:aws:lambda:eu-west-1:123456789012:function:batch-manager",
    cadence="every_10_minutes",
    max_concurrency=4,
    job_name="odp-dev-file-processor-every_10_minutes",
    plan_bucket="odp-dev-artifacts",
)
EMR = EmrServerlessRun(
    application_id="00fapp",
    execution_role_arn="arn:aws:iam::123456789012:role/emr",
    entry_point="s3://artifacts/emr/emr_serverless.py",
    entry_point_arguments="States.Array('file_processor', '--odp_cadence', 'it\\'s', $.batch_id)",
    spark_submit_parameters='--conf spark.x="a b"',
    execution_timeout_minutes=30,
)


def test_each_job_kind_on_each_engine_has_its_file_and_its_substitutions(repo_root: Path) -> None:
    expected = {
        kind.definition(engine) for kind in JOB_KINDS if kind.state_machine is not None for engine in kind.engines
    }
    # and a warm cadence's (docs/decisions/032): it starts the File Processor's warm run
    assert set((repo_root / "stepfunctions").glob("*.asl.json")) == expected | {FileProcessorWarmOnGlue.DEFINITION}
    warm = FileProcessorWarmOnGlue.DEFINITION.read_text()
    assert placeholders_in(warm) == set(FileProcessorWarmOnGlue.placeholders())
    for (name, engine), substitutions in DEFINITIONS.items():
        kind = next(kind for kind in JOB_KINDS if kind.name == name)
        assert kind.definition(engine) == substitutions.DEFINITION
        assert placeholders_in(substitutions.DEFINITION.read_text()) == set(substitutions.placeholders())
    assert substitutions_for(FILE_PROCESSOR, EngineName.EMR_SERVERLESS) is FileProcessorOnEmrServerless
    with pytest.raises(ValueError, match="no state machine on"):
        JOB_KINDS[2].definition(EngineName.GLUE)  # the streaming job runs on its own


def test_no_placeholder_is_a_piece_of_json(repo_root: Path) -> None:
    """A placeholder stands inside a string, or alone where a number goes (its class field is an int)."""
    for substitutions in DEFINITIONS.values():
        contexts = quoted_placeholders(substitutions.DEFINITION.read_text())
        numbers = {name for name, quoted in contexts.items() if not quoted}
        fields = {placeholder_name(field.name): field.type for field in dataclasses.fields(substitutions)}
        assert {fields[name] for name in numbers} <= {"int"}, (substitutions.__name__, numbers)


def test_the_rendered_glue_definition_runs_the_cadences_job_with_bounded_concurrency() -> None:
    definition = GLUE.render()
    assert "${" not in str(definition)
    process = definition["States"]["ProcessBatches"]
    assert process["MaxConcurrency"] == 4
    # a Distributed Map over the plan in S3, its results written back: no state holds the plan or the results
    assert process["ItemProcessor"]["ProcessorConfig"] == {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}
    assert process["ItemReader"]["Parameters"] == {"Bucket": "odp-dev-artifacts", "Key.$": "$.plan.location.key"}
    assert process["ResultWriter"]["Parameters"] == {
        "Bucket": "odp-dev-artifacts",
        "Prefix": "plans/every_10_minutes/results",
    }
    assert "ItemsPath" not in process
    task = process["ItemProcessor"]["States"]["RunFileProcessor"]
    assert task["Resource"] == "arn:aws:states:::glue:startJobRun.sync"
    assert task["Parameters"] == {
        "JobName": "odp-dev-file-processor-every_10_minutes",
        "Arguments.$": "$.arguments",
        "WorkerType.$": "$.worker_type",  # each run on the workers its plan chose (odp/planning.py)
        "NumberOfWorkers.$": "$.number_of_workers",
    }
    assert task["ResultSelector"] == {"job_run_id.$": "$.Id", "state.$": "$.JobRunState"}
    assert "Glue.ConcurrentRunsExceededException" in task["Retry"][0]["ErrorEquals"]


def test_a_string_goes_in_json_escaped_and_comes_out_as_given() -> None:
    substitutions = FileProcessorOnEmrServerless(
        alerts_topic_arn=GLUE.alerts_topic_arn,
        batch_manager_function_arn=GLUE.batch_manager_function_arn,
        cadence="hourly",
        max_concurrency=2,
        plan_bucket=GLUE.plan_bucket,
        **EMR.fields(),
    )
    task = substitutions.render()["States"]["ProcessBatches"]["ItemProcessor"]["States"]["RunFileProcessor"]
    submit = task["Parameters"]["JobDriver"]["SparkSubmit"]
    assert submit["EntryPointArguments.$"] == EMR.entry_point_arguments  # backslash and quote kept
    assert submit["SparkSubmitParameters"] == '--conf spark.x="a b"'
    assert task["Parameters"]["ExecutionTimeoutMinutes"] == 30
    # what CloudFormation is given renders the same definition as Step Functions substitutes it
    text = substitutions.DEFINITION.read_text()
    assert render_substituted(substitutions.values(), text) == substitutions.render()


def test_missing_extra_and_non_numeric_values_are_refused() -> None:
    values = GLUE.raw_values()
    text = GLUE.DEFINITION.read_text()
    with pytest.raises(DefinitionError, match=r"placeholders without values: \['MaxConcurrency'\]"):
        fill(text, {k: v for k, v in values.items() if k != "MaxConcurrency"})
    with pytest.raises(DefinitionError, match=r"values without placeholders: \['Typo'\]"):
        fill(text, {**values, "Typo": "x"})
    with pytest.raises(DefinitionError, match=r"\$\{MaxConcurrency\} stands where a number goes: '4; x'"):
        render_definition({**values, "MaxConcurrency": "4; x"}, text)
    with pytest.raises(DefinitionError, match="both inside and outside"):
        quoted_placeholders('{"a": "${X}", "b": ${X}}')


def _without(definition: dict, *names: str) -> dict:
    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in names}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(definition)


def test_the_engines_file_processors_differ_only_in_how_the_job_runs() -> None:
    glue = GLUE.render()
    emr = FileProcessorOnEmrServerless(
        alerts_topic_arn=GLUE.alerts_topic_arn,
        batch_manager_function_arn=GLUE.batch_manager_function_arn,
        cadence=GLUE.cadence,
        max_concurrency=GLUE.max_concurrency,
        plan_bucket=GLUE.plan_bucket,
        **EMR.fields(),
    ).render()
    run = ("Resource", "Parameters", "ResultSelector", "Retry", "Comment")
    for definition in (glue, emr):
        definition["States"]["ProcessBatches"]["ItemProcessor"]["States"]["RunFileProcessor"] = _without(
            definition["States"]["ProcessBatches"]["ItemProcessor"]["States"]["RunFileProcessor"], *run
        )
    assert _without(glue, "Comment") == _without(emr, "Comment")


def test_the_datasets_on_emr_serverless_add_one_run_after_the_glue_run() -> None:
    glue = DatasetsOnGlue(alerts_topic_arn="arn:topic", job_name="odp-dev-dataset-job").render()
    emr = DatasetsOnEmrServerless(alerts_topic_arn="arn:topic", job_name="odp-dev-dataset-job", **EMR.fields()).render()
    on_emr = emr["States"].pop("RefreshDatasetsOnEmr")
    assert on_emr["Resource"] == "arn:aws:states:::emr-serverless:startJobRun.sync"
    assert (on_emr["Next"], on_emr["Catch"][0]["Next"]) == ("Done", "NotifyFailure")
    assert emr["States"]["RefreshDatasets"].pop("Next") == "RefreshDatasetsOnEmr"
    assert glue["States"]["RefreshDatasets"].pop("Next") == "Done"
    assert _without(glue, "Comment") == _without(emr, "Comment")
    assert DATASET_JOB.definition(EngineName.GLUE).name == "datasets.glue.asl.json"
