"""Disaster recovery: region A stops mid-stream; its tracker state and buckets, as replicated, are
copied to region B (a second sandbox), and processing continues there from where A stopped.

Region A runs one round, then lands a second round and is killed right after the File Manager
registered it (the files are tracked, not applied). Its lake folder (raw bucket + the six tracker
tables, as DynamoDB global tables would hold them) and staging bucket are copied to B; a third round
lands in B only. One run in B applies rounds two and three: every table equals its source, every file
is applied once. The runbook is the README's "Disaster recovery" section.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.kill_harness import completed_instants
from tests.support.kill_sandbox import ALPHA, BETA, Sandbox, statuses

pytestmark = [pytest.mark.slow, pytest.mark.spark]  # region A stops in a child process; the other runs are here


def test_a_second_region_finishes_from_the_copied_state_with_every_table_correct(
    tmp_path: Path, repo_root: Path, spark: object
) -> None:
    region_a = Sandbox(tmp_path / "region-a", repo_root)
    region_a.land("alpha", "20260101-000001.parquet", [("I", 1, 1, "ann"), ("I", 2, 2, "bob")])
    region_a.land("beta", "20260101-000001.parquet", [("I", 1, 10, "x")])
    first = region_a.run_here(spark)
    assert first.ok, first.to_json()

    region_a.land("alpha", "20260101-000002.parquet", [("U", 3, 1, "ann-2"), ("D", 4, 2, "bob")])
    region_a.land("beta", "20260101-000002.parquet", [("I", 2, 11, "y")])
    stopped = region_a.run(fault_point="sandbox.after_file_manager")
    assert stopped.killed, stopped.output[-3000:]
    assert len(region_a.saved_items("file_tracker")) == 2  # mid-stream: registered, not applied

    region_b = Sandbox(tmp_path / "region-b", repo_root)
    shutil.rmtree(region_b.staging)
    shutil.copytree(region_a.staging, region_b.staging)  # S3 replication of the staging bucket
    shutil.copytree(region_a.lake, region_b.lake)  # the raw bucket and the tracker tables
    shutil.rmtree(region_a.root)  # region A is gone
    region_b.land("alpha", "20260101-000003.parquet", [("I", 5, 3, "cy"), ("U", 6, 2, "bob-again")])
    region_b.land("beta", "20260101-000003.parquet", [("D", 3, 10, "x")])

    finished = region_b.run_here(spark)
    assert finished.ok, finished.to_json()
    assert statuses(region_b.report()) == {ALPHA: ("completed", 2), BETA: ("completed", 2)}
    assert region_b.report()["announced_files"] == 2  # only B's own new files; the copied ones were known
    # the source model, written out: alpha 1 updated, 2 deleted then re-created by a later change, 3 new
    assert region_b.rows("alpha") == [(1, "ann-2"), (2, "bob-again"), (3, "cy")]
    assert region_b.rows("beta") == [(11, "y")]
    assert region_b.saved_items("file_tracker") == []
    assert len(region_b.saved_items("file_tracker_history")) == 6
    assert len(completed_instants(region_b.table_dir("alpha"))) == 2  # round one in A, rounds two+three in B
