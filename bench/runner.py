"""One benchmark run: generate the workload, run every contender wave by wave, check, summarise.

Contenders run one after another on the same staging files. A contender is timed only if every one
of its final tables equals the expected state computed from the source model; otherwise it is
reported as wrong (or failed, or unavailable) with the reason.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import platform
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from bench.check import TableCheck, TableReadError, compare
from bench.contenders.common import Contender, WaveMeasurement, driver_memory
from bench.contenders.hoodiestreamer import HoodieStreamer
from bench.contenders.hudi_per_table import HudiPerTable
from bench.contenders.naive import NaiveRewrite
from bench.contenders.odp import OdpFileProcessor
from bench.metrics import (
    fixed_and_marginal,
    s3_requests,
    step_seconds_by_group,
    table_bytes_read,
    write_amplification,
)
from bench.workload import SourceModel, WaveFiles, WorkloadSpec
from odp.contracts.file_processor import DEFAULT_TABLE_CONCURRENCY

LOG = logging.getLogger("bench")
CONTENDERS: dict[str, type[Contender]] = {
    "odp": OdpFileProcessor,
    "hoodiestreamer": HoodieStreamer,
    "hudi_per_table": HudiPerTable,
    "naive_rewrite": NaiveRewrite,
}
REFERENCE = "hoodiestreamer"
STAND_IN = "hudi_per_table"
MB = 1024 * 1024
CORES = os.cpu_count() or 1


@dataclass
class ContenderResult:
    """Everything measured and checked for one contender."""

    name: str
    label: str
    status: str  # ok | wrong | failed | unavailable
    reason: str = ""
    waves: list[WaveMeasurement] = field(default_factory=list)
    checks: list[TableCheck] = field(default_factory=list)
    load_average_before: tuple[float, float, float] = (0.0, 0.0, 0.0)

    @property
    def timed(self) -> bool:
        return self.status == "ok"

    @property
    def total_seconds(self) -> float:
        return sum(wave.seconds for wave in self.waves)

    @property
    def cdc_seconds(self) -> float:
        return sum(wave.seconds for wave in self.waves if wave.wave > 0)

    @property
    def onboarding_seconds(self) -> float:
        """The first wave's seconds: every table's first load (onboarding), beside the CDC waves'."""
        return sum(wave.seconds for wave in self.waves if wave.wave == 0)

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "label": self.label,
            "status": self.status,
            "reason": self.reason,
            "load_average_before": list(self.load_average_before),
            "checks": [asdict(check) for check in self.checks],
        }
        if not self.timed:
            return out  # a wrong or failed contender is reported, not timed
        rows = sum(wave.change_rows for wave in self.waves)
        cdc_rows = sum(wave.change_rows for wave in self.waves if wave.wave > 0)
        out.update(
            {
                "waves": [
                    {
                        "wave": wave.wave,
                        "kind": "full load" if wave.wave == 0 else "cdc",
                        "seconds": round(wave.seconds, 2),
                        "change_rows": wave.change_rows,
                        "rows_per_second": round(wave.change_rows / wave.seconds, 1) if wave.seconds else None,
                        "peak_rss_mb": round(wave.peak_rss_bytes / MB, 1),
                        "cpu_seconds": round(wave.cpu_seconds, 1),
                        # share of the machine's cores the wave kept busy (1.0: every core, all the time)
                        "cpu_utilisation": (
                            round(wave.cpu_seconds / (wave.seconds * CORES), 2) if wave.seconds else None
                        ),
                        "files_written": wave.files_written,
                        "processes": wave.processes,
                        **wave_costs(wave),
                        **(
                            {"seconds_inside_job_per_table": {k: round(v, 2) for k, v in wave.table_seconds.items()}}
                            if wave.table_seconds
                            else {}
                        ),
                    }
                    for wave in self.waves
                ],
                "total_seconds": round(self.total_seconds, 2),
                "cdc_seconds": round(self.cdc_seconds, 2),
                "rows_per_second": round(rows / self.total_seconds, 1) if self.total_seconds else None,
                "cdc_rows_per_second": round(cdc_rows / self.cdc_seconds, 1) if self.cdc_seconds else None,
                "peak_rss_mb": round(max(wave.peak_rss_bytes for wave in self.waves) / MB, 1),
                "files_written": sum(wave.files_written for wave in self.waves),
                "processes": sum(wave.processes for wave in self.waves),
                "onboarding_seconds": round(self.onboarding_seconds, 2),
                "onboarding_cpu_seconds": round(sum(w.cpu_seconds for w in self.waves if w.wave == 0), 1),
                "onboarding_bytes_written": sum(w.io.total_bytes_written for w in self.waves if w.wave == 0),
                "cdc_bytes_written": sum(wave.io.total_bytes_written for wave in self.waves if wave.wave > 0),
                "cdc_write_amplification": write_amplification(
                    sum(wave.io.total_bytes_written for wave in self.waves if wave.wave > 0),
                    sum(wave.change_bytes for wave in self.waves if wave.wave > 0),
                ),
                "table_costs": table_costs(self.waves),
            }
        )
        steps = step_seconds_by_group(
            [(name, m.step_seconds) for w in self.waves if w.wave > 0 for name, m in w.tables.items() if m.step_seconds]
        )
        if steps:
            out["step_seconds_by_group"] = steps
        return out


