"""bench.warm_jvm (--warm-jvm): one job process serves every wave; and --repeats' alternating order and medians."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from bench.fleet_runner import over_repeats, repeat_orders
from bench.runner import make_contender
from bench.warm_jvm import WarmJob, job_arguments, serve


def test_serve_answers_each_spec_line_and_a_failing_wave_does_not_end_it(tmp_path: Path) -> None:
    good, bad = tmp_path / "a.json", tmp_path / "b.json"

    def run_wave(path: Path) -> int:
        if path == bad:
            raise RuntimeError("a wave's own failure")
        return 0

    out = io.StringIO()
    assert serve(run_wave, io.StringIO(f"{good}\n{bad}\n{good}\n"), out) == 0
    assert out.getvalue() == "done 0\ndone 1\ndone 0\n"


def test_a_warm_job_is_one_process_across_waves(tmp_path: Path) -> None:
    waves = [tmp_path / f"wave_{n}.json" for n in range(3)]
    for path, status in zip(waves, ("0", "0", "1"), strict=True):
        path.write_text(status)
    job = WarmJob("tests.support.warm_echo_job", tmp_path / "warm.log")
    steps = [job.run_wave(path) for path in waves]
    assert [step.returncode for step in steps] == [0, 0, 1]
    assert len({step.command for step in steps}) == 1
    assert job.close() == 0


def test_repeats_alternate_the_contenders_order_and_report_medians() -> None:
    assert repeat_orders(["odp", "naive_rewrite"], 3) == [
        ["odp", "naive_rewrite"],
        ["naive_rewrite", "odp"],
        ["odp", "naive_rewrite"],
    ]
    with pytest.raises(ValueError, match="at least 1"):
        repeat_orders(["odp"], 0)
    runs = [
        {"targets": {"cdc_wall_odp_over_naive": wall, "cdc_bytes_written_odp_over_naive": 0.05}}
        for wall in (0.9, 0.6, 0.7)
    ]
    assert over_repeats(runs) == {
        "cdc_wall_odp_over_naive_repeats": [0.9, 0.6, 0.7],
        "cdc_wall_odp_over_naive": 0.7,
        "cdc_bytes_written_odp_over_naive_repeats": [0.05, 0.05, 0.05],
        "cdc_bytes_written_odp_over_naive": 0.05,
    }


def test_warm_jvm_is_refused_for_a_contender_with_a_process_per_table(tmp_path: Path) -> None:
    assert make_contender("odp", tmp_path, warm_jvm=True).warm_jvm
    with pytest.raises(ValueError, match="starts a process per table"):
        make_contender("hudi_per_table", tmp_path, warm_jvm=True)


def test_a_job_takes_one_spec_file_or_serves_and_refuses_neither(capsys: pytest.CaptureFixture[str]) -> None:
    assert job_arguments("job", ["wave-1.json"]).spec == Path("wave-1.json")
    assert job_arguments("job", ["--serve"]).serve
    with pytest.raises(SystemExit):
        job_arguments("job", [])
    assert "a spec file, or --serve" in capsys.readouterr().err
