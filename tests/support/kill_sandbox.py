"""A two-table sandbox that the kill tests run, kill and run again, and what its report says per table."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from odp.config.loader import load_config
from odp.naming import TrackerTableNames
from sandbox.account import SandboxLayout
from sandbox.report import RunReport
from sandbox.runner import run_sandbox
from tests.support.kill_harness import (
    ChildRun,
    run_child,
    sandbox_run_argv,
)
from tests.support.lake import hudi_rs_rows

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
        """``python -m sandbox run`` in a child process, to be killed (``kill``: :func:`run_child`'s arguments)."""
        self.runs += 1
        argv = sandbox_run_argv(self.config, self.staging, self.lake)
        return run_child(argv, output=self.root / f"run-{self.runs}.log", **kill)

    def run_here(self, spark: Any) -> RunReport:
        """What ``python -m sandbox run`` does, in this process on the test session's Spark: a run that is not
        killed needs no JVM of its own. The run reads every piece of state from the folders (the tracker tables,
        the lake, the staging files), as a new process would; its report is written where the child's would be."""
        self.runs += 1
        config = load_config(self.config)
        # a new process starts with an empty session catalog: forget the tables an earlier run of this session
        # registered (another region's lake, another test's), so this run registers its own; the entries only, the
        # tables are external and their data stays
        for database in sorted({table.database for table in config.tables}):
            spark.sql(f"DROP DATABASE IF EXISTS `{database}` CASCADE")
        layout = SandboxLayout(lake=self.lake.resolve(), staging=self.staging.resolve())
        report = run_sandbox(config, layout, spark, refresh_datasets=True)
        report.write(self.lake / "report.json")
        return report

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


def land_first_round(sandbox: Sandbox) -> None:
    sandbox.land("alpha", "20260101-000001.parquet", [("I", 1, 1, "ann"), ("I", 2, 2, "bob")])
    sandbox.land("alpha", "20260101-000002.parquet", [("U", 3, 1, "ann-2"), ("D", 4, 2, "bob")])
    sandbox.land("beta", "20260101-000001.parquet", [("I", 1, 10, "x"), ("I", 2, 11, "y")])
