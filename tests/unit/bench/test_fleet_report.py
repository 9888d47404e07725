"""A fleet document from known measurements: per-table figures, fixed-cost fit, targets, chart and text."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.check import TableCheck
from bench.contenders.common import TableMeasurement, WaveMeasurement
from bench.fleet_runner import fleet_targets, over_repeats
from bench.metrics import TableIO
from bench.report import fleet_text, write_fleet_chart
from bench.runner import ContenderResult


def io(data: int, log: int = 0, metadata: int = 0) -> TableIO:
    return TableIO(bytes_written={"data": data, "log": log, "metadata": metadata}, files_written=2)


def contender(name: str, seconds: list[float], per_byte: int) -> ContenderResult:
    """Waves 0..n; in each CDC wave table ``a`` has 10 x wave changes, table ``b`` 100 x wave: 1 s + 0.01 s each."""
    waves = []
    for number, wave_seconds in enumerate(seconds):
        wave = WaveMeasurement(wave=number, seconds=wave_seconds, cpu_seconds=wave_seconds * 1.5, change_rows=1)
        for table, changes in (("a", 10 * number), ("b", 100 * number)):
            measured = TableMeasurement(
                change_rows=changes or 1_000,
                change_bytes=(changes or 1_000) * 100,
                files=1,
                seconds=1.0 + 0.01 * changes,
                io=io(per_byte * changes, 50, 25),
            )
            wave.tables[table] = measured
            wave.io.add(measured.io)
            wave.change_bytes += measured.change_bytes
        wave.staging_bytes = wave.change_bytes
        wave.hadoop = {"file": {"bytes_read": wave.change_bytes + 4_000, "read_ops": 0}}
        waves.append(wave)
    checks = [TableCheck("a", True, 1, 1), TableCheck("b", True, 1, 1)]
    return ContenderResult(name, name, "ok", waves=waves, checks=checks)


@pytest.fixture
def document() -> dict:
    odp = contender("odp", [30.0, 10.0, 10.0, 11.0, 10.0, 10.0, 12.0], per_byte=150)
    naive = contender("naive_rewrite", [20.0, 30.0, 30.0, 31.0, 30.0, 30.0, 32.0], per_byte=3_000)
    return {
        "kind": "fleet",
        "workload": {"tables": [{"name": "a", "rows": 10_000}, {"name": "b", "rows": 200_000}]},
        "odp_table_concurrency": 4,
        "machine": {"cores": 2, "spark_master": "local[2]"},
        "contenders": {"odp": odp.summary(), "naive_rewrite": naive.summary()},
    }


def test_each_wave_and_table_carries_its_bytes_amplification_and_seconds(document: dict) -> None:
    wave = document["contenders"]["odp"]["waves"][2]
    table = wave["tables"]["b"]
    assert table["bytes_written"] == {"data": 30_000, "log": 50, "metadata": 25, "total": 30_075}
    assert table["write_amplification"] == 1.5  # 30,075 bytes written for 20,000 bytes of changes
    assert table["seconds"] == 3.0
    assert wave["bytes_written"]["total"] == 30_075 + 3_075
    assert wave["table_bytes_read_estimate"] == 4_000
    assert wave["s3_requests"]["get_or_head"] is None


def test_fixed_cost_and_cost_per_change_per_table_and_overall(document: dict) -> None:
    costs = document["contenders"]["odp"]["table_costs"]
    for name in ("a", "b", "all"):
        assert costs[name]["fixed_seconds"] == pytest.approx(1.0)
        assert costs[name]["per_change_seconds"] == pytest.approx(0.01)
    assert costs["all"]["points"] == 12  # 2 tables x 6 CDC waves


def test_fleet_targets_and_longevity_ratio(document: dict) -> None:
    targets = fleet_targets(document)
    assert targets["cdc_wall_odp_over_naive"] == round(63 / 183, 3)
    odp_bytes = document["contenders"]["odp"]["cdc_bytes_written"]
    naive_bytes = document["contenders"]["naive_rewrite"]["cdc_bytes_written"]
    assert targets["cdc_bytes_written_odp_over_naive"] == round(odp_bytes / naive_bytes, 3)
    assert targets["last_wave_over_wave_5"] == {"odp": 1.2, "naive_rewrite": round(32 / 30, 3)}
    assert targets["cdc_wall_target"] == 0.5  # issue 27: a JVM a wave
    document["warm_jvm"] = True
    assert fleet_targets(document)["cdc_wall_target"] == 0.7  # issue 47: warm JVMs on both sides


def test_a_small_tables_fixed_cost_is_its_fit_over_the_tables_written_at_once(document: dict) -> None:
    """Issue 47's 1.0 s: the smallest tables' median fitted fixed cost, over 4 tables at once for ODP; the naive
    rewrite writes one table after another. A larger table's fit is no part of it."""
    document["contenders"]["odp"]["table_costs"]["a"]["fixed_seconds"] = 4.4
    document["contenders"]["odp"]["table_costs"]["b"]["fixed_seconds"] = 9.0
    targets = fleet_targets(document)
    assert targets["small_table_seconds"] == {"odp": 1.1, "naive_rewrite": 1.0}
    assert targets["small_table_seconds_target"] == 1.0

    document["contenders"]["odp"]["table_costs"]["a"]["fixed_seconds"] = 3.6
    again = fleet_targets(document)
    runs = [{"targets": targets}, {"targets": again}, {"targets": again}]
    repeats = over_repeats(runs)
    assert repeats["small_table_seconds_repeats"] == [
        targets["small_table_seconds"],
        *[again["small_table_seconds"]] * 2,
    ]
    assert repeats["small_table_seconds"] == {"odp": 0.9, "naive_rewrite": 1.0}  # the median repeat's


