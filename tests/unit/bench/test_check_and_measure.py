"""The checker catches wrong tables; the measurement sees the memory and CPU time of a child and its grandchildren."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from bench.check import compare, read_parquet_table
from bench.contenders.hoodiestreamer import streamer_command
from bench.measure import (
    KEEP_LOCAL_JVM_OPTIONS_ENV,
    LOCAL_JVM_OPTIONS_ENV,
    child_env,
    files_written,
    level_jvm_options,
    run_step,
    snapshot,
)
from bench.workload import KEY, SourceModel, WorkloadSpec


def expected_table(tmp_path: Path) -> pa.Table:
    model = SourceModel(WorkloadSpec(tables=1, rows=30, waves=0), tmp_path)
    model.full_load()
    return model.expected("table_1")


def test_an_identical_table_in_another_order_and_layout_passes(tmp_path: Path) -> None:
    expected = expected_table(tmp_path)
    shuffled = expected.take(pa.array(list(range(29, -1, -1)))).append_column("_hoodie_commit_time", pa.nulls(30))
    assert compare("t", expected, shuffled).ok


def test_a_changed_value_a_missing_row_and_a_missing_column_fail(tmp_path: Path) -> None:
    expected = expected_table(tmp_path)
    fares = expected.column("fare_amount").to_pylist()
    fares[3] += 1
    changed = expected.set_column(expected.schema.get_field_index("fare_amount"), "fare_amount", pa.array(fares))
    verdict = compare("t", expected, changed)
    assert not verdict.ok
    assert verdict.detail == "values differ: fare_amount (1 rows)"

    missing = compare("t", expected, expected.filter(pc.not_equal(expected.column(KEY), 5)))
    assert not missing.ok
    assert missing.detail.startswith("1 keys missing (e.g. [5]), 0 extra")

    no_column = compare("t", expected, expected.drop_columns(["tip_amount"]))
    assert not no_column.ok
    assert "tip_amount" in no_column.detail


def test_hive_partitioned_parquet_reads_back_with_its_partition_column(tmp_path: Path) -> None:
    import pyarrow.dataset as ds

    expected = expected_table(tmp_path / "staging")
    ds.write_dataset(
        expected.drop_columns([]),
        tmp_path / "table",
        format="parquet",
        partitioning=["vendorid"],
        partitioning_flavor="hive",
    )
    assert compare("t", expected, read_parquet_table(tmp_path / "table")).ok


def test_run_step_measures_the_whole_process_tree(tmp_path: Path) -> None:
    grandchild = "b = bytearray(300 * 1024 * 1024); import time; time.sleep(1.5)"
    child = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {grandchild!r}], check=True)"
    step = run_step([sys.executable, "-c", child], log_path=tmp_path / "log.txt", interval=0.1)
    assert step.ok
    assert step.seconds >= 1.5
    assert step.peak_rss_bytes > 300 * 1024 * 1024


def test_run_step_counts_the_cpu_time_of_the_whole_process_tree(tmp_path: Path) -> None:
    # the grandchild burns 1 s of CPU, then idles long enough for the sampler to see its last ticks
    busy = "import time\nend = time.process_time() + 1.0\nwhile time.process_time() < end: pass\ntime.sleep(0.5)"
    child = f"import subprocess, sys, time; subprocess.run([sys.executable, '-c', {busy!r}], check=True); time.sleep(1)"
    step = run_step([sys.executable, "-c", child], log_path=tmp_path / "busy.txt", interval=0.1)
    assert step.ok
    assert 0.9 <= step.cpu_seconds <= 2.0, step.cpu_seconds
    idle = run_step([sys.executable, "-c", "import time; time.sleep(1.5)"], log_path=tmp_path / "idle.txt")
    assert idle.cpu_seconds < 0.5, idle.cpu_seconds


def test_a_failing_step_is_reported_not_raised(tmp_path: Path) -> None:
    step = run_step([sys.executable, "-c", "import sys; print('boom'); sys.exit(3)"], log_path=tmp_path / "l.txt")
    assert step.returncode == 3
    assert not step.ok
    assert "boom" in (tmp_path / "l.txt").read_text()


def test_files_written_counts_new_and_changed_files(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("1")
    (tmp_path / "b").write_text("1")
    before = snapshot(tmp_path)
    (tmp_path / "b").write_text("22")
    (tmp_path / "c").write_text("3")
    assert files_written(before, snapshot(tmp_path)) == 2


def test_hoodiestreamer_command_uses_the_dms_transformer_payload_and_table_settings(tmp_path: Path) -> None:
    command = streamer_command("table_1", tmp_path / "src", tmp_path / "dst")
    joined = " ".join(command)
    assert "--class org.apache.hudi.utilities.streamer.HoodieStreamer" in joined
    assert "--transformer-class org.apache.hudi.utilities.transform.AWSDmsTransformer" in joined
    assert "--payload-class org.apache.hudi.common.model.AWSDmsAvroPayload" in joined
    assert "--source-class org.apache.hudi.utilities.sources.ParquetDFSSource" in joined
    assert "--source-ordering-field cdc_timestamp_seq" in joined
    assert "hoodie.datasource.write.recordkey.field=pk_id" in joined
    assert "hoodie.datasource.write.partitionpath.field=vendorid" in joined
    assert f"hoodie.streamer.source.dfs.root={tmp_path / 'src'}" in joined
    assert command[command.index("--master") + 1] == "local[2]"


def test_a_benchmark_starts_odps_jvm_as_the_other_contenders_start_theirs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The class data archive of ODP's local JVM (ODP_LOCAL_JVM_OPTIONS, docs/decisions/023) is not what the other
    contenders' spark-submit or Glue start with: a benchmark drops it; a test's smoke run keeps it."""
    archive = "-XX:SharedArchiveFile=/a.jsa"
    monkeypatch.setenv(LOCAL_JVM_OPTIONS_ENV, archive)
    monkeypatch.setenv(KEEP_LOCAL_JVM_OPTIONS_ENV, "1")
    level_jvm_options()
    assert os.environ[LOCAL_JVM_OPTIONS_ENV] == archive
    monkeypatch.delenv(KEEP_LOCAL_JVM_OPTIONS_ENV)
    level_jvm_options()
    assert LOCAL_JVM_OPTIONS_ENV not in os.environ
    assert LOCAL_JVM_OPTIONS_ENV not in child_env()