def _rounded(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def wave_costs(wave: WaveMeasurement) -> dict[str, Any]:
    """A wave's I/O and cost figures (bench.metrics), for the wave and for each table it changed."""
    return {
        "change_bytes": wave.change_bytes,
        "bytes_written": {**wave.io.bytes_written, "total": wave.io.total_bytes_written},
        "write_amplification": write_amplification(wave.io.total_bytes_written, wave.change_bytes),
        "table_bytes_read_estimate": table_bytes_read(wave.hadoop, wave.staging_bytes),
        "files_touched": wave.io.files_touched,
        "files_deleted": wave.io.files_deleted,
        "s3_requests": s3_requests(wave.io, wave.hadoop),
        "hadoop_statistics": wave.hadoop,
        "tables": {
            table: {
                "change_rows": measured.change_rows,
                "change_bytes": measured.change_bytes,
                "landed_files": measured.files,
                "seconds": _rounded(measured.seconds),
                "cpu_seconds": _rounded(measured.cpu_seconds, 1),
                "peak_rss_mb": None if measured.peak_rss_bytes is None else round(measured.peak_rss_bytes / MB, 1),
                "bytes_written": {**measured.io.bytes_written, "total": measured.io.total_bytes_written},
                "write_amplification": write_amplification(measured.io.total_bytes_written, measured.change_bytes),
                "files_written": measured.io.files_written,
                "files_touched": measured.io.files_touched,
                "s3_put_requests": measured.io.put_requests,
                "data_files_after": measured.io.data_files_after,
                "timeline_files_after": measured.io.timeline_files_after,
                **({"write_reason": measured.write_reason} if measured.write_reason else {}),
                **({"step_seconds": measured.step_seconds} if measured.step_seconds else {}),
            }
            for table, measured in sorted(wave.tables.items())
        },
    }


def table_costs(waves: list[WaveMeasurement]) -> dict[str, Any]:
    """Fixed cost (seconds of a table with one change) and cost per change, fitted over the CDC waves:
    per table, and over every table of the run together (``all``)."""
    points: dict[str, list[tuple[int, float]]] = {}
    for wave in waves:
        if wave.wave == 0:
            continue
        for table, measured in wave.tables.items():
            if measured.seconds is not None and measured.change_rows > 0:
                points.setdefault(table, []).append((measured.change_rows, measured.seconds))
    out = {table: fixed_and_marginal(values) for table, values in sorted(points.items())}
    out["all"] = fixed_and_marginal([point for values in points.values() for point in values])
    return out


def load_average() -> tuple[float, float, float]:
    return os.getloadavg()


def run_contender(
    contender: Contender, model: SourceModel, waves: list[list[WaveFiles]], staging_root: Path
) -> ContenderResult:
    """All waves of one contender, then the check of every final table."""
    result = ContenderResult(contender.name, contender.label, "ok", load_average_before=load_average())
    reason = contender.unavailable_reason()
    if reason:
        result.status, result.reason = "unavailable", reason
        LOG.warning("%s: unavailable: %s", contender.name, reason)
        return result
    shutil.rmtree(contender.root, ignore_errors=True)
    try:
        for wave, files in enumerate(waves):
            LOG.info("%s: wave %d (%d tables)", contender.name, wave, len(files))
            measurement = contender.run_wave(wave, files, staging_root)
            result.waves.append(measurement)
            LOG.info("%s: wave %d took %.1f s", contender.name, wave, measurement.seconds)
            if measurement.failures:
                result.status = "failed"
                result.reason = f"wave {wave}: " + "; ".join(measurement.failures[:3])
                LOG.error("%s: %s", contender.name, result.reason)
                return result
    finally:
        contender.close()  # a warm job ends after its last wave (bench.warm_jvm)
    result.checks.extend(checked_apart(model, contender))
    wrong = [check for check in result.checks if not check.ok]
    if wrong:
        result.status = "wrong"
        result.reason = f"{len(wrong)} of {len(result.checks)} tables differ from the expected state; first: " + (
            f"{wrong[0].table}: {wrong[0].detail}"
        )
        LOG.error("%s: %s", contender.name, result.reason)
    return result


def check_tables(model: SourceModel, contender: Contender) -> list[TableCheck]:
    """Each of the model's tables as the contender left it against the model's expected state."""
    checks = []
    for table in model.spec.table_names:
        try:
            check = compare(table, model.expected(table), contender.read_table(table))
        except TableReadError as error:
            check = TableCheck(table, False, model.expected(table).num_rows, 0, str(error))
        checks.append(check)
    return checks


def _check_in_child(model: SourceModel, contender: Contender, sender: Connection) -> None:
    sender.send(check_tables(model, contender))
    sender.close()


def checked_apart(model: SourceModel, contender: Contender) -> list[TableCheck]:
    """:func:`check_tables` in a forked child, which gets the model without a copy and hands back only the verdicts:
    reading a fleet's tables (hudi-rs, Arrow) grew this process to 17 GB that it never gave back, and the next
    repeat's JVM then ran the machine out of memory. The child's memory is the system's again when it exits.

    Raises:
        RuntimeError: the child died without an answer (its exit code).
    """
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_check_in_child, args=(model, contender, sender))
    child.start()
    sender.close()
    try:
        checks = receiver.recv()
    except EOFError:
        checks = None
    child.join()
    if checks is None:
        raise RuntimeError(f"checking {contender.name}'s tables: the child ended without an answer ({child.exitcode})")
    return checks