def test_the_chart_and_the_text(document: dict, tmp_path: Path) -> None:
    chart = write_fleet_chart(document, tmp_path / "fleet.png")
    assert chart is not None
    assert chart.stat().st_size > 20_000
    text = fleet_text(document)
    assert "odp: waves s [30.0, 10.0, 10.0, 11.0, 10.0, 10.0, 12.0], onboarding 30.0 s" in text
    assert "CDC 63.0 s" in text
    assert "fixed s/table 1.0" in text


def test_the_text_names_odp_s_merge_on_read_classes(document: dict) -> None:
    assert fleet_text(document).splitlines()[0] == "fleet run, 2 tables"
    document["workload"]["odp_merge_on_read_classes"] = ["dimension", "dimension_zipf"]
    assert fleet_text(document).splitlines()[0] == "fleet run, 2 tables; ODP MERGE_ON_READ: dimension, dimension_zipf"
    document["workload"]["odp_merge_on_read_from_rows"] = 200_000  # --merge-on-read-from
    assert fleet_text(document).splitlines()[0] == (
        "fleet run, 2 tables; ODP MERGE_ON_READ: dimension, dimension_zipf, tables of at least 200000 rows"
    )
    del document["workload"]["odp_merge_on_read_from_rows"]
    document["warm_jvm"] = True  # --warm-jvm (issue 47)
    assert fleet_text(document).splitlines()[0].endswith(", warm JVMs (one a contender across waves)")


def test_onboarding_is_reported_beside_the_cdc_waves_in_the_json_the_targets_and_the_text(document: dict) -> None:
    """Issue 47 item 4: the first wave (every table's first load) has its own figures, never mixed into CDC's."""
    odp, naive = document["contenders"]["odp"], document["contenders"]["naive_rewrite"]
    assert (odp["onboarding_seconds"], naive["onboarding_seconds"]) == (30.0, 20.0)  # wave 0 of each
    assert odp["onboarding_cpu_seconds"] == 45.0
    # wave 0: tables a and b with 0 changes each: nothing but their 50 + 25 bytes of log and metadata
    assert odp["onboarding_bytes_written"] == naive["onboarding_bytes_written"] == 2 * 75
    targets = fleet_targets(document)
    assert targets["onboarding_wall_odp_over_naive"] == 1.5
    assert targets["onboarding_bytes_written_odp_over_naive"] == 1.0
    text = fleet_text(document)
    assert (
        "odp: waves s [30.0, 10.0, 10.0, 11.0, 10.0, 10.0, 12.0], onboarding 30.0 s, onboarding bytes written 150, CDC 63.0 s"
        in text
    )
    assert "naive_rewrite: waves s [20.0, 30.0, 30.0, 31.0, 30.0, 30.0, 32.0], onboarding 20.0 s" in text
