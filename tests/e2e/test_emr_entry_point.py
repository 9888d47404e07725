"""The EMR Serverless entry point (spark-submit, its own JVM, the same contract arguments) writes the same
dataset as the Glue entry point on the sandbox's raw table_1."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from etl.engine import LocalEngine
from etl.jobs import dataset_job
from odp.config.loader import load_config
from odp.contracts.datasets import DatasetJobArgs
from sandbox.account import SandboxLayout
from sandbox.datasets import TRIPS, data_rows, emr_roots, lake_roots
from sandbox.demo import run_demo
from sandbox.staging import hadoop_file_uri

DATASET = "trips_clean"


@pytest.mark.spark
@pytest.mark.slow
def test_the_emr_entry_point_writes_what_the_glue_entry_point_writes(
    repo_root: Path, tmp_path: Path, spark: object
) -> None:
    config_dir = repo_root / "config"
    config = load_config(config_dir)
    layout = SandboxLayout(lake=tmp_path / "lake", staging=tmp_path / "staging")
    layout.staging.mkdir()
    # As `make demo` runs it: the last round's trips_clean also refreshed through the EMR entry point.
    demo = run_demo(config, layout, spark, table_ids=(TRIPS,), rounds=0, rotate_cdc=False, config_dir=config_dir)
    assert demo.ok, [c for c in demo.round_checks if not c.ok]
    descriptions = [c.description for c in demo.round_checks]
    # The in-process trips_clean matches the plain-Python model of the raw rows; the EMR one matches it.
    assert "round 0: dataset trips_clean: matches the model" in descriptions
    assert descriptions[-1] == "dataset trips_clean: EMR entry point (spark-submit) writes the same rows"
    assert (layout.lake / "emr" / "dataset_job.log").is_file()
    dataset = next(d for d in config.datasets if d.name == DATASET)

    glue_roots = replace(
        lake_roots(layout),
        conformed=hadoop_file_uri(tmp_path / "glue" / "conformed"),
        purpose_built=hadoop_file_uri(tmp_path / "glue" / "purpose_built"),
    )
    glue_args = DatasetJobArgs(glue_roots, config_dir=str(config_dir), datasets=(DATASET,), full_refresh=True)
    argv = ["dataset_job.py", *[item for pair in glue_args.to_arguments().items() for item in pair]]
    assert dataset_job.main(argv, engine=LocalEngine()) == 0

    glue_rows = data_rows(spark, glue_roots.dataset_path(dataset))
    emr_rows = data_rows(spark, emr_roots(layout).dataset_path(dataset))
    assert len(glue_rows) > 0
    assert emr_rows == glue_rows
    assert glue_rows == data_rows(spark, lake_roots(layout).dataset_path(dataset))
