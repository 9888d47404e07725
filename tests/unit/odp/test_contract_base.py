"""What every job contract derives from its declarations (odp.contracts.base): names, required names, the
getResolvedOptions list, DefaultArguments, defaults of blank arguments, and one declaration per shared name."""

from __future__ import annotations

from collections import defaultdict

import pytest

from etl.jobs.arguments import parse_job_arguments
from odp.contracts.arguments import Glue, JobArgumentError
from odp.contracts.datasets import DatasetJobArgs
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.contracts.streaming import StreamingJobArgs
from odp.naming import TrackerTableNames

CONTRACTS = (FileProcessorJobArgs, StreamingJobArgs, DatasetJobArgs)
NAMES = TrackerTableNames.for_environment("dev")
TRACKERS = (
    "odp_table_file_tracker",
    "odp_table_file_tracker_history",
    "odp_table_processing_tracker",
    "odp_table_processing_tracker_history",
    "odp_table_batch_config",
    "odp_table_table_config",
)


def run_arguments() -> dict[str, str]:
    return {
        **FileProcessorJobArgs.static_arguments(
            environment="dev", cadence="hourly", raw_root="s3://raw", tracker_tables=NAMES
        ),
        **FileProcessorJobArgs.run_arguments(["a.b.c"], "b"),
    }


def test_a_name_shared_by_several_jobs_is_one_declaration() -> None:
    declarations: dict[str, set[Glue]] = defaultdict(set)
    for contract in CONTRACTS:
        for argument in contract.arguments():
            if argument.member is None:
                declarations[argument.name].add(argument.glue)
    assert {name: len(glues) for name, glues in declarations.items() if len(glues) > 1} == {}
    shared = [name for name in declarations if sum(name in c.argument_names() for c in CONTRACTS) > 1]
    assert sorted(shared) == [
        "odp_canary",
        "odp_catalog_sync",
        "odp_environment",
        "odp_lease_seconds",
        "odp_raw_root",
        "odp_table_config",  # the streaming job's tables and the dataset job's raw tables (base.TableConfigTable)
        "odp_table_ids",
    ]


def test_every_argument_is_named_once_and_described() -> None:
    for contract in CONTRACTS:
        names = contract.argument_names()
        assert len(names) == len(set(names)), contract.__name__
        assert all(name.startswith("odp_") for name in names)
        assert all(argument.glue.description for argument in contract.arguments())


def test_required_names_are_the_fields_without_a_default() -> None:
    assert FileProcessorJobArgs.required_names() == (
        "odp_environment",
        "odp_cadence",
        "odp_table_ids",
        "odp_raw_root",
        *TRACKERS,
    )
    assert StreamingJobArgs.required_names() == (
        "odp_environment",
        "odp_stream",
        "odp_stream_arn",
        "odp_table_ids",
        "odp_raw_root",
        "odp_error_root",
        "odp_checkpoint_location",
        "odp_table_config",
        "odp_ledger_tracker",  # each table commit's run (odp.tracker.ledger)
        "odp_ledger_history",
    )
    assert DatasetJobArgs.required_names() == (
        "odp_raw_root",
        "odp_conformed_root",
        "odp_purpose_built_root",
        "odp_table_config",  # the job's configuration, as the Configuration Manager loaded it
        "odp_dataset_config",
    )
    assert set(DatasetJobArgs.optional_names()) == {
        "odp_datasets",
        "odp_changed_tables",
        "odp_full_refresh",
        "odp_catalog_sync",
        "odp_dataset_history_table",
        "odp_topic_arn",
        "odp_canary",  # the post-deploy canary's harmless mode (odp.contracts.base.Canary)
        "odp_engine",  # the datasets of one engine (etl/datasets/job.py)
        "odp_ledger_tracker",  # one refresh of a dataset at a time (etl/datasets/lease.py), its runs recorded
        "odp_ledger_history",
        "odp_lease_seconds",
        "odp_lease_wait_seconds",
    }


