"""``python -m bench run --small``: every contender really runs, and every table it leaves is checked.

One table: ``hudi_per_table`` starts a JVM per table per wave, and ODP's one application for every table of a wave is
the fleet smoke run's subject. The naive rewrite runs in tests/unit/bench/test_fleet_smoke.py (its tables checked
there): here it would only add two more Spark JVMs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.__main__ import main, parser
from bench.contenders.odp import OdpFileProcessor
from bench.contenders.odp_job import table_configs
from bench.runner import make_contender
from bench.workload import WaveFiles
from odp.config.models import IndexKind

MUST_RUN = ("odp", "hudi_per_table")


@pytest.mark.spark
@pytest.mark.slow
def test_small_run_checks_every_contenders_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    contenders = "odp,hoodiestreamer,hudi_per_table"
    exit_code = main(
        ["run", "--small", "--tables", "1", "--contenders", contenders, "--work-dir", str(tmp_path), "--name", "smoke"]
    )
    printed = capsys.readouterr().out
    document = json.loads((tmp_path / "results" / "smoke.json").read_text())
    assert (tmp_path / "results" / "smoke.png").stat().st_size > 10_000
    assert exit_code == 0, printed

    contenders = document["contenders"]
    assert list(contenders) == ["odp", "hoodiestreamer", "hudi_per_table"]
    for name in MUST_RUN:
        result = contenders[name]
        assert result["status"] == "ok", (name, result["reason"])
        assert [check["table"] for check in result["checks"]] == ["table_1"]
        assert all(check["ok"] for check in result["checks"])
        # 1,000 - 20 deleted + 50 inserted rows, counted from the model independently of the run
        assert [check["expected_rows"] for check in result["checks"]] == [1030]
        assert [wave["change_rows"] for wave in result["waves"]] == [1000, 100 + 20 + 50 + 5 + 5]
        assert all(wave["seconds"] > 1 and wave["files_written"] > 0 for wave in result["waves"])
        assert result["peak_rss_mb"] > 200  # a JVM was measured, not just the Python launcher
        assert all(wave["cpu_seconds"] > 1 and 0 < wave["cpu_utilisation"] <= 1.05 for wave in result["waves"])
    assert contenders["odp"]["processes"] == 2  # one application per wave
    assert contenders["hudi_per_table"]["processes"] == 2  # one per table per wave
    streamer = contenders["hoodiestreamer"]
    if streamer["status"] != "ok":
        # only acceptable when Maven cannot deliver the jar here; never silently replaced
        assert streamer["status"] == "unavailable"
        assert "hudi-utilities-slim-bundle_2.12:1.0.2" in streamer["reason"]
        assert document["speedup_vs_hoodiestreamer"] is None
    else:
        assert all(check["ok"] for check in streamer["checks"])
        assert document["speedup_vs_hoodiestreamer"] > 0
    assert document["speedup_vs_hudi_per_table"] == pytest.approx(
        contenders["hudi_per_table"]["total_seconds"] / contenders["odp"]["total_seconds"], rel=0.01
    )
    assert "speedup_vs_hoodiestreamer" in printed


def test_the_bucket_index_option_reaches_the_table_settings_odp_is_run_with(tmp_path: Path) -> None:
    """``bench run --index-buckets N``: every table of ODP's wave spec gets the table setting ``index_buckets: N``
    (``odp_job`` loads these settings into its table_config and runs the File Processor; that a bucket index table
    is written and read right, one bucket per partition here: tests/unit/etl/test_file_processor_index_and_compaction.py).
    Without the option, the record level index."""
    args = parser().parse_args(["run", "--small", "--contenders", "odp", "--index-buckets", "1"])
    assert args.index_buckets == 1
    files = [WaveFiles(table, 1, [f"{table}/1.parquet"], 10, partition="vendorid") for table in ("table_1", "table_2")]
    for buckets, expected in ((args.index_buckets, (1, IndexKind.RECORD)), (None, (None, IndexKind.RECORD))):
        contender = make_contender("odp", tmp_path, index_buckets=buckets)
        assert isinstance(contender, OdpFileProcessor)
        spec = json.loads(json.dumps(contender.wave_spec(1, files, tmp_path / "staging")))  # as written for the child
        configs = table_configs(spec)
        assert [config.table for config in configs] == ["table_1", "table_2"]
        assert {(config.index_buckets, config.index) for config in configs} == {expected}
        assert all(config.partition_by == ("vendorid",) for config in configs)
