"""``python -m odp status``: where a table or a cadence stands, read from the trackers (never changes anything)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from odp.config.models import TableConfig
from odp.operations.backend import OperatorBackend, file_tracker, processing_tracker, table_configs
from odp.operations.commands import age, load_table
from odp.tracker import FileStatus, PendingSummary, TableState, TrackedFile, iso
from odp.tracker.ledger import DATASET_SUBJECT


@dataclass(frozen=True)
class TableView:
    """Everything status shows of one table."""

    table_id: str
    cadence: str
    is_active: bool
    pending: PendingSummary
    state: TableState
    quarantined: tuple[TrackedFile, ...]
    holder_ended: str | None  # why the lease holder's job run counts as ended, if it does


def table_view(backend: OperatorBackend, table_id: str) -> TableView:
    config = load_table(backend, table_id)
    state = processing_tracker(backend).state(table_id)
    job = state.lease_job_run
    ended = backend.job_runs.ended(job) if job is not None and backend.job_runs is not None else None
    files = file_tracker(backend)
    return TableView(
        table_id=table_id,
        cadence=config.cadence,
        is_active=config.is_active,
        pending=files.pending_summary(table_id),
        state=state,
        quarantined=tuple(files.files(table_id, FileStatus.QUARANTINED)),
        holder_ended=ended,
    )


def cadence_tables(backend: OperatorBackend, cadence: str) -> list[str]:
    """Every table of a cadence in table_config, active or not, in id order."""
    return [config.table_id for config in table_configs(backend).scan(cadence=cadence)]


def _lease(view: TableView, now: datetime) -> str:
    state = view.state
    if state.lease_owner is None:
        return "free"
    until = iso(datetime.fromtimestamp(state.lease_expires_at or 0, UTC))
    job = state.lease_job_run
    text = f"held by {state.lease_owner}" + (f" (job run {job.run_id})" if job else "") + f" until {until}"
    if not state.lease_is_held(int(now.timestamp())):
        text += " (expired: the next run takes it over)"
    elif view.holder_ended:
        text += f" ({view.holder_ended}: the next run takes it over)"
    return text


def render_table(view: TableView, now: datetime) -> str:
    """Pure: the detailed status of one table."""
    state = view.state
    run = state.last_run
    finished = state.finished_run()
    lines = [
        f"table {view.table_id} (cadence {view.cadence}, {'active' if view.is_active else 'INACTIVE'})",
        f"  pending: {view.pending.files} file(s), {view.pending.bytes} bytes, "
        f"oldest landed {view.pending.oldest_landed_at or '-'} ({age(view.pending.oldest_landed_at, now)} ago)",
        f"  lease: {_lease(view, now)}",
        f"  last run: {run.run_id if run else '-'} {state.status.value if state.status else '-'}"
        + (
            f" finished {finished.finished_at}: {finished.files} file(s), +{finished.inserts} "
            f"~{finished.updates} -{finished.deletes}, commit {finished.commit_instant or '-'}"
            if finished is not None and finished.finished_at
            else ""
        ),
        f"  last error: {(finished.error if finished else None) or '-'}",
    ]
    if state.held_at is not None:
        lines.append(
            f"  HELD since {state.held_at}, after {state.failed_runs} failed runs in a row (max_table_attempts): the "
            f"Batch Manager leaves it out; after a fix, python -m odp retry {view.table_id}"
        )
    elif state.failed_runs:
        lines.append(f"  failed runs in a row: {state.failed_runs}")
    if finished is not None and finished.quarantined_files:
        lines.append(f"  quarantined by the last run: {', '.join(finished.quarantined_files)}")
    lines.append(f"  quarantined: {len(view.quarantined)} file(s)")
    for tracked in view.quarantined:
        counted = f", {tracked.attempts} failed run(s)" if tracked.attempts else ""
        lines.append(f"    {tracked.key} (since {tracked.quarantined_at}{counted})")
        lines.append(f"      {tracked.last_error}")
    return "\n".join(lines)


def render_cadence(cadence: str, views: list[TableView], now: datetime) -> str:
    """Pure: one line per table of a cadence."""
    header = f"{'table':<40} {'pending':>7} {'oldest':>9} {'quarantined':>11}  {'last run':<14} lease"
    lines = [f"cadence {cadence}: {len(views)} table(s)", header]
    for view in views:
        status = view.state.status.value if view.state.status else "-"
        status = "held" if view.state.held_at is not None else status
        lease = "free" if view.state.lease_owner is None else f"held by {view.state.lease_owner}"
        lines.append(
            f"{view.table_id:<40} {view.pending.files:>7} {age(view.pending.oldest_landed_at, now):>9} "
            f"{len(view.quarantined):>11}  {status:<14} {lease}"
        )
    return "\n".join(lines)


@dataclass(frozen=True)
class UnmatchedPrefix:
    """A staging prefix ``<source>/<schema>/<table>/`` whose files no entry or rule of the source takes."""

    prefix: str
    files: int
    bytes: int
    oldest_landed_at: str | None


def unmatched_prefixes(files: list[TrackedFile]) -> list[UnmatchedPrefix]:
    """Pure: unmatched files grouped by their table's staging prefix, in prefix order."""
    groups: dict[str, list[TrackedFile]] = {}
    for tracked in files:
        groups.setdefault("/".join(tracked.key.split("/")[:3]) + "/", []).append(tracked)
    return [
        UnmatchedPrefix(
            prefix=prefix,
            files=len(group),
            bytes=sum(f.size for f in group),
            oldest_landed_at=min(f.landed_at for f in group),
        )
        for prefix, group in sorted(groups.items())
    ]


