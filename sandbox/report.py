"""The per-table report of a sandbox run: what each table did, printed and written as JSON."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from odp.tracker import RunStatus, TableRun
from odp.tracker.dataset_run import DatasetRun
from odp.tracker.items import run_fields

# The TableRun fields a report line shows.
REPORTED_COUNTS = ("files", "inserts", "updates", "deletes", "rows", "seconds", "commit_instant")


def left_undone(status: RunStatus) -> bool:
    """Failed, or skipped: in the sandbox (one run at a time) a skip means a lease left behind."""
    return status.failed or status is RunStatus.SKIPPED


@dataclass(frozen=True)
class TableReport:
    """One table's line in one run: its run as the job returned it, or why it had none.

    ``status`` is the run's (completed, refresh_error, skipped), else ``batch_failed`` (its
    execution failed before a job ran it), ``skipped`` (another run holds its lease),
    ``refresh_error`` (its files wait after an earlier failed run) or ``not_run`` (nothing to do).
    """

    table_id: str
    cadence: str
    status: RunStatus
    run: TableRun | None = None
    pending_files: int = 0  # without a run: the files it left landed
    base_path: str | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return not left_undone(self.status)

    @property
    def files(self) -> int:
        return self.run.files if self.run is not None else self.pending_files

    def row(self) -> dict[str, Any]:
        """The line as printed and written to JSON: the run's counts (rows unknown without a run)."""
        counts = run_fields(self.run, REPORTED_COUNTS) | {"files": self.files}
        if self.run is None:
            counts["rows"] = None
        line = {"table_id": self.table_id, "cadence": self.cadence, "status": self.status.value}
        quarantined = list(self.run.quarantined_files) if self.run is not None else []
        return line | counts | {"base_path": self.base_path, "error": self.error, "quarantined_files": quarantined}


@dataclass(frozen=True)
class CadenceReport:
    """One state-machine execution."""

    cadence: str
    execution_arn: str
    status: str
    error: str | None = None
    cause: str | None = None
    glue_runs: int = 0
    alerts: list[dict[str, Any]] = field(default_factory=list)
    output: dict[str, Any] | None = None  # the execution's output (what EventBridge passes on to the datasets)


@dataclass(frozen=True)
class RunReport:
    """Everything one ``run`` did; ``ok`` decides the exit code."""

    announced_files: int
    registered_files: int
    withdrawn_files: list[str]
    cadences: list[CadenceReport]
    tables: list[TableReport]
    seconds: float
    # Announced objects the File Manager did not make pending: key -> why (skipped, or no active table).
    skipped_files: dict[str, str] = field(default_factory=dict)
    # The datasets state machine started after each File Processor execution that succeeded, and its runs.
    dataset_executions: list[CadenceReport] = field(default_factory=list)
    datasets: list[DatasetRun] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        executions_ok = all(c.status == "SUCCEEDED" for c in [*self.cadences, *self.dataset_executions])
        return executions_ok and all(t.ok for t in self.tables) and not any(d.status.failed for d in self.datasets)

    def table(self, table_id: str) -> TableReport:
        """Raises: KeyError: the table is not in this report."""
        for table in self.tables:
            if table.table_id == table_id:
                return table
        raise KeyError(f"table {table_id!r} is not in the report")

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "seconds": round(self.seconds, 1),
            "announced_files": self.announced_files,
            "registered_files": self.registered_files,
            "withdrawn_files": self.withdrawn_files,
            "skipped_files": self.skipped_files,
            "executions": [asdict(c) for c in self.cadences],
            "tables": [t.row() for t in self.tables],
            "dataset_executions": [asdict(c) for c in self.dataset_executions],
            "datasets": [d.model_dump(mode="json") for d in self.datasets],
        }

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_json(), indent=2, default=str) + "\n", encoding="utf-8")


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)


def render_table(headers: list[str], rows: list[list[Any]]) -> str:
    """A plain-text table with aligned columns (numbers right-aligned)."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    numeric = [all(isinstance(row[i], int | float) or row[i] is None for row in rows) for i in range(len(headers))]

    def line(values: list[str]) -> str:
        pairs = enumerate(zip(values, widths, strict=True))
        return "  ".join(v.rjust(w) if numeric[i] else v.ljust(w) for i, (v, w) in pairs)

    out = [line(headers), line(["-" * w for w in widths])]
    out += [line(r) for r in cells]
    return "\n".join(text.rstrip() for text in out)


def render_report(report: RunReport) -> str:
    headers = ["table", "status", "files", "inserts", "updates", "deletes", "rows", "seconds", "error"]
    columns = ("table_id", *headers[1:-1])
    rows = [[line[name] for name in columns] + [_short(line["error"])] for line in (t.row() for t in report.tables)]
    lines = [render_table(headers, rows), ""]
    for cadence in report.cadences:
        detail = f" ({cadence.error}: {_short(cadence.cause, 160)})" if cadence.error else ""
        lines.append(f"execution {cadence.cadence}: {cadence.status}, {cadence.glue_runs} Glue run(s){detail}")
    for execution in report.dataset_executions:
        detail = f" ({execution.error}: {_short(execution.cause, 160)})" if execution.error else ""
        lines.append(f"datasets after {execution.cadence}: {execution.status}{detail}")
    lines.extend(f"dataset {run.summary()}" for run in report.datasets)
    for table in report.tables:
        if table.run is not None and table.run.quarantined_files:
            keys = ", ".join(table.run.quarantined_files)
            lines.append(f"quarantined by this run ({table.table_id}; python -m odp status names why): {keys}")
    if report.withdrawn_files:
        lines.append(f"withdrawn (deleted from staging before processing): {', '.join(report.withdrawn_files)}")
    for key, reason in report.skipped_files.items():
        lines.append(f"not applied: {key}: {reason}")
    failed = sum(1 for t in report.tables if not t.ok)
    verdict = "every table succeeded" if report.ok else f"{failed} table(s) failed"
    lines.append(
        f"{report.announced_files} new file(s) announced, {report.registered_files} registered; "
        f"{verdict} in {report.seconds:.0f} s"
    )
    return "\n".join(lines)


def _short(text: str | None, limit: int = 100) -> str | None:
    if text is None:
        return None
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
