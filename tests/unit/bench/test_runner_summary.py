"""Ratios, speedups and the rule that only correct contenders are timed."""

from __future__ import annotations

from bench.check import TableCheck
from bench.contenders.common import WaveMeasurement
from bench.report import text_table
from bench.runner import ContenderResult, ratios, speedup


def result(name: str, status: str, *seconds: float) -> ContenderResult:
    waves = [WaveMeasurement(wave=index, seconds=value, change_rows=1000) for index, value in enumerate(seconds)]
    return ContenderResult(name, name, status, waves=waves, checks=[TableCheck("table_1", status == "ok", 10, 10)])


def test_ratios_and_speedup_against_the_reference() -> None:
    results = {
        "odp": result("odp", "ok", 10.0, 20.0),
        "hoodiestreamer": result("hoodiestreamer", "ok", 30.0, 60.0),
        "naive_rewrite": result("naive_rewrite", "wrong", 1.0, 1.0),
    }
    assert ratios(results, "hoodiestreamer") == {"odp": 0.333, "hoodiestreamer": 1.0, "naive_rewrite": None}
    assert speedup(results, "hoodiestreamer") == 3.0


def test_no_speedup_without_a_timed_reference() -> None:
    results = {"odp": result("odp", "ok", 10.0), "hoodiestreamer": result("hoodiestreamer", "unavailable")}
    assert ratios(results, "hoodiestreamer") == {"odp": None, "hoodiestreamer": None}
    assert speedup(results, "hoodiestreamer") is None


def test_a_wrong_contender_is_reported_without_times() -> None:
    summary = result("naive_rewrite", "wrong", 5.0, 6.0).summary()
    assert summary["status"] == "wrong"
    assert "total_seconds" not in summary
    assert "waves" not in summary
    timed = result("odp", "ok", 5.0, 15.0).summary()
    assert timed["total_seconds"] == 20.0
    assert timed["cdc_seconds"] == 15.0
    assert timed["rows_per_second"] == 100.0
    assert [wave["kind"] for wave in timed["waves"]] == ["full load", "cdc"]


def test_text_table_lists_every_contender_and_the_reason_of_the_untimed() -> None:
    results = {"odp": result("odp", "ok", 10.0, 20.0), "hoodiestreamer": result("hoodiestreamer", "unavailable")}
    results["hoodiestreamer"].reason = "Maven could not fetch it"
    document = {
        "workload": {"tables": 1, "rows": 10, "waves": 1, "change_rows_per_wave": [1000, 1000]},
        "machine": {"cores": 2},
        "contenders": {name: item.summary() for name, item in results.items()},
        "ratio_to_hoodiestreamer": ratios(results, "hoodiestreamer"),
        "ratio_to_hudi_per_table": {},
        "speedup_vs_hoodiestreamer": None,
        "speedup_vs_hudi_per_table": None,
    }
    table = text_table(document)
    odp_row = next(line for line in table.splitlines() if line.startswith("odp "))
    assert odp_row.split() == ["odp", "ok", "10.0", "20.0", "30.0", "67", "0", "0"]  # 2,000 rows / 30 s
    assert "hoodiestreamer: unavailable: Maven could not fetch it" in table
