"""The sandbox run's report lists every table the run wrote: the configured ones and those an include rule onboarded
at their first file (the File Manager's table_config item), as the Batch Manager plans them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.kill_sandbox import ALPHA, TABLES, Sandbox
from tests.support.lake import hudi_rs_rows

GAMMA = "shop.app.gamma"


@pytest.mark.spark
def test_a_table_an_include_rule_onboarded_is_in_the_report(tmp_path: Path, repo_root: Path, spark: object) -> None:
    sandbox = Sandbox(tmp_path, repo_root)
    with_include = {**TABLES, "include": ["app.*"], "tables": [{"schema": "app", "table": "alpha"}]}
    (sandbox.config / "tables" / "shop.yaml").write_text(json.dumps(with_include))
    sandbox.land("alpha", "20260101-000001.parquet", [("I", 1, 1, "ann")])
    sandbox.land("gamma", "20260101-000001.parquet", [("I", 1, 7, "gus"), ("I", 2, 8, "gil")])

    report = sandbox.run_here(spark)

    assert report.ok, report.to_json()
    lines = {table.table_id: table for table in report.tables}
    assert [table_id for table_id in lines if table_id.startswith("shop.")] == [ALPHA, GAMMA]  # configured first
    gamma = lines[GAMMA]
    assert (gamma.status, gamma.run.files, gamma.run.inserts) == ("completed", 1, 2), gamma
    assert hudi_rs_rows(gamma.base_path.removeprefix("file://"), ["id", "name"]) == [(7, "gus"), (8, "gil")]
    assert GAMMA in {line["table_id"] for line in sandbox.report()["tables"]}  # the JSON report too
