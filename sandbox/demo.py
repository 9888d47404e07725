"""``python -m sandbox demo``: generate rounds of CDC files, ``run`` after each, validate every table.

The demo owns its work folder (default ``.demo/`` in the repository, git-ignored) and empties it
first. Expectations come from :mod:`sandbox.demo_data`'s model of the sources, never from the job.
"""

from __future__ import annotations

import logging
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from odp.config.loader import OdpConfig
from odp.config.models import TableType
from sandbox import datasets
from sandbox.account import SandboxLayout
from sandbox.consumer_reader import (
    CONSUMER_HUDI_VERSION,
    ConsumerMismatch,
    ConsumerRead,
    QueryType,
    consumer_mismatches,
)
from sandbox.demo_data import CDC_ROUNDS, DemoGenerator, DemoScenarios
from sandbox.report import RunReport, render_table
from sandbox.runner import RunHooks, run_sandbox
from sandbox.validation import TableCheck, check_table

LOG = logging.getLogger("sandbox")


@dataclass(frozen=True)
class RoundCheck:
    """A check on one round's report (e.g. a redelivered event registered once)."""

    description: str
    ok: bool
    detail: str = ""


@dataclass
class DemoResult:
    rounds: list[RunReport] = field(default_factory=list)
    round_checks: list[RoundCheck] = field(default_factory=list)
    checks: list[TableCheck] = field(default_factory=list)
    consumer_reads: list[ConsumerRead] = field(default_factory=list)  # read back with Athena's Hudi reader
    consumer_mismatches: list[ConsumerMismatch] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return (
            all(r.ok for r in self.rounds)
            and all(c.ok for c in self.round_checks)
            and bool(self.checks)
            and all(c.ok for c in self.checks)
            and not self.consumer_mismatches
        )


def prepare_workdir(workdir: Path) -> SandboxLayout:
    """Empty the demo's folder and lay out staging and lake inside it."""
    if workdir.exists():
        shutil.rmtree(workdir)
    layout = SandboxLayout(lake=workdir / "lake", staging=workdir / "staging")
    layout.staging.mkdir(parents=True)
    layout.lake.mkdir(parents=True)
    return layout


def run_demo(
    config: OdpConfig,
    layout: SandboxLayout,
    spark: Any,
    *,
    scale: int = 1,
    table_ids: tuple[str, ...] | None = None,
    rounds: int = CDC_ROUNDS,
    scenarios: DemoScenarios | None = None,
    rotate_cdc: bool = True,
    config_dir: Path | None = None,
    consumer_read: bool = True,
) -> DemoResult:
    """Full load, then ``rounds`` CDC rounds, a ``run`` after each; then validate every table.

    ``config_dir`` (the folder ``config`` came from): the last round's trips_clean is also refreshed
    through the EMR Serverless entry point with spark-submit and compared (sandbox/emr.py). ``consumer_read``:
    every table and dataset written is read back with Hudi 0.15.0, the reader Athena documents, in a JVM of its own
    and compared row for row with this session's read (:mod:`sandbox.consumer_reader`).
    """
    started = time.monotonic()
    generator = DemoGenerator(
        config,
        layout.staging,
        scale=scale,
        table_ids=table_ids,
        scenarios=scenarios or DemoScenarios(),
        rotate_cdc=rotate_cdc,
    )
    result = DemoResult()
    for round_number in range(rounds + 1):
        title = "full load" if round_number == 0 else f"CDC round {round_number}"
        landed = generator.generate_round(round_number)
        LOG.info("=== round %d (%s): %d file(s) written to staging ===", round_number, title, len(landed))
        redelivered = [key for key in generator.redelivered_keys if any(f.key == key for f in landed)]
        report = run_sandbox(config, layout, spark, hooks=RunHooks(redeliver_keys=redelivered))
        result.rounds.append(report)
        LOG.info("round %d done in %.0f s: %s", round_number, report.seconds, "ok" if report.ok else "FAILED")
        result.round_checks += _round_checks(round_number, landed, redelivered, report)
        if datasets.TRIPS in generator.tables and config.datasets:
            rows = generator.tables[datasets.TRIPS].expected_rows(round_number)
            checks = datasets.refresh_and_check(spark, config, layout, [datasets.TRIPS], rows)
            result.round_checks += [
                RoundCheck(f"round {round_number}: {text}", ok, detail) for text, ok, detail in checks
            ]
    if datasets.TRIPS in generator.tables and config.datasets:
        result.round_checks.append(RoundCheck(*datasets.failing_rule_check(spark, config, layout)))
    if config_dir is not None and datasets.EMR_CHECKED_DATASET in {d.name for d in config.datasets}:
        result.round_checks.append(RoundCheck(*datasets.emr_engine_check(spark, config, layout, config_dir)))
    for table_id, table in generator.tables.items():
        config_table = table.config
        base_path = _base_path(result.rounds, table_id, layout, config_table)
        check = check_table(spark, base_path, config_table, table.expected_rows(rounds))
        LOG.info("validated %s: %s", table_id, "ok" if check.ok else "MISMATCH")
        result.checks.append(check)
    if consumer_read:
        result.consumer_reads = written_tables(config, layout, result.rounds, generator.tables)
        result.consumer_mismatches = consumer_mismatches(spark, result.consumer_reads)
        LOG.info("read back with Hudi %s: %d read(s), %d mismatch(es)", CONSUMER_HUDI_VERSION,
                 len(result.consumer_reads), len(result.consumer_mismatches))  # fmt: skip
    result.seconds = time.monotonic() - started
    return result


