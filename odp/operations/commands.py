"""The operator commands: read the trackers, plan (pure), print the plan, apply it only when confirmed.

Each command is a function ``(backend, ...) -> Plan``; :meth:`Plan.apply` does the changes. Every change
is conditional where it could race with a running job: a file is quarantined only while landed and
released only while quarantined, a lease is released only while the named holder holds it, a replay
holds the table's lease while it moves files and deletes the table's data.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from odp.config.models import TableConfig, TableMode
from odp.naming import table_base_path, tombstone_path
from odp.operations.backend import (
    OperationError,
    OperatorBackend,
    StagedObject,
    file_tracker,
    manual_batch_id,
    processing_tracker,
    table_configs,
)
from odp.tracker import FileStatus, TrackedFile, classify_staging_object, file_kind, iso, make_file_id
from odp.tracker.items import parse_iso

REPLAY_LEASE_SECONDS = 3600  # long enough to move every file of a large table; released at the end


@dataclass
class Plan:
    """What a command will do: lines for the operator, and the change (None: nothing to change)."""

    title: str
    lines: list[str] = field(default_factory=list)
    change: Callable[[], list[str]] | None = None

    @property
    def changes_something(self) -> bool:
        return self.change is not None

    def render(self) -> str:
        return "\n".join([self.title, *(f"  {line}" for line in self.lines)])

    def apply(self) -> list[str]:
        """Do the change; returns what was done, one line each."""
        return self.change() if self.change is not None else []


def load_table(backend: OperatorBackend, table_id: str) -> TableConfig:
    """The table's runtime configuration (table_config).

    Raises:
        OperationError: no such table in table_config.
    """
    config = table_configs(backend).find(table_id)
    if config is None:
        raise OperationError(f"{table_id}: no table_config item in {backend.environment}; check the id (status lists)")
    return config


def find_file(backend: OperatorBackend, table_id: str, key: str, status: FileStatus) -> TrackedFile:
    """The file_tracker item of ``key`` with this status.

    Raises:
        OperationError: no such file (the message lists what the table has in that status).
    """
    candidates = file_tracker(backend).files(table_id, status)
    for tracked in candidates:
        if tracked.key == key:
            return tracked
    have = ", ".join(f.key for f in candidates[:10]) or "none"
    raise OperationError(f"{table_id}: no {status.value} file {key!r} in file_tracker ({status.value}: {have})")


# -- file quarantine / release ---------------------------------------------------------------------


def plan_quarantine(backend: OperatorBackend, table_id: str, key: str, reason: str) -> Plan:
    tracked = find_file(backend, table_id, key, FileStatus.LANDED)
    files = file_tracker(backend)
    text = f"quarantined by an operator: {reason}"

    def change() -> list[str]:
        if not files.quarantine(tracked, text):
            raise OperationError(f"{key} is no longer landed (a run processed it meanwhile); nothing changed")
        return [f"quarantined {key}"]

    return Plan(
        f"quarantine {key} of {table_id}",
        [
            f"file_tracker: landed -> quarantined, reason {text!r}",
            "its table's runs go on without it until it is released (python -m odp file release)",
        ],
        change,
    )


def plan_release(backend: OperatorBackend, table_id: str, key: str) -> Plan:
    tracked = find_file(backend, table_id, key, FileStatus.QUARANTINED)
    files = file_tracker(backend)

    def change() -> list[str]:
        if not files.release(tracked):
            raise OperationError(f"{key} is no longer quarantined; nothing changed")
        return [f"released {key}: landed, applied by the next run of {table_id}"]

    return Plan(
        f"release {key} of {table_id}",
        [
            f"quarantined since {tracked.quarantined_at}: {tracked.last_error}",
            "file_tracker: quarantined -> landed (attempts start afresh)",
            "the next run applies it in its order: current tables keep newer rows and committed deletes "
            "(event-time ordering, tombstones); historical tables append its changes",
        ],
        change,
    )


# -- leases ----------------------------------------------------------------------------------------


def plan_lease_release(backend: OperatorBackend, table_id: str, holder: str) -> Plan:
    processing = processing_tracker(backend)
    state = processing.state(table_id)
    if state.lease_owner is None:
        return Plan(f"release the lease of {table_id}", ["no run holds it: nothing to do"])
    if state.lease_owner != holder:
        raise OperationError(f"{table_id}: the lease is held by {state.lease_owner}, not {holder}; nothing changed")
    now = int(datetime.now(UTC).timestamp())
    job = state.lease_job_run
    ended = backend.job_runs.ended(job) if job is not None and backend.job_runs is not None else None
    lines = [
        f"held by {holder}" + (f" (job run {job.run_id} of {job.job_name})" if job else ""),
        f"expires {iso(datetime.fromtimestamp(state.lease_expires_at or 0, UTC))}"
        + (" (expired)" if not state.lease_is_held(now) else ""),
        f"its job run: {ended}" if ended else "its job run has not ended (or is unknown): release only if it is stuck",
        f"processing_tracker: remove the lease, on the condition that {holder} still holds it",
    ]

    def change() -> list[str]:
        if not processing.release(table_id, holder):
            raise OperationError(f"{table_id}: {holder} no longer holds the lease; nothing changed")
        return [f"released the lease of {holder} on {table_id}"]

    return Plan(f"release the lease of {table_id}", lines, change)


# -- retry -----------------------------------------------------------------------------------------


def plan_retry(backend: OperatorBackend, table_id: str) -> Plan:
    config = load_table(backend, table_id)
    pending = file_tracker(backend).pending_summary(table_id)
    batch_id = manual_batch_id()
    state = processing_tracker(backend).state(table_id)
    lines = [
        f"{pending.files} pending file(s), {pending.bytes} bytes",
        f"run the File Processor of cadence {config.cadence} for {table_id} now (batch {batch_id})",
    ]
    if state.lease_is_held(int(datetime.now(UTC).timestamp())):
        lines.append(f"note: {state.lease_owner} holds the lease; the run skips the table unless that run has ended")
    if not config.is_active:
        lines.append("note: the table is inactive in table_config: the run leaves its files landed")
    if state.held_at is not None:
        lines.insert(
            0,
            f"processing_tracker: release the hold (held since {state.held_at} after {state.failed_runs} failed runs "
            "in a row); its failed runs are counted afresh and the Batch Manager plans it again",
        )

    def change() -> list[str]:
        released = [f"released the hold on {table_id}"] if processing_tracker(backend).release_hold(table_id) else []
        return [*released, backend.start_run(config.cadence, [table_id], batch_id)]

    return Plan(f"retry {table_id}", lines, change)


# -- replay and backfill ---------------------------------------------------------------------------


def tracked_from_staged(obj: StagedObject, config: TableConfig, now: datetime) -> TrackedFile | None:
    """Pure: the landed file_tracker item the File Manager would make for a staged object (None: skipped)."""
    staging_key, _ = classify_staging_object(obj.key, obj.size)
    if staging_key is None or staging_key.table_id != config.table_id:
        return None
    return TrackedFile(
        table_id=config.table_id,
        file_id=make_file_id(obj.bucket, obj.key, obj.etag),
        bucket=obj.bucket,
        key=obj.key,
        size=obj.size,
        etag=obj.etag,
        landed_at=iso(now),
        file_kind=file_kind(staging_key.file_name, config.format),
        registered_at=iso(now),
    )


def untracked_staged(
    staged: list[StagedObject], known: set[tuple[str, str]], config: TableConfig, now: datetime
) -> list[TrackedFile]:
    """Pure: staged data files of the table that no tracker item knows by (key, ETag), as landed items."""
    found = [tracked_from_staged(obj, config, now) for obj in staged if (obj.key, obj.etag.strip('"')) not in known]
    return [tracked for tracked in found if tracked is not None]


def plan_backfill(backend: OperatorBackend, table_id: str) -> Plan:
    """Bring a new table up from what staging already holds: unregistered files, and files never announced."""
    config = load_table(backend, table_id)
    files = file_tracker(backend)
    tracked = files.files(table_id) + files.processed_files(table_id)
    known = {(f.key, f.content_tag) for f in tracked}
    unregistered = [f for f in tracked if f.status in (FileStatus.UNREGISTERED, FileStatus.UNMATCHED)]
    fresh = untracked_staged(backend.staged_objects(config.staging_prefix), known, config, datetime.now(UTC))
    lines = [
        f"staging prefix {config.staging_prefix}",
        f"{len(unregistered)} unregistered file(s) -> landed",
        f"{len(fresh)} staged file(s) never registered -> landed",
        f"already tracked: {sum(f.status is FileStatus.LANDED for f in tracked)} landed, "
        f"{sum(f.status is FileStatus.PROCESSED for f in tracked)} processed (left as they are)",
    ]
    if not config.is_active:
        raise OperationError(f"{table_id} is inactive in table_config: activate it (config, deploy) before a backfill")
    if not unregistered and not fresh:
        return Plan(f"backfill {table_id}", [*lines, "nothing to do"])

    def change() -> list[str]:
        promoted = files.promote_unregistered(table_id, config.format.value)
        registered = sum(files.register(f) for f in fresh)
        return [f"{promoted} unregistered and {registered} staged file(s) now landed; the next run applies them"]

    return Plan(f"backfill {table_id}", lines, change)


def plan_replay(backend: OperatorBackend, table_id: str) -> Plan:
    """Rebuild a table from scratch: every staged and processed file landed again, the table's data deleted.

    Order (crash-safe, and safe to run again): take the lease; move processed files back to landed
    (while the old table exists, a run would reconcile them from its commits, never apply them twice);
    register staged files never tracked; delete the table and its tombstones; release the lease.
    """
    config = load_table(backend, table_id)
    files = file_tracker(backend)
    processing = processing_tracker(backend)
    history = files.processed_files(table_id)
    # Files a historical table refused as known content were never applied: they stay in history.
    processed = [f for f in history if f.status is FileStatus.PROCESSED]
    skipped = len(history) - len(processed)
    current = files.files(table_id)
    known = {(f.key, f.content_tag) for f in history + current}
    fresh = untracked_staged(backend.staged_objects(config.staging_prefix), known, config, datetime.now(UTC))
    raw_root = backend.raw_root(config.cadence)
    paths = [table_base_path(raw_root, config.database, config.target_table)]
    if config.mode is TableMode.CURRENT:
        paths.append(tombstone_path(raw_root, config.database, config.target_table))
    quarantined = [f for f in current if f.status is FileStatus.QUARANTINED]
    lines = [
        f"take the lease of {table_id} (refused while a run holds it)",
        f"{len(processed)} processed file(s): file_tracker_history -> file_tracker, landed, replay=true"
        + (f" ({skipped} never applied stay in history)" if skipped else ""),
        f"{len(fresh)} staged file(s) never registered -> landed",
        f"{sum(f.status is FileStatus.LANDED for f in current)} landed file(s) stay landed",
        *(f"delete {path}" for path in paths),
        "release the lease; the next run (or python -m odp retry) rebuilds the table from every landed file",
    ]
    if quarantined:
        keys = ", ".join(f.key for f in quarantined)
        lines.append(f"{len(quarantined)} quarantined file(s) stay out until released: {keys}")
    owner = f"odp-cli-replay-{uuid.uuid4().hex[:8]}"

    def change() -> list[str]:
        if not processing.acquire(table_id, owner, lease_seconds=REPLAY_LEASE_SECONDS):
            holder = processing.state(table_id).lease_owner
            raise OperationError(f"{table_id}: {holder} holds the lease; wait for its run (or release a stuck lease)")
        try:
            moved = files.reland(processed, replay=True)
            registered = sum(files.register(f) for f in fresh)
            deleted = sum(backend.delete_table_data(path) for path in paths)
        finally:
            processing.release(table_id, owner)
        return [
            f"{moved} processed file(s) landed again, {registered} staged file(s) registered",
            f"deleted {deleted} object(s) of the table's data; the next run rebuilds {table_id}",
        ]

    return Plan(f"replay {table_id} from scratch", lines, change)


def age(landed_at: str | None, now: datetime) -> str:
    """Pure: how long ago, as ``3h 02m`` / ``5m 10s`` / ``-``."""
    if not landed_at:
        return "-"
    seconds = max(0, int((now - parse_iso(landed_at)).total_seconds()))
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m {seconds:02d}s"
