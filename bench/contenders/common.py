"""What every contender does: run one wave of every table, measured, and hand its tables to the checker."""

from __future__ import annotations

import json
import os
import sys
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from bench import fs_stats
from bench.measure import StepResult, child_env, files_written, run_step, snapshot
from bench.metrics import TableIO, table_io
from bench.warm_jvm import WarmJob
from bench.workload import WaveFiles
from etl.spark_session import LOCAL_DRIVER_MEMORY, local_child_jvm_conf

REPO_ROOT = Path(__file__).resolve().parents[2]
JARS = REPO_ROOT / ".cache" / "jars"
HUDI_SPARK_BUNDLE = JARS / "hudi-spark3.5-bundle_2.12-1.0.2.jar"
# The same sizing for every contender's Spark: two local cores, a 2 GiB driver, two shuffle partitions.
# ``python -m bench ... --driver-memory 4g`` sets the variable for every contender of the run alike.
DRIVER_MEMORY_VARIABLE = "ODP_BENCH_DRIVER_MEMORY"
DEFAULT_DRIVER_MEMORY = LOCAL_DRIVER_MEMORY  # the local profile's heap (etl.spark_session)


def driver_memory() -> str:
    """The heap of every contender's local Spark driver in this run (where local[2] runs every task)."""
    return os.environ.get(DRIVER_MEMORY_VARIABLE) or DEFAULT_DRIVER_MEMORY


# Every contender writes its Parquet files with one codec: Hudi's default, the one ODP writes (docs/decisions/015).
# The naive rewrite sets it on plain Spark, whose default (snappy) writes about a third more bytes.
PARQUET_CODEC = "gzip"
SPARK_CONF = {
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.ui.enabled": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
    "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
    "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
}


def spark_submit() -> str:
    """spark-submit of the pyspark package in the virtualenv running the benchmark."""
    import pyspark

    return str(Path(pyspark.__file__).parent / "bin" / "spark-submit")


def contender_spark_conf() -> dict[str, str]:
    """Every contender's Spark settings; in a test's smoke run (which keeps ``ODP_LOCAL_JVM_OPTIONS``:
    bench/measure.py) also the local session's JVM start (``local_child_jvm_conf``: the class data archive), which a
    real benchmark drops for every contender alike."""
    return {**SPARK_CONF, **local_child_jvm_conf()}


def spark_submit_prefix(app_name: str) -> list[str]:
    command = [spark_submit(), "--master", "local[2]", "--driver-memory", driver_memory(), "--name", app_name]
    for key, value in contender_spark_conf().items():
        command += ["--conf", f"{key}={value}"]
    return command


@dataclass
class TableMeasurement:
    """One table in one wave of one contender. ``seconds``: inside the job (one application for every
    table) or the table's own process; ``cpu_seconds`` and ``peak_rss_bytes`` only where the table has
    its own process."""

    change_rows: int = 0
    change_bytes: int = 0
    files: int = 0
    seconds: float | None = None
    cpu_seconds: float | None = None
    peak_rss_bytes: int | None = None
    io: TableIO = field(default_factory=TableIO)
    write_reason: str | None = None  # ODP: upsert or rewrite and why (its run history's write_reason)
    step_seconds: dict[str, float] | None = None  # ODP: each step's and write phase's seconds (its run history's)


@dataclass
class WaveMeasurement:
    """One wave of one contender: every table, one or more processes."""

    wave: int
    seconds: float = 0.0
    peak_rss_bytes: int = 0
    cpu_seconds: float = 0.0  # user + system time of every process of the wave
    files_written: int = 0
    processes: int = 0
    change_rows: int = 0
    failures: list[str] = field(default_factory=list)
    table_seconds: dict[str, float] = field(default_factory=dict)  # per table inside the job, where it reports them
    change_bytes: int = 0  # bytes of the landed files holding the wave's changes (each file once)
    staging_bytes: int = 0  # bytes of every landed file of the wave (a file delivered twice: twice)
    tables: dict[str, TableMeasurement] = field(default_factory=dict)
    hadoop: dict[str, dict[str, int]] = field(default_factory=dict)  # FileSystem statistics of its processes
    io: TableIO = field(default_factory=TableIO)  # every table folder together

    def add(self, step: StepResult, table: str | None = None) -> None:
        """Count one process; ``table``: the one table it ran (its time, CPU and memory are that table's)."""
        self.seconds += step.seconds
        self.cpu_seconds += step.cpu_seconds
        self.peak_rss_bytes = max(self.peak_rss_bytes, step.peak_rss_bytes)
        self.processes += 1
        if not step.ok:
            self.failures.append(f"exit {step.returncode}, log {step.log_path}")
        if table is not None:
            measured = self.tables.setdefault(table, TableMeasurement())
            measured.seconds = step.seconds
            measured.cpu_seconds = step.cpu_seconds
            measured.peak_rss_bytes = step.peak_rss_bytes

    def add_outcome(self, outcome_path: Path) -> dict | None:
        """Read a job's outcome file (``<spec>.outcome.json``): its Hadoop statistics and seconds per table."""
        if not outcome_path.is_file():
            return None
        outcome = json.loads(outcome_path.read_text())
        fs_stats.add(self.hadoop, outcome.get("hadoop", {}))
        for table, seconds in outcome.get("table_seconds", {}).items():
            self.tables.setdefault(table, TableMeasurement()).seconds = seconds
        return outcome


