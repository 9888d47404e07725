"""``python -m bench fleet --small``: ODP and the naive rewrite really run the fleet's four table classes,
every table they leave is checked against the model, and the JSON holds the wave and table metrics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.__main__ import main
from bench.fleet import DAY_COLUMN, FleetSpec

KINDS = {"data", "log", "metadata", "total"}


@pytest.mark.spark
@pytest.mark.slow
def test_small_fleet_run_checks_every_table_and_records_the_metrics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exit_code = main(["fleet", "--small", "--work-dir", str(tmp_path), "--name", "fleet"])
    printed = capsys.readouterr().out
    assert exit_code == 0, printed
    document = json.loads((tmp_path / "results" / "fleet.json").read_text())
    assert (tmp_path / "results" / "fleet.png").stat().st_size > 10_000
    names = FleetSpec(groups=((4, 2_000),)).table_names
    assert names == ["fact_2k_01", "dimension_2k_02", "dimension_zipf_2k_03", "event_2k_04"]
    assert document["kind"] == "fleet"
    skipped = document["workload"]["skipped_per_wave"]["1"]
    assert len(skipped) == 1  # round(30% of 4)
    landed = sorted(set(names) - set(skipped))

    for name in ("odp", "naive_rewrite"):
        result = document["contenders"][name]
        assert result["status"] == "ok", (name, result["reason"])
        assert [check["table"] for check in result["checks"]] == names
        assert all(check["ok"] for check in result["checks"])
        load, wave = result["waves"]
        assert sorted(wave["tables"]) == landed  # a table without a file is not in the wave
        assert wave["bytes_written"]["total"] == sum(
            table["bytes_written"]["total"] for table in wave["tables"].values()
        )
        assert set(wave["bytes_written"]) == KINDS
        assert wave["bytes_written"]["data"] > 0
        assert wave["write_amplification"] == round(wave["bytes_written"]["total"] / wave["change_bytes"], 2)
        assert wave["hadoop_statistics"]["file"]["bytes_read"] > 0  # read through the JVM gateway
        assert wave["s3_requests"]["put"] == sum(table["s3_put_requests"] for table in wave["tables"].values()) > 0
        for table in wave["tables"].values():
            assert table["seconds"] > 0
            assert table["change_rows"] > 0
        assert load["change_rows"] == 4 * 2_000
        assert result["table_costs"]["all"]["points"] == len(landed)
    odp_tables = tmp_path / "odp" / "tables" / "taxi_trips_raw"
    assert len(list((odp_tables / "fact_2k_01").glob(f"{DAY_COLUMN}=*"))) == 3 + 1  # the history, the wave's day
    assert not list((odp_tables / "dimension_2k_02").glob(f"{DAY_COLUMN}=*"))
    assert document["contenders"]["naive_rewrite"]["waves"][1]["files_touched"] > 0
    assert "fixed s/table" in printed
