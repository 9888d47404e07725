"""Kill -9 tests: ``python -m sandbox run`` as a child process, SIGKILLed (process group) at a named
point, then run again: every table ends right, nothing is lost, nothing is applied twice.

The tables are read back with hudi-rs (an independent reader, no JVM in the test process); the
expected rows are written out by hand.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from odp.naming import TrackerTableNames
from tests.e2e.kill_harness import (
    ChildRun,
    completed_instants,
    inflight_instant,
    run_child,
    sandbox_run_argv,
    spark_write_in_progress,
)
from tests.unit.etl.conftest import hudi_rs_rows

pytestmark = pytest.mark.slow  # each test starts Spark in two to four child processes

CDC = pa.schema([("Op", pa.string()), ("SEQ", pa.string()), ("ID", pa.int64()), ("NAME", pa.string())])
ALPHA = "shop.app.alpha"
BETA = "shop.app.beta"
TABLES = {
    "source": "shop",
    "format": "dms",
    "defaults": {"primary_key": ["id"], "ordering_column": "seq", "cadence": "every_10_minutes",
                 "database": "shop_raw"},
    "tables": [{"schema": "app", "table": "alpha"}, {"schema": "app", "table": "beta"}],
}  # fmt: skip


def seq(n: int) -> str:
    """A DMS change sequence ($AR_H_CHANGE_SEQ form: commit time, then a zero-padded counter)."""
    return f"20260101000000{n:021d}"


class Sandbox:
    """A config folder, a staging folder and a lake, and the child runs over them."""

    def __init__(self, root: Path, repo_root: Path) -> None:
        self.root = root
        self.config = root / "config"
        self.staging = root / "staging"
        self.lake = root / "lake"
        (self.config / "tables").mkdir(parents=True)
        for name in ("environments.yaml", "cadences.yaml"):
            shutil.copy(repo_root / "config" / name, self.config / name)
        (self.config / "tables" / "shop.yaml").write_text(json.dumps(TABLES))
        self.staging.mkdir()
        self.runs = 0

    def land(self, table: str, name: str, rows: list[tuple[str, int, int, str]]) -> None:
        path = self.staging / "shop" / "app" / table / name
        path.parent.mkdir(parents=True, exist_ok=True)
        records = [{"Op": op, "SEQ": seq(n), "ID": key, "NAME": value} for op, n, key, value in rows]
        pq.write_table(pa.Table.from_pylist(records, schema=CDC), path)

    def table_dir(self, table: str) -> Path:
        return self.lake / "raw" / "shop_raw" / table

    def tombstone_dir(self, table: str) -> Path:
        return self.lake / "raw" / "shop_raw" / "_odp_tombstones" / table

    def run(self, **kill: Any) -> ChildRun:
        self.runs += 1
        argv = sandbox_run_argv(self.config, self.staging, self.lake)
        return run_child(argv, output=self.root / f"run-{self.runs}.log", **kill)

    def report(self) -> dict[str, Any]:
        return json.loads((self.lake / "report.json").read_text())

    def rows(self, table: str) -> list[tuple]:
        return hudi_rs_rows(str(self.table_dir(table)), ["id", "name"])

    def saved_items(self, logical: str) -> list[dict[str, Any]]:
        physical = TrackerTableNames.for_environment("sandbox").as_dict()[logical]
        path = self.lake / "_sandbox" / "dynamodb" / f"{physical}.json"
        return json.loads(path.read_text()) if path.is_file() else []


def statuses(report: dict[str, Any]) -> dict[str, tuple[str, int]]:
    return {t["table_id"]: (t["status"], t["files"]) for t in report["tables"] if t["table_id"].startswith("shop.")}


@pytest.fixture
def sandbox(tmp_path: Path, repo_root: Path) -> Sandbox:
    return Sandbox(tmp_path, repo_root)


def land_first_round(sandbox: Sandbox) -> None:
    sandbox.land("alpha", "20260101-000001.parquet", [("I", 1, 1, "ann"), ("I", 2, 2, "bob")])
    sandbox.land("alpha", "20260101-000002.parquet", [("U", 3, 1, "ann-2"), ("D", 4, 2, "bob")])
    sandbox.land("beta", "20260101-000001.parquet", [("I", 1, 10, "x"), ("I", 2, 11, "y")])


def assert_first_round_applied_once(sandbox: Sandbox) -> None:
    assert sandbox.rows("alpha") == [(1, "ann-2")]
    assert sandbox.rows("beta") == [(10, "x"), (11, "y")]
    assert sandbox.saved_items("file_tracker") == []  # every file processed, none left landed
    assert len(sandbox.saved_items("file_tracker_history")) == 3


def test_a_run_killed_after_the_file_manager_loses_nothing_and_applies_nothing_twice(sandbox: Sandbox) -> None:
    land_first_round(sandbox)
    killed = sandbox.run(fault_point="sandbox.after_file_manager")
    assert killed.killed, killed.output[-3000:]
    # the registrations were saved as they were written, before the kill
    assert len(sandbox.saved_items("file_tracker")) == 3
    assert not sandbox.table_dir("alpha").exists()

    rerun = sandbox.run()
    assert rerun.returncode == 0, rerun.output[-3000:]
    assert statuses(sandbox.report()) == {ALPHA: ("completed", 2), BETA: ("completed", 1)}
    assert_first_round_applied_once(sandbox)
    commits = (completed_instants(sandbox.table_dir("alpha")), completed_instants(sandbox.table_dir("beta")))

    again = sandbox.run()
    assert again.returncode == 0, again.output[-3000:]
    assert sandbox.report()["announced_files"] == 0
    assert statuses(sandbox.report()) == {ALPHA: ("not_run", 0), BETA: ("not_run", 0)}
    assert (completed_instants(sandbox.table_dir("alpha")), completed_instants(sandbox.table_dir("beta"))) == commits
    assert_first_round_applied_once(sandbox)


def test_a_run_killed_during_the_first_commit_of_a_new_table_recovers_on_the_next_run(sandbox: Sandbox) -> None:
    land_first_round(sandbox)
    killed = sandbox.run(kill_when=inflight_instant(sandbox.table_dir("alpha")))
    assert killed.killed, killed.output[-3000:]
    # what the kill left: a created table with an instant under way and none completed
    assert (sandbox.table_dir("alpha") / ".hoodie" / "hoodie.properties").is_file()
    assert completed_instants(sandbox.table_dir("alpha")) == []

    rerun = sandbox.run()  # the lease of the killed run is taken over at once: its job run is gone
    assert rerun.returncode == 0, rerun.output[-3000:]
    assert statuses(sandbox.report())[ALPHA] == ("completed", 2)
    assert_first_round_applied_once(sandbox)
    assert len(completed_instants(sandbox.table_dir("alpha"))) == 1


def test_a_run_killed_while_writing_its_tombstones_recovers_on_the_next_run(
    sandbox: Sandbox,
) -> None:
    sandbox.land("alpha", "20260101-000001.parquet", [("I", 1, 1, "ann"), ("I", 2, 2, "bob")])
    # objects that are not applied: each is named in the report with its reason
    (sandbox.staging / "shop" / "app" / "alpha" / "empty.parquet").write_bytes(b"")
    (sandbox.staging / "shop" / "app" / "alpha" / "notes.txt").write_text("not data")
    (sandbox.staging / "crm" / "public" / "customers").mkdir(parents=True)
    (sandbox.staging / "crm" / "public" / "customers" / "1.parquet").write_bytes(b"PAR1")
    first = sandbox.run()
    assert first.returncode == 0, first.output[-3000:]
    assert not sandbox.tombstone_dir("alpha").exists()  # no delete yet: no tombstones
    assert sandbox.report()["skipped_files"] == {
        "crm/public/customers/1.parquet": (
            "table crm.public.customers has no active configuration: kept as unregistered in file_tracker"
        ),
        "shop/app/alpha/empty.parquet": "skipped by the File Manager: zero-byte object",
        "shop/app/alpha/notes.txt": (
            "skipped by the File Manager: unknown suffix on 'notes.txt' (expected one of .parquet, .csv, .csv.gz, "
            ".json, .jsonl, .json.gz, .jsonl.gz, .gz, or no extension)"
        ),
    }
    assert "not applied: shop/app/alpha/empty.parquet: skipped by the File Manager: zero-byte object" in first.output

    sandbox.land("alpha", "20260101-000002.parquet", [("D", 5, 1, "ann"), ("U", 6, 2, "bob-2")])
    log = sandbox.tombstone_dir("alpha") / "log"
    killed = sandbox.run(kill_when=spark_write_in_progress(log))
    assert killed.killed, killed.output[-3000:]
    assert list(log.glob("*/*.parquet")) == []  # the write never committed: nothing readers would see
    assert sandbox.rows("alpha") == [(1, "ann"), (2, "bob")]

    rerun = sandbox.run()
    assert rerun.returncode == 0, rerun.output[-3000:]
    assert statuses(sandbox.report())[ALPHA] == ("completed", 1)
    assert sandbox.rows("alpha") == [(2, "bob-2")]
    assert len(list(log.glob("*/*.parquet"))) == 1

    # the rerun's tombstone holds the delete: a late change of key 1, older than it, stays out
    sandbox.land("alpha", "20260101-000000.parquet", [("U", 3, 1, "ann-stale")])
    late = sandbox.run()
    assert late.returncode == 0, late.output[-3000:]
    assert sandbox.rows("alpha") == [(2, "bob-2")]