def generate(
    spec: Any, staging_root: Path, model_type: Callable[[Any, Path], SourceModel] = SourceModel
) -> tuple[SourceModel, list[list[WaveFiles]]]:
    """The full load and every CDC wave, written before any contender runs (``model_type``: SourceModel
    for a WorkloadSpec, bench.fleet.FleetModel for a FleetSpec)."""
    shutil.rmtree(staging_root, ignore_errors=True)
    model = model_type(spec, staging_root)
    waves = [model.full_load()]
    for _ in range(spec.waves):
        waves.append(model.cdc_wave())
    return model, waves


def ratios(results: dict[str, ContenderResult], reference: str) -> dict[str, float | None]:
    """Each timed contender's total time divided by the reference's (None when either is untimed)."""
    base = results.get(reference)
    if base is None or not base.timed or not base.total_seconds:
        return dict.fromkeys(results)
    return {
        name: (round(result.total_seconds / base.total_seconds, 3) if result.timed else None)
        for name, result in results.items()
    }


def speedup(results: dict[str, ContenderResult], reference: str) -> float | None:
    base, odp = results.get(reference), results.get("odp")
    if base is None or odp is None or not (base.timed and odp.timed) or not odp.total_seconds:
        return None
    return round(base.total_seconds / odp.total_seconds, 3)


def scale_check(
    work_root: Path, rows: int, factor: int, spec: WorkloadSpec, *, table_type: str = "COPY_ON_WRITE"
) -> dict[str, Any]:
    """ODP on one table of ``rows`` and one of ``factor * rows``, one CDC wave with the same number of changes."""
    out: dict[str, Any] = {"rows": rows, "factor": factor, "table_type": table_type, "skew": spec.skew, "runs": []}
    for size in (rows, rows * factor):
        scaled = replace(
            spec,
            tables=1,
            rows=size,
            waves=1,
            update_fraction=spec.update_fraction * rows / size,
            delete_fraction=spec.delete_fraction * rows / size,
            insert_fraction=spec.insert_fraction * rows / size,
        )
        root = work_root / f"scale_{size}"
        model, waves = generate(scaled, root / "staging")
        contender = OdpFileProcessor(root)
        contender.table_type = table_type
        result = run_contender(contender, model, waves, root / "staging")
        run = {"table_rows": size, "status": result.status, "reason": result.reason}
        if result.timed:
            run["full_load_seconds"] = round(result.waves[0].seconds, 2)
            run["cdc_wave_seconds"] = round(result.waves[1].seconds, 2)
            run["cdc_change_rows"] = result.waves[1].change_rows
        out["runs"].append(run)
    small, large = out["runs"]
    if "cdc_wave_seconds" in small and "cdc_wave_seconds" in large:
        out["cdc_wave_ratio"] = round(large["cdc_wave_seconds"] / small["cdc_wave_seconds"], 3)
    return out