def test_get_resolved_options_is_asked_for_the_required_names_and_the_optional_ones_given() -> None:
    argv = ["job.py", "--odp_lease_seconds", "60", "--JOB_RUN_ID", "jr_1"]
    assert FileProcessorJobArgs.resolvable_names(argv) == [
        *FileProcessorJobArgs.required_names(),
        "odp_lease_seconds",
    ]


def test_the_per_run_arguments_are_table_ids_and_batch_id_only() -> None:
    assert FileProcessorJobArgs.run_arguments(["x.y.z"], "b") == {"--odp_table_ids": '["x.y.z"]', "--odp_batch_id": "b"}
    static = FileProcessorJobArgs.static_arguments(
        environment="dev", cadence="hourly", raw_root="s3://raw", tracker_tables=NAMES
    )
    assert "--odp_table_ids" not in static
    assert "--odp_batch_id" not in static


def test_static_arguments_refuse_unknown_and_missing_fields() -> None:
    with pytest.raises(TypeError, match=r"unknown \['table_ids'\], missing \['tracker_tables'\]"):
        FileProcessorJobArgs.static_arguments(environment="dev", cadence="h", raw_root="r", table_ids=("a",))


def test_option_and_glue_name() -> None:
    assert FileProcessorJobArgs.option("lease_seconds") == "--odp_lease_seconds"
    assert FileProcessorJobArgs.glue_name("tracker_tables", "batch_config") == "odp_table_batch_config"
    assert DatasetJobArgs.glue_name("roots", "purpose_built") == "odp_purpose_built_root"
    assert FileProcessorJobArgs.tracker_argument_names()["file_tracker"] == "odp_table_file_tracker"
    with pytest.raises(KeyError, match="FileProcessorJobArgs has no job argument for stream"):
        FileProcessorJobArgs.option("stream")


def test_a_blank_optional_argument_takes_its_default_and_choices_ignore_case() -> None:
    args = FileProcessorJobArgs.from_arguments(
        {**run_arguments(), "--odp_lease_seconds": " ", "--odp_catalog_sync": "", "odp_hudi_profile": "LOCAL"}
    )
    assert (args.lease_seconds, args.catalog_sync, args.hudi_profile) == (900, True, "local")


def test_several_missing_arguments_are_named_together() -> None:
    arguments = {k: v for k, v in run_arguments().items() if k not in ("--odp_environment", "--odp_cadence")}
    with pytest.raises(JobArgumentError, match=r"^job argument\(s\) --odp_environment, --odp_cadence required$"):
        FileProcessorJobArgs.from_arguments(arguments)


def test_a_whole_number_names_its_unit_when_declared() -> None:
    arguments = {
        "--odp_environment": "dev",
        "--odp_stream": "s",
        "--odp_stream_arn": "arn",
        "--odp_table_ids": '["a.b.c"]',
        "--odp_raw_root": "s3://raw/",
        "--odp_error_root": "s3://art/errors/",
        "--odp_checkpoint_location": "s3://art/cp/",
        "--odp_table_config": "tc",
        "--odp_ledger_tracker": "pt",
        "--odp_ledger_history": "pth",
    }
    args = StreamingJobArgs.from_arguments(arguments)
    assert (args.raw_root, args.error_root, args.window_seconds, args.starting_position) == (
        "s3://raw",
        "s3://art/errors",
        100,
        "TRIM_HORIZON",
    )
    with pytest.raises(JobArgumentError, match=r"^job argument --odp_window_seconds must be at least 1, got 0$"):
        StreamingJobArgs.from_arguments({**arguments, "--odp_window_seconds": "0"})


def test_the_local_command_line_parses_to_the_same_contract() -> None:
    arguments = run_arguments()
    argv = ["file_processor.py", *(part for pair in arguments.items() for part in pair), "--unknown", "x"]
    assert parse_job_arguments(FileProcessorJobArgs, argv, "test") == FileProcessorJobArgs.from_arguments(arguments)
