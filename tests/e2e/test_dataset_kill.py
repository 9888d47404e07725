"""Kill -9 after a dataset's Hudi commit, before anything else (``datasets.after_commit``): the rerun
finds the source commits consumed and applies nothing twice. The killed job is a child process (``python -m
etl.jobs.dataset_job`` through ``sandbox.job_process``: the configuration loaded into the process's DynamoDB, as
deployed); the rerun is the same entry point in this process, with the configuration loaded the same way. The
dataset is read back with hudi-rs; expected rows written out by hand."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

from etl.datasets.refresh import AFTER_COMMIT_FAULT
from etl.engine import LocalEngine
from etl.jobs import dataset_job
from odp.config.loader import load_config
from odp.contracts.datasets import DatasetJobArgs, LakeRoots, config_tables
from sandbox.account import ENVIRONMENT
from sandbox.job_process import configured_aws
from sandbox.staging import hadoop_file_uri
from tests.support.kill_harness import completed_instants, run_child
from tests.support.kill_sandbox import Sandbox
from tests.support.lake import hudi_rs_rows

pytestmark = [pytest.mark.slow, pytest.mark.spark]  # the killed job starts Spark in a child process

DATASET = {
    "name": "alpha_clean",
    "zone": "conformed",
    "database": "shop_conformed",
    "sources": [{"name": "alpha", "table": "shop.app.alpha"}],
    "key": ["id"],
    "refresh": "incremental",
}


def dataset_job_arguments(sandbox: Sandbox) -> list[str]:
    lake = sandbox.lake
    roots = LakeRoots(
        hadoop_file_uri(lake / "raw"), hadoop_file_uri(lake / "conformed"), hadoop_file_uri(lake / "purpose_built")
    )
    arguments = DatasetJobArgs(roots, **config_tables(ENVIRONMENT)).to_arguments()
    return [part for pair in arguments.items() for part in pair]


def dataset_job_argv(sandbox: Sandbox) -> list[str]:
    job = ["etl.jobs.dataset_job", *dataset_job_arguments(sandbox)]
    return [sys.executable, "-m", "sandbox.job_process", str(sandbox.config), *job]


def test_a_dataset_job_killed_after_its_commit_reruns_without_applying_twice(
    tmp_path: Path, repo_root: Path, spark: object, caplog: pytest.LogCaptureFixture
) -> None:
    sandbox = Sandbox(tmp_path, repo_root)
    sandbox.land("alpha", "20260101-000001.parquet", [("I", 1, 1, "ann"), ("I", 2, 2, "bob"), ("D", 3, 2, "bob")])
    sandbox.land("beta", "20260101-000001.parquet", [("I", 1, 10, "x")])
    assert sandbox.run_here(spark).ok, "the File Processor run that fills the raw table"
    # the dataset is configured after that run: `sandbox run` refreshes the datasets downstream of what it
    # changed, and this test's first dataset job must be the one that commits (and is killed)
    (sandbox.config / "datasets").mkdir()
    (sandbox.config / "datasets" / "alpha_clean.yaml").write_text(json.dumps(DATASET))
    (sandbox.config / "datasets" / "alpha_clean.sql").write_text("SELECT id, upper(name) AS name FROM alpha")
    dataset_dir = sandbox.lake / "conformed" / "shop_conformed" / "alpha_clean"

    killed = run_child(dataset_job_argv(sandbox), output=tmp_path / "job-1.log", fault_point=AFTER_COMMIT_FAULT)
    assert killed.killed, killed.output[-2000:]
    assert len(completed_instants(dataset_dir)) == 1
    assert hudi_rs_rows(str(dataset_dir), ["id", "name"]) == [(1, "ANN")]

    caplog.set_level(logging.INFO)
    with configured_aws(load_config(sandbox.config)):
        assert dataset_job.main(["dataset_job.py", *dataset_job_arguments(sandbox)], engine=LocalEngine()) == 0
    assert "alpha_clean: up_to_date" in caplog.text
    assert len(completed_instants(dataset_dir)) == 1
    assert hudi_rs_rows(str(dataset_dir), ["id", "name"]) == [(1, "ANN")]