def written_tables(
    config: OdpConfig, layout: SandboxLayout, rounds: list[RunReport], tables: dict
) -> list[ConsumerRead]:
    """The consumers' reads of every table and dataset the demo wrote: a snapshot of each, and the read-optimized view
    of each MERGE_ON_READ one (Athena's ``_rt`` and ``_ro`` tables)."""
    written = [
        (table_id, _base_path(rounds, table_id, layout, table.config), table.config.table_type)
        for table_id, table in tables.items()
    ]
    roots = datasets.lake_roots(layout)
    written += [
        (f"dataset {dataset.name}", roots.dataset_path(dataset), dataset.table_type)
        for dataset in config.datasets
        if (Path(roots.dataset_path(dataset).removeprefix("file://")) / ".hoodie").is_dir()
    ]
    reads = []
    for label, base_path, table_type in written:
        reads.append(ConsumerRead(label, base_path, QueryType.SNAPSHOT))
        if table_type is TableType.MERGE_ON_READ:
            reads.append(ConsumerRead(label, base_path, QueryType.READ_OPTIMIZED))
    return reads


def _base_path(rounds: list[RunReport], table_id: str, layout: SandboxLayout, config_table: Any) -> str:
    for report in reversed(rounds):
        for table in report.tables:
            if table.table_id == table_id and table.base_path:
                return table.base_path
    return f"{layout.raw_root}/{config_table.database}/{config_table.target_table}"


def _round_checks(round_number: int, landed: list[Any], redelivered: list[str], report: RunReport) -> list[RoundCheck]:
    """Every file written in the round registered exactly once (redelivered events absorbed)."""
    checks = [
        RoundCheck(
            f"round {round_number}: each new file registered once",
            report.registered_files == len(landed),
            f"{len(landed)} file(s) landed, {report.registered_files} registered",
        )
    ]
    expected_files: dict[str, int] = {}
    for change_file in landed:
        expected_files[change_file.table_id] = expected_files.get(change_file.table_id, 0) + 1
    for key in redelivered:
        table_id = next(f.table_id for f in landed if f.key == key)
        actual = report.table(table_id).files
        checks.append(
            RoundCheck(
                f"round {round_number}: redelivered event for {key} processed once",
                actual == expected_files[table_id],
                f"{table_id}: {actual} file(s) processed, {expected_files[table_id]} expected",
            )
        )
    return checks


def render_demo(result: DemoResult) -> str:
    headers = [
        "table",
        "mode",
        "expected rows",
        "spark rows",
        "expected checksum",
        "spark checksum",
        "hudi-rs",
        "result",
    ]
    rows = [
        [c.table_id, c.mode, c.expected_rows, c.actual_rows, c.expected_checksum, c.actual_checksum,
         "same" if c.hudi_rs_ok else f"{c.hudi_rs_rows} rows, {c.hudi_rs_checksum}",
         "ok" if c.ok else f"MISMATCH{': ' + c.error if c.error else ''}"]
        for c in result.checks
    ]  # fmt: skip
    lines = [render_table(headers, rows), ""]
    for index, report in enumerate(result.rounds):
        failed = [t.table_id for t in report.tables if not t.ok]
        glue = sum(c.glue_runs for c in report.cadences)
        state = "ok" if report.ok else f"FAILED ({', '.join(failed) or 'execution failed'})"
        lines.append(
            f"round {index}: {report.registered_files} file(s) registered, {glue} Glue run(s), "
            f"{report.seconds:.0f} s, {state}"
        )
    for check in result.round_checks:
        if not check.ok:
            lines.append(f"check failed: {check.description}: {check.detail}")
    for mismatch in result.consumer_mismatches:
        lines.append(f"Hudi {CONSUMER_HUDI_VERSION} (Athena's reader) reads otherwise: {mismatch}")
    if result.consumer_reads:
        same = len(result.consumer_reads) - len(result.consumer_mismatches)
        lines.append(
            f"{same}/{len(result.consumer_reads)} reads of the tables written are the same with Hudi "
            f"{CONSUMER_HUDI_VERSION}, the reader Athena documents (snapshot; read-optimized for MERGE_ON_READ)"
        )
    valid = sum(1 for c in result.checks if c.ok)
    verdict = "every table validated" if result.ok else "VALIDATION FAILED"
    lines.append(f"{valid}/{len(result.checks)} tables match the source; {verdict} in {result.seconds:.0f} s")
    return "\n".join(lines)