def _command_output(command: list[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return (done.stdout + done.stderr).strip().splitlines()[0] if (done.stdout + done.stderr).strip() else "unknown"


def machine() -> dict[str, Any]:
    """What the run ran on."""
    cpu = "unknown"
    memory_gib = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_gib = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    import pyspark

    return {
        "cpu": cpu,
        "cores": CORES,
        "memory_gib": memory_gib,
        "os": platform.platform(),
        "python": platform.python_version(),
        "java": _command_output(["java", "-version"]),
        "spark": pyspark.__version__,
        "hudi": "1.0.2",
        "spark_master": "local[2]",
        "driver_memory": driver_memory(),
    }


def build_document(
    started: datetime,
    spec: WorkloadSpec | dict[str, Any],
    waves: list[list[WaveFiles]],
    results: dict[str, ContenderResult],
) -> dict[str, Any]:
    """The results document for the contenders run so far (``spec``: a WorkloadSpec or a workload summary)."""
    reference = REFERENCE if results.get(REFERENCE) and results[REFERENCE].timed else STAND_IN
    document: dict[str, Any] = {
        "started_at": started.isoformat(timespec="seconds"),
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "workload": {
            **(asdict(spec) if isinstance(spec, WorkloadSpec) else spec),
            "change_rows_per_wave": [sum(item.change_rows for item in wave) for wave in waves],
        },
        "contenders": {name: result.summary() for name, result in results.items()},
        "ratio_to_hoodiestreamer": ratios(results, REFERENCE),
        "speedup_vs_hoodiestreamer": speedup(results, REFERENCE),
        "ratio_to_hudi_per_table": ratios(results, STAND_IN),
        "speedup_vs_hudi_per_table": speedup(results, STAND_IN),
        "chart_reference": reference,
    }
    if results.get(REFERENCE) and not results[REFERENCE].timed:
        document["speedup_vs_hoodiestreamer_note"] = (
            f"HoodieStreamer was {results[REFERENCE].status}: {results[REFERENCE].reason}"
        )
    return document


def make_contender(
    name: str,
    work_root: Path,
    *,
    table_concurrency: int = DEFAULT_TABLE_CONCURRENCY,
    table_type: str = "COPY_ON_WRITE",
    index_buckets: int | None = None,
    table_types: dict[str, str] | None = None,
    simple_index_tables: frozenset[str] = frozenset(),
    warm_jvm: bool = False,
) -> Contender:
    """The contender ``name`` working under ``work_root``, ODP with its settings (the others have none).
    ``table_types``: ODP's table type per table name, where it differs from ``table_type``;
    ``simple_index_tables``: the tables ODP writes with the table setting ``index: simple``; ``warm_jvm``: a contender
    with a job of one wave (ODP, the naive rewrite) serves every wave in one process (bench.warm_jvm).

    Raises:
        ValueError: ``warm_jvm`` for a contender without such a job (one process per table: no JVM to keep).
    """
    contender = CONTENDERS[name](work_root)
    if warm_jvm and not contender.job_module:
        raise ValueError(f"--warm-jvm: contender {name!r} starts a process per table; only odp and naive_rewrite")
    contender.warm_jvm = warm_jvm
    if isinstance(contender, OdpFileProcessor):
        contender.table_concurrency = table_concurrency
        contender.table_type = table_type
        contender.index_buckets = index_buckets
        contender.table_types = table_types
        contender.simple_index_tables = simple_index_tables
    return contender


def run_benchmark(
    spec: WorkloadSpec,
    work_root: Path,
    contenders: list[str],
    *,
    scale_factor: int = 0,
    on_progress: Callable[[dict[str, Any]], None] | None = None,
    odp_table_concurrency: int = DEFAULT_TABLE_CONCURRENCY,
    odp_table_type: str = "COPY_ON_WRITE",
    odp_index_buckets: int | None = None,
) -> dict[str, Any]:
    """The whole benchmark; returns the results document (see bench/README.md).

    ``odp_table_concurrency``: ODP's tables written at once per wave (the cadence setting; 1 = one by one).
    ``odp_table_type``: ODP's tables (and the scale check's) as COPY_ON_WRITE or MERGE_ON_READ.
    ``odp_index_buckets``: ODP's tables with the bucket index, N buckets per partition (None: the record index).

    ``on_progress`` gets the document after each contender (so a long run that is stopped keeps what
    it measured).
    """
    started = datetime.now(UTC)
    staging_root = work_root / "staging"
    LOG.info("generating %d tables x %d rows, %d waves under %s", spec.tables, spec.rows, spec.waves, staging_root)
    model, waves = generate(spec, staging_root)
    results: dict[str, ContenderResult] = {}
    for name in contenders:
        contender = make_contender(
            name,
            work_root,
            table_concurrency=odp_table_concurrency,
            table_type=odp_table_type,
            index_buckets=odp_index_buckets,
        )
        results[name] = run_contender(contender, model, waves, staging_root)
        if on_progress is not None:
            on_progress(build_document(started, spec, waves, results))
    document = build_document(started, spec, waves, results)
    document["odp_table_concurrency"] = odp_table_concurrency
    document["odp_table_type"] = odp_table_type
    document["odp_index_buckets"] = odp_index_buckets
    if scale_factor > 1:
        document["scale"] = scale_check(work_root, spec.rows, scale_factor, spec, table_type=odp_table_type)
    return document
