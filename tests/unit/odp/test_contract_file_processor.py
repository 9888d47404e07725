"""The File Processor job arguments (odp.contracts.file_processor): one spelling, JSON lists, clear errors, never evaluated."""

from __future__ import annotations

import pytest

from odp.contracts.arguments import JobArgumentError
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.naming import TrackerTableNames

NAMES = TrackerTableNames.for_environment("dev")


def static() -> dict[str, str]:
    return FileProcessorJobArgs.static_arguments(
        environment="dev", cadence="every_10_minutes", raw_root="s3://raw-bucket/", tracker_tables=NAMES
    )


def test_static_and_run_arguments_round_trip() -> None:
    arguments = {**static(), **FileProcessorJobArgs.run_arguments(["a.b.c", "a.b.d"], "exec-1-0")}
    args = FileProcessorJobArgs.from_arguments(arguments)
    assert args.table_ids == ("a.b.c", "a.b.d")
    assert args.batch_id == "exec-1-0"
    assert args.raw_root == "s3://raw-bucket"
    assert args.tracker_tables == NAMES
    assert args.catalog_sync is True
    assert args.table_base_path("sales_raw", "orders") == "s3://raw-bucket/sales_raw/orders"
    assert FileProcessorJobArgs.from_arguments(args.to_arguments()) == args


def test_glue_argument_names_are_the_documented_ones() -> None:
    assert static()["--odp_table_file_tracker"] == "odp-dev-file-tracker"
    assert FileProcessorJobArgs.run_arguments(["x.y.z"], "b") == {"--odp_table_ids": '["x.y.z"]', "--odp_batch_id": "b"}
    assert set(FileProcessorJobArgs.argument_names()) == {name.removeprefix("--") for name in static()} | {
        "odp_table_ids",
        "odp_batch_id",
        "odp_mode",  # per run, only a warm cadence's start passes it (docs/decisions/032)
    }
    assert FileProcessorJobArgs.warm_arguments() == {
        "--odp_table_ids": "[]",
        "--odp_batch_id": "warm",
        "--odp_mode": "warm",
    }


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"--odp_table_ids": "['a.b.c']"}, "--odp_table_ids must be a JSON list of table ids"),
        ({"--odp_table_ids": '{"a": 1}'}, "--odp_table_ids must be a JSON list of strings"),
        ({"--odp_table_ids": "__import__('os').system('true')"}, "--odp_table_ids must be a JSON list"),
        ({"--odp_table_ids": ""}, "--odp_table_ids is required"),
        ({"--odp_lease_seconds": "ten"}, "--odp_lease_seconds must be a whole number, got 'ten'"),
        ({"--odp_lease_seconds": "0"}, "--odp_lease_seconds must be at least 1"),
        ({"--odp_catalog_sync": "yes"}, "--odp_catalog_sync must be true or false"),
        ({"--odp_table_file_tracker": ""}, "--odp_table_file_tracker is required"),
        ({"--odp_table_concurrency": "0"}, "--odp_table_concurrency must be at least 1, got 0"),
        ({"--odp_hudi_profile": "laptop"}, "--odp_hudi_profile must be glue or local, got 'laptop'"),
        ({"--odp_job_dpus": "ten"}, "--odp_job_dpus must be a number, got 'ten'"),
        ({"--odp_job_dpus": "-1"}, "--odp_job_dpus must not be negative, got -1.0"),
    ],
)
def test_malformed_arguments_name_the_argument(override: dict[str, str], message: str) -> None:
    arguments = {**static(), **FileProcessorJobArgs.run_arguments(["a.b.c"], "b"), **override}
    with pytest.raises(JobArgumentError, match=message.replace("[", r"\[").replace("(", r"\(")):
        FileProcessorJobArgs.from_arguments(arguments)


def test_repeated_table_ids_are_processed_once() -> None:
    arguments = {**static(), **FileProcessorJobArgs.run_arguments(["a.b.c", "a.b.c"], "b")}
    assert FileProcessorJobArgs.from_arguments(arguments).table_ids == ("a.b.c",)


def test_concurrency_profile_and_dpus_travel_as_static_arguments_with_production_defaults() -> None:
    defaults = FileProcessorJobArgs.from_arguments({**static(), **FileProcessorJobArgs.run_arguments(["a.b.c"], "b")})
    assert (defaults.table_concurrency, defaults.hudi_profile, defaults.job_dpus) == (4, "glue", 0.0)
    arguments = FileProcessorJobArgs.static_arguments(
        environment="dev",
        cadence="hourly",
        raw_root="file:///lake",
        tracker_tables=NAMES,
        table_concurrency=5,
        hudi_profile="local",
        job_dpus=2.5,
    )
    assert arguments["--odp_table_concurrency"] == "5"
    assert arguments["--odp_hudi_profile"] == "local"
    assert arguments["--odp_job_dpus"] == "2.5"
    args = FileProcessorJobArgs.from_arguments({**arguments, **FileProcessorJobArgs.run_arguments(["a.b.c"], "b")})
    assert (args.table_concurrency, args.hudi_profile, args.job_dpus) == (5, "local", 2.5)
    assert FileProcessorJobArgs.from_arguments(args.to_arguments()) == args
