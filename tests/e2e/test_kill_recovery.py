"""Kill -9 tests: ``python -m sandbox run`` as a child process, SIGKILLed (process group) at a named
point, then run again (in this process, on the test session's Spark: only the killed run needs a JVM of its own):
every table ends right, nothing is lost, nothing is applied twice.

The tables are read back with hudi-rs (an independent reader, no JVM in the test process); the
expected rows are written out by hand.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sandbox.report import render_report
from tests.support.kill_harness import (
    completed_instants,
    inflight_instant,
    spark_write_in_progress,
)
from tests.support.kill_sandbox import ALPHA, Sandbox, land_first_round, statuses

pytestmark = [pytest.mark.slow, pytest.mark.spark]  # each test starts Spark in a child process, to kill it


@pytest.fixture
def sandbox(tmp_path: Path, repo_root: Path) -> Sandbox:
    return Sandbox(tmp_path, repo_root)


def assert_first_round_applied_once(sandbox: Sandbox) -> None:
    assert sandbox.rows("alpha") == [(1, "ann-2")]
    assert sandbox.rows("beta") == [(10, "x"), (11, "y")]
    assert sandbox.saved_items("file_tracker") == []  # every file processed, none left landed
    assert len(sandbox.saved_items("file_tracker_history")) == 3


def test_a_run_killed_during_the_first_commit_of_a_new_table_recovers_on_the_next_run(
    sandbox: Sandbox, spark: object
) -> None:
    land_first_round(sandbox)
    killed = sandbox.run(kill_when=inflight_instant(sandbox.table_dir("alpha")))
    assert killed.killed, killed.output[-3000:]
    # what the kill left: a created table with an instant under way and none completed
    assert (sandbox.table_dir("alpha") / ".hoodie" / "hoodie.properties").is_file()
    assert completed_instants(sandbox.table_dir("alpha")) == []

    rerun = sandbox.run_here(spark)  # the lease of the killed run is taken over at once: its job run is gone
    assert rerun.ok, rerun.to_json()
    assert statuses(sandbox.report())[ALPHA] == ("completed", 2)
    assert_first_round_applied_once(sandbox)
    assert len(completed_instants(sandbox.table_dir("alpha"))) == 1


def test_a_run_killed_while_writing_its_tombstones_recovers_on_the_next_run(sandbox: Sandbox, spark: object) -> None:
    sandbox.land("alpha", "20260101-000001.parquet", [("I", 1, 1, "ann"), ("I", 2, 2, "bob")])
    # objects that are not applied: each is named in the report with its reason
    (sandbox.staging / "shop" / "app" / "alpha" / "empty.parquet").write_bytes(b"")
    (sandbox.staging / "shop" / "app" / "alpha" / "notes.txt").write_text("not data")
    (sandbox.staging / "crm" / "public" / "customers").mkdir(parents=True)
    (sandbox.staging / "crm" / "public" / "customers" / "1.parquet").write_bytes(b"PAR1")
    first = sandbox.run_here(spark)
    assert first.ok, first.to_json()
    assert not sandbox.tombstone_dir("alpha").exists()  # no delete yet: no tombstones
    assert sandbox.report()["skipped_files"] == {
        "crm/public/customers/1.parquet": (
            "table crm.public.customers has no entry and no include or from glob of its source matches it: "
            "kept as unmatched in file_tracker (python -m odp status --unmatched)"
        ),
        "shop/app/alpha/empty.parquet": "skipped by the File Manager: zero-byte object",
        "shop/app/alpha/notes.txt": (
            "skipped by the File Manager: unknown suffix on 'notes.txt' (expected one of .parquet, .csv, .csv.gz, "
            ".json, .jsonl, .json.gz, .jsonl.gz, .gz, or no extension)"
        ),
    }
    printed = render_report(first)
    assert "not applied: shop/app/alpha/empty.parquet: skipped by the File Manager: zero-byte object" in printed

    sandbox.land("alpha", "20260101-000002.parquet", [("D", 5, 1, "ann"), ("U", 6, 2, "bob-2")])
    log = sandbox.tombstone_dir("alpha") / "log"
    killed = sandbox.run(kill_when=spark_write_in_progress(log))
    assert killed.killed, killed.output[-3000:]
    assert list(log.glob("*/*.parquet")) == []  # the write never committed: nothing readers would see
    assert sandbox.rows("alpha") == [(1, "ann"), (2, "bob")]

    rerun = sandbox.run_here(spark)
    assert rerun.ok, rerun.to_json()
    assert statuses(sandbox.report())[ALPHA] == ("completed", 1)
    assert sandbox.rows("alpha") == [(2, "bob-2")]
    (tombstones,) = log.glob("*/*.parquet")
    # the rerun wrote the delete's tombstone (that a tombstone keeps an older change out: test_file_processor_tombstones)
    assert pq.read_table(tombstones).column("id").to_pylist() == [1]
