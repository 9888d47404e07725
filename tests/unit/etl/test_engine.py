"""etl.engine: what each engine gives a job's entry point, and who is asked about a lease holder's run."""

from __future__ import annotations

import boto3
import pytest

from etl.engine import EmrServerlessEngine, GlueEngine, LocalEngine, detect_engine
from etl.engine.emr_serverless import EMR_APPLICATION_ENV, EMR_JOB_RUN_ENV, emr_job_run
from etl.engine.glue import glue_job_run
from etl.jobs import emr_serverless
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.contracts.spark import spark_submit_parameters
from odp.naming import TrackerTableNames
from odp.tracker import EmrServerlessJobRuns, JobRunRef, JobRunsByEngine
from tests.support.emr_runs import moto_emr_run
from tests.support.paths import AWS_REGION

ARGUMENTS = {
    **FileProcessorJobArgs.static_arguments(
        environment="dev", cadence="fast", raw_root="s3://raw", tracker_tables=TrackerTableNames.for_environment("dev")
    ),
    **FileProcessorJobArgs.run_arguments(["shop.public.orders"], "b-1"),
}


def _argv(arguments: dict[str, str]) -> list[str]:
    return ["script.py", *[item for pair in arguments.items() for item in pair]]


def test_glue_passes_its_job_run_as_arguments() -> None:
    argv = _argv({"--JOB_NAME": "odp-dev-file-processor-fast", "--JOB_RUN_ID": "jr_1", **ARGUMENTS})
    assert glue_job_run(argv) == JobRunRef("odp-dev-file-processor-fast", "jr_1")
    assert glue_job_run(_argv(ARGUMENTS)) is None


def test_emr_serverless_names_its_job_run_in_the_environment() -> None:
    environ = {EMR_APPLICATION_ENV: "00fabc", EMR_JOB_RUN_ENV: "00fjob"}
    assert emr_job_run(environ) == JobRunRef("emr-serverless/00fabc", "00fjob")
    assert emr_job_run({EMR_JOB_RUN_ENV: "00fjob"}) is None


def test_the_engine_is_detected_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(EMR_JOB_RUN_ENV, raising=False)
    assert isinstance(detect_engine(), LocalEngine)
    monkeypatch.setenv(EMR_JOB_RUN_ENV, "00fjob")
    assert isinstance(detect_engine(), EmrServerlessEngine)


def test_emr_and_local_read_the_contract_glue_reads() -> None:
    expected = FileProcessorJobArgs.from_arguments(ARGUMENTS)
    argv = _argv({**ARGUMENTS, "--JOB_NAME": "ignored"})
    assert EmrServerlessEngine().parse_arguments(FileProcessorJobArgs, argv, "t") == expected
    assert LocalEngine().parse_arguments(FileProcessorJobArgs, argv, "t") == expected
    assert GlueEngine().name == "glue"


def test_hudi_goes_on_the_class_path_never_on_spark_jars() -> None:
    class_path = ["/usr/lib/hudi-odp/hudi.jar", "/usr/lib/odp/odp-hudi-extensions.jar"]
    parameters = spark_submit_parameters(class_path, {"spark.driver.memory": "4g"})
    settings = dict(p.split("=", 1) for p in parameters if p != "--conf")
    assert parameters[0] == "--conf"
    assert settings["spark.driver.extraClassPath"] == "/usr/lib/hudi-odp/hudi.jar:/usr/lib/odp/odp-hudi-extensions.jar"
    assert settings["spark.executor.extraClassPath"] == settings["spark.driver.extraClassPath"]
    assert settings["spark.sql.extensions"] == "org.apache.spark.sql.hudi.HoodieSparkSessionExtension"
    assert settings["spark.driver.memory"] == "4g"
    assert "spark.jars" not in settings
    assert "spark.driver.extraClassPath" not in dict(
        p.split("=", 1) for p in spark_submit_parameters(()) if p != "--conf"
    )


def test_the_emr_entry_point_refuses_an_unknown_job(capsys: pytest.CaptureFixture[str]) -> None:
    assert emr_serverless.main(["emr_serverless.py", "compaction", "--odp_batch_id", "b"]) == 2
    assert "file_processor,dataset_job" in capsys.readouterr().err


def test_a_cancelled_emr_run_has_ended_a_running_one_has_not(aws: None) -> None:
    runs = EmrServerlessJobRuns(boto3.client("emr-serverless", region_name=AWS_REGION))
    cancelled = moto_emr_run(cancel=True)
    application = cancelled.job_name.removeprefix("emr-serverless/")
    assert runs.ended(cancelled) == (
        f"job run {cancelled.run_id} of EMR Serverless application {application} ended CANCELLED"
    )
    gone = JobRunRef(cancelled.job_name, "00fgone")
    assert runs.ended(gone) == f"job run 00fgone of EMR Serverless application {application} no longer exists"


class _Answers:
    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.asked: list[JobRunRef] = []

    def ended(self, job_run: JobRunRef) -> str | None:
        self.asked.append(job_run)
        return self.answer


def test_each_holder_is_asked_about_on_its_own_engine() -> None:
    glue, emr = _Answers("glue says ended"), _Answers("emr says ended")
    runs = JobRunsByEngine(glue, emr)
    assert runs.ended(JobRunRef("odp-dev-file-processor-fast", "jr_1")) == "glue says ended"
    assert runs.ended(JobRunRef("emr-serverless/00fabc", "00fjob")) == "emr says ended"
    assert [r.run_id for r in glue.asked] == ["jr_1"]
    assert [r.run_id for r in emr.asked] == ["00fjob"]
