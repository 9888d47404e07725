"""Kill -9 at every state-changing point, then run again: the table ends exactly equal to its source.

One small scenario for every point (one child run each, killed; the run again is in this process, on the test
session's Spark, reading every piece of state from the folders as a new process would): one file inserts keys 1..3, a second
updates key 1 and deletes key 2 (so tombstones are written). Moving files to history mid-way needs
more files than one transaction moves (50): there, 50 files insert keys 1..50 and a 51st updates key 1
and deletes key 2. ``python -m sandbox run`` is killed (SIGKILL, process group) at the named point
(odp/faults.py), then run again without one. The README's "Crash safety" table lists these points.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.kill_harness import completed_instants
from tests.support.kill_sandbox import ALPHA, Sandbox

pytestmark = [pytest.mark.slow, pytest.mark.spark]  # a child Spark JVM per point

MANY = "tracker.between_moves"  # the one point that needs more files than one transaction moves


def land_scenario(sandbox: Sandbox, point: str) -> list[tuple[int, str]]:
    """Land the round; returns the source model after it, written out."""
    inserts = range(1, 51) if point == MANY else range(1, 4)
    if point == MANY:
        for key in inserts:
            sandbox.land("alpha", f"20260101-{key:06d}.parquet", [("I", key, key, f"name-{key}")])
    else:
        sandbox.land("alpha", "20260101-000001.parquet", [("I", key, key, f"name-{key}") for key in inserts])
    sandbox.land("alpha", "20260101-000099.parquet", [("U", 100, 1, "name-1-v2"), ("D", 101, 2, "name-2")])
    return [(1, "name-1-v2"), *((key, f"name-{key}") for key in inserts if key > 2)]


def landed_files(sandbox: Sandbox) -> int:
    return len(list((sandbox.staging / "shop" / "app" / "alpha").iterdir()))


def assert_applied_exactly_once(sandbox: Sandbox, expected: list[tuple[int, str]]) -> None:
    assert sandbox.rows("alpha") == expected
    assert sandbox.saved_items("file_tracker") == []
    history = sandbox.saved_items("file_tracker_history")
    assert len(history) == landed_files(sandbox)
    assert {item["status"]["S"] for item in history} == {"raw_file_processed"}
    assert len(completed_instants(sandbox.table_dir("alpha"))) == 1  # one commit applied the round


POINTS = {
    # point -> what the kill leaves behind (checked before the rerun)
    "file_manager.after_register": lambda s: len(s.saved_items("file_tracker")) == 1,
    "etl.before_tombstones": lambda s: not s.tombstone_dir("alpha").exists(),
    "etl.before_commit": lambda s: completed_instants(s.table_dir("alpha")) == [],
    "etl.after_commit": lambda s: (
        len(completed_instants(s.table_dir("alpha"))) == 1 and len(s.saved_items("file_tracker")) == landed_files(s)
    ),
    MANY: lambda s: len(s.saved_items("file_tracker")) == 1 and len(s.saved_items("file_tracker_history")) == 50,
    "etl.lease_renewal": lambda s: any("lease_owner" in item for item in s.saved_items("processing_tracker")),
}


@pytest.mark.parametrize("point", sorted(POINTS))
def test_killed_at_a_state_changing_point_then_run_again_applies_every_change_once(
    tmp_path: Path, repo_root: Path, point: str, spark: object
) -> None:
    sandbox = Sandbox(tmp_path, repo_root)
    expected = land_scenario(sandbox, point)
    # a short lease, so the keeper renews it (every third of it) while the table is written
    env = {"ODP_SANDBOX_LEASE_SECONDS": "3"} if point == "etl.lease_renewal" else None
    killed = sandbox.run(fault_point=point, env=env)
    assert killed.killed, killed.output[-3000:]
    assert POINTS[point](sandbox), f"the kill at {point} did not leave what it should"

    rerun = sandbox.run_here(spark)
    assert rerun.ok, rerun.to_json()
    assert rerun.table(ALPHA).status == "completed", rerun.table(ALPHA)
    assert_applied_exactly_once(sandbox, expected)