def unmatched_line(prefixes: list[UnmatchedPrefix]) -> str:
    """Pure: the one line every status output ends with."""
    if not prefixes:
        return "unmatched: none (every landed file's table has an entry or a rule)"
    files = sum(p.files for p in prefixes)
    shown = ", ".join(p.prefix for p in prefixes[:3]) + (", ..." if len(prefixes) > 3 else "")
    return (
        f"unmatched: {files} file(s) under {len(prefixes)} prefix(es) no entry or rule takes: {shown} "
        "(python -m odp status --unmatched)"
    )


def render_unmatched(prefixes: list[UnmatchedPrefix], now: datetime) -> str:
    """Pure: one line per unmatched prefix, with what to do."""
    lines = [
        f"{len(prefixes)} unmatched prefix(es): add an entry or an include glob to config/tables/<source>.yaml, "
        "deploy, then python -m odp backfill <table>",
        f"{'prefix':<50} {'files':>7} {'bytes':>12} {'oldest':>9}",
    ]
    lines += [f"{p.prefix:<50} {p.files:>7} {p.bytes:>12} {age(p.oldest_landed_at, now):>9}" for p in prefixes]
    return "\n".join(lines)


def unmatched(backend: OperatorBackend) -> list[UnmatchedPrefix]:
    return unmatched_prefixes(file_tracker(backend).unmatched_files())


def subject_kind(subject: str, configs: dict[str, TableConfig]) -> str:
    """Pure: what writes a ledger subject: a dataset, a stream, or a cadence's File Processor."""
    if subject.startswith(DATASET_SUBJECT):
        return "dataset"
    config = configs.get(subject)
    if config is None:
        return "not configured"
    return f"stream {config.stream}" if config.stream else f"cadence {config.cadence}"


def render_ledger(states: list[TableState], configs: dict[str, TableConfig]) -> str:
    """Pure: one line per subject of the run ledger (batch and streamed tables, datasets): its last run."""
    header = f"{'table or dataset':<44} {'written by':<26} {'last run':<14} {'finished':<25} {'rows':>8}  error"
    lines = [f"{len(states)} table(s) and dataset(s) with runs", header]
    for state in states:
        run = state.finished_run()
        status = "held" if state.held_at is not None else (state.status.value if state.status else "-")
        finished = (run.finished_at if run else None) or "-"
        rows = run.rows if run is not None else 0
        error = " ".join(((run.error if run else None) or "").split())[:80]
        kind = subject_kind(state.table_id, configs)
        lines.append(f"{state.table_id:<44} {kind:<26} {status:<14} {finished:<25} {rows:>8}  {error}".rstrip())
    return "\n".join(lines)


def ledger_view(backend: OperatorBackend) -> tuple[list[TableState], dict[str, TableConfig]]:
    """Every subject of the run ledger with its last run, and the tables' configurations (one scan each)."""
    states = processing_tracker(backend).ledger.subjects()
    return states, {config.table_id: config for config in table_configs(backend).scan()}
