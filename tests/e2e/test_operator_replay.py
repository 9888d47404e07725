"""The operator CLI on a real sandbox: replay a table from scratch, then retry it on local Spark."""

from __future__ import annotations

from pathlib import Path

import pytest

from odp.__main__ import main
from tests.support.kill_harness import completed_instants
from tests.support.kill_sandbox import ALPHA, Sandbox, land_first_round

pytestmark = [pytest.mark.slow, pytest.mark.spark]  # a sandbox run, then the job, both in this process


def test_replay_rebuilds_a_table_from_its_processed_files_and_retry_applies_them(
    tmp_path: Path, repo_root: Path, spark, aws_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    sandbox = Sandbox(tmp_path, repo_root)
    land_first_round(sandbox)
    first = sandbox.run_here(spark)
    assert first.ok, first.to_json()
    assert sandbox.rows("alpha") == [(1, "ann-2")]
    (original,) = [t for t in sandbox.report()["tables"] if t["table_id"] == ALPHA]
    target = ["--sandbox", str(sandbox.lake), "--staging", str(sandbox.staging)]

    assert main([*target, "replay", ALPHA]) == 0
    plan = capsys.readouterr().out
    raw = f"file://{sandbox.lake / 'raw'}"
    assert plan == (
        f"replay {ALPHA} from scratch\n"
        f"  take the lease of {ALPHA} (refused while a run holds it)\n"
        "  2 processed file(s): file_tracker_history -> file_tracker, landed, replay=true\n"
        "  0 staged file(s) never registered -> landed\n"
        "  0 landed file(s) stay landed\n"
        f"  delete {raw}/shop_raw/alpha\n"
        f"  delete {raw}/shop_raw/_odp_tombstones/alpha\n"
        "  release the lease; the next run (or python -m odp retry) rebuilds the table from every landed file\n"
        "nothing changed: run again with --yes to do this\n"
    )
    assert sandbox.table_dir("alpha").is_dir()

    assert main([*target, "replay", ALPHA, "--yes"]) == 0
    done = capsys.readouterr().out.splitlines()
    assert done[-2] == "done: 2 processed file(s) landed again, 0 staged file(s) registered"
    assert done[-1].startswith("done: deleted ")
    assert done[-1].endswith(f"the next run rebuilds {ALPHA}")
    assert not sandbox.table_dir("alpha").exists()
    assert not sandbox.tombstone_dir("alpha").exists()
    landed = sandbox.saved_items("file_tracker")
    assert sorted((i["key"]["S"], i["status"]["S"], i["replay"]["BOOL"]) for i in landed) == [
        ("shop/app/alpha/20260101-000001.parquet", "landed", True),
        ("shop/app/alpha/20260101-000002.parquet", "landed", True),
    ]
    assert [i["table_id"]["S"] for i in sandbox.saved_items("file_tracker_history")] == ["shop.app.beta"]

    assert main([*target, "retry", ALPHA, "--yes"]) == 0
    out = capsys.readouterr().out
    # the rebuild commits what the original run committed (key 2's delete reaches Hudi in both)
    counts = f"+{original['inserts']} ~{original['updates']} -{original['deletes']}"
    assert counts == "+1 ~0 -1"
    assert f"done: {ALPHA}: 2 file(s), {counts}, " in out, out
    assert sandbox.rows("alpha") == [(1, "ann-2")]
    assert sandbox.saved_items("file_tracker") == []
    assert len(completed_instants(sandbox.table_dir("alpha"))) == 1
