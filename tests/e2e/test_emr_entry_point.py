"""The EMR Serverless entry point (spark-submit, its own JVM, the same contract arguments) writes the same
dataset as the Glue entry point on the sandbox's raw table_1; with the datasets configured ``engine: emr_serverless``,
the datasets state machine's two runs (``--odp_engine glue``, then ``--odp_engine emr_serverless``, both with the
changed tables) leave the Glue run nothing to write and give the EMR run the whole chain in dependency order, with
the same rows. The spark-submit of the EMR entry point runs once (as `make demo` runs it); the engine selection is
the dataset job's, so both runs of the second part are the entry point's ``main`` in this process."""

from __future__ import annotations

import logging
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from etl.engine import LocalEngine
from etl.jobs import dataset_job
from odp.config.loader import load_config
from odp.config.models import EngineName
from odp.contracts.datasets import DatasetJobArgs, config_tables
from sandbox.account import ENVIRONMENT, SandboxLayout
from sandbox.datasets import TRIPS, data_rows, emr_roots, lake_roots
from sandbox.demo import run_demo
from sandbox.job_process import configured_aws
from sandbox.staging import hadoop_file_uri

DATASET = "trips_clean"


@pytest.mark.spark
@pytest.mark.slow
def test_the_emr_entry_point_writes_what_the_glue_entry_point_writes(
    repo_root: Path, tmp_path: Path, spark: object, caplog: pytest.LogCaptureFixture
) -> None:
    config_dir = repo_root / "config"
    config = load_config(config_dir)
    layout = SandboxLayout(lake=tmp_path / "lake", staging=tmp_path / "staging")
    layout.staging.mkdir()
    # As `make demo` runs it: the last round's trips_clean also refreshed through the EMR entry point.
    demo = run_demo(
        config,
        layout,
        spark,
        table_ids=(TRIPS,),
        rounds=0,
        rotate_cdc=False,
        config_dir=config_dir,
        consumer_read=False,
    )
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
    tables = config_tables(ENVIRONMENT)
    glue_args = DatasetJobArgs(glue_roots, **tables, datasets=(DATASET,), full_refresh=True)
    argv = ["dataset_job.py", *[item for pair in glue_args.to_arguments().items() for item in pair]]
    with configured_aws(config):  # the configuration as deployed: the job reads table_config and dataset_config
        assert dataset_job.main(argv, engine=LocalEngine()) == 0

    glue_rows = data_rows(spark, glue_roots.dataset_path(dataset))
    emr_rows = data_rows(spark, emr_roots(layout).dataset_path(dataset))
    assert len(glue_rows) > 0
    assert emr_rows == glue_rows
    assert glue_rows == data_rows(spark, lake_roots(layout).dataset_path(dataset))

    # Every dataset moved to EMR Serverless (config/datasets/*.yaml engine:), run as the datasets state machine runs.
    moved = tmp_path / "config-on-emr"
    shutil.copytree(config_dir, moved)
    for dataset_file in (moved / "datasets").glob("*.yaml"):
        dataset_file.write_text(dataset_file.read_text(encoding="utf-8") + "engine: emr_serverless\n", encoding="utf-8")
    on_emr = load_config(moved).datasets
    assert {d.engine for d in on_emr} == {EngineName.EMR_SERVERLESS}
    glue_only = replace(
        lake_roots(layout),
        conformed=hadoop_file_uri(tmp_path / "engine-glue" / "conformed"),
        purpose_built=hadoop_file_uri(tmp_path / "engine-glue" / "purpose_built"),
    )
    glue_run = DatasetJobArgs(glue_only, **tables, changed_tables=(TRIPS,), engine="glue")
    argv = ["dataset_job.py", *[item for pair in glue_run.to_arguments().items() for item in pair]]
    with configured_aws(load_config(moved)):
        assert dataset_job.main(argv, engine=LocalEngine()) == 0
    assert not (tmp_path / "engine-glue").exists()  # the Glue run had no dataset to refresh
    emr_only = replace(
        lake_roots(layout),
        conformed=hadoop_file_uri(tmp_path / "engine-emr" / "conformed"),
        purpose_built=hadoop_file_uri(tmp_path / "engine-emr" / "purpose_built"),
    )
    emr_run = DatasetJobArgs(emr_only, **tables, changed_tables=(TRIPS,), engine="emr_serverless")
    caplog.set_level(logging.INFO)
    caplog.clear()
    argv = ["dataset_job.py", *[item for pair in emr_run.to_arguments().items() for item in pair]]
    with configured_aws(load_config(moved)):
        assert dataset_job.main(argv, engine=LocalEngine()) == 0
    assert data_rows(spark, emr_only.dataset_path(dataset)) == glue_rows
    # the whole chain, in dependency order (revenue_per_vendor_day reads trips_clean), each written
    written = [message.split(":")[0] for message in caplog.messages if ": written (" in message]
    assert written == [DATASET, "revenue_per_vendor_day"], caplog.messages
    for downstream in on_emr:
        assert data_rows(spark, emr_only.dataset_path(downstream))
