"""``python -m odp status``: where a table or a cadence stands, read from the trackers (never changes anything)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from odp.operations.backend import OperatorBackend, file_tracker, processing_tracker, table_configs
from odp.operations.commands import age, load_table
from odp.tracker import FileStatus, PendingSummary, TableState, TrackedFile, iso


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
        lease = "free" if view.state.lease_owner is None else f"held by {view.state.lease_owner}"
        lines.append(
            f"{view.table_id:<40} {view.pending.files:>7} {age(view.pending.oldest_landed_at, now):>9} "
            f"{len(view.quarantined):>11}  {status:<14} {lease}"
        )
    return "\n".join(lines)