class Contender(ABC):
    """A way of keeping the tables current. Subclasses run waves; this class counts files and reads tables."""

    name: str = ""
    label: str = ""
    hudi: bool = True  # Hudi tables are read with hudi-rs, the others as plain Parquet
    job_module: str = ""  # the job of one wave (``python -m <job_module> SPEC``), where the contender has one
    warm_jvm: bool = False  # ``--warm-jvm``: one job process serves every wave (bench.warm_jvm)

    def __init__(self, work_root: Path) -> None:
        self.root = work_root / self.name
        self.tables_root = self.root / "tables"
        self.logs = self.root / "logs"
        self.specs = self.root / "specs"
        self._warm_job: WarmJob | None = None

    def run_job(self, measurement: WaveMeasurement, wave: int, spec_path: Path) -> None:
        """One wave of ``job_module`` added to ``measurement``: a process of its own, or the warm job's next wave (the
        job started at the first: its process counted there, its start falling in that wave's time)."""
        if not self.warm_jvm:
            command = [sys.executable, "-m", self.job_module, str(spec_path)]
            measurement.add(run_step(command, log_path=self.logs / f"wave_{wave}.log", env=child_env()))
            return
        started = self._warm_job is None
        if self._warm_job is None:
            self._warm_job = WarmJob(self.job_module, self.logs / "warm_job.log")
        measurement.add(self._warm_job.run_wave(spec_path))
        if not started:
            measurement.processes -= 1  # the same process as the earlier waves'

    def close(self) -> None:
        """End the warm job, if one was started (after the last wave)."""
        if self._warm_job is not None:
            self._warm_job.close()
            self._warm_job = None

    def unavailable_reason(self) -> str | None:
        """Why this contender cannot run here, or ``None``."""
        return None

    def table_path(self, table: str) -> Path:
        return self.tables_root / table

    def run_wave(self, wave: int, files: list[WaveFiles], staging_root: Path) -> WaveMeasurement:
        """Run the wave and count what it wrote under each table's folder; a wave in which no table got a
        file starts nothing (as the Batch Manager starts no job run)."""
        files = [item for item in files if item.keys]
        before = snapshot(self.tables_root)
        measurement = WaveMeasurement(
            wave=wave,
            change_rows=sum(item.change_rows for item in files),
            change_bytes=sum(item.change_bytes for item in files),
            staging_bytes=sum((staging_root / key).stat().st_size for item in files for key in item.keys),
        )
        if files:
            self._run(measurement, wave, files, staging_root)
        after = snapshot(self.tables_root)
        measurement.files_written = files_written(before, after)
        for item in files:
            measured = measurement.tables.setdefault(item.table, TableMeasurement())
            measured.change_rows = item.change_rows
            measured.change_bytes = item.change_bytes
            measured.files = len(item.keys)
            measured.io = table_io(before, after, self.table_path(item.table))
            measurement.io.add(measured.io)
        return measurement

    @abstractmethod
    def _run(self, measurement: WaveMeasurement, wave: int, files: list[WaveFiles], staging_root: Path) -> None:
        """Run every table of the wave, adding each process's StepResult to ``measurement``."""

    def read_table(self, table: str) -> pa.Table:
        from bench.check import read_hudi, read_parquet_table

        path = self.table_path(table)
        return read_hudi(path) if self.hudi else read_parquet_table(path)

    def write_spec(self, name: str, spec: dict) -> Path:
        self.specs.mkdir(parents=True, exist_ok=True)
        path = self.specs / f"{name}.json"
        path.write_text(json.dumps(spec, indent=1))
        return path
