"""Typed tracker records and their DynamoDB items (pydantic, one mapping each: :class:`StoredRecord`).

- :class:`TrackedFile`: a file_tracker / file_tracker_history item.
- :class:`TableRun`: a processing_tracker_history item, and the summary of a table's last run on
  its processing_tracker item.
- :class:`TableState`: a processing_tracker item: the table's lease and its last :class:`TableRun`.

The processing_tracker item keeps its flat ``last_*`` attributes (the names every release wrote);
:data:`LAST_RUN_ATTRIBUTES` maps them to the embedded run once, for reading and for writing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import Field

from odp.dynamodb import StoredRecord, to_attribute
from odp.tracker.statuses import FileKind, FileStatus, RunStatus, WriteStrategy

# Sparse attribute copied from table_id only while a file is landed: the pending_by_table index
# therefore holds exactly the pending files, ordered by landed_at.
PENDING_ATTRIBUTE = "pending_table_id"
PENDING_INDEX = "pending_by_table"


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """ISO-8601 in UTC with milliseconds: sorts as text in the same order as in time."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


# What a replay clears on a processed file it lands again.
_CLEARED_ON_RELAND = (
    "processed_at",
    "commit_instant",
    "run_id",
    "expires_at",
    "skip_reason",
    "attempts",
    "quarantined_at",
)


class TrackedFile(StoredRecord):
    """One S3 object version in file_tracker (landed / unregistered) or file_tracker_history (processed)."""

    table_id: str
    file_id: str
    bucket: str
    key: str
    size: int
    etag: str
    landed_at: str
    file_kind: FileKind
    status: FileStatus = FileStatus.LANDED
    version_id: str | None = None
    sequencer: str | None = None
    event_time: str | None = None
    processed_at: str | None = None
    commit_instant: str | None = None
    run_id: str | None = None
    expires_at: int | None = None  # TTL, epoch seconds, history only
    registered_at: str | None = None  # when the File Manager recorded it (landed_at is when S3 did)
    # Set by an operator on a landed file: apply it even if a file with the same content was applied.
    replay: bool | None = None
    skip_reason: str | None = None  # history only: why a file was not applied (status skipped_*)
    attempts: int | None = None  # runs of its table this file has failed since it landed (or was released)
    last_error: str | None = None  # the error of the last run it failed, kept when it is quarantined
    quarantined_at: str | None = None

    @property
    def uri(self) -> str:
        """Where the job reads the file: ``s3://bucket/key``; the sandbox maps buckets to folders."""
        return f"s3://{self.bucket}/{self.key}"

    @property
    def file_name(self) -> str:
        return self.key.rsplit("/", 1)[-1]

    def to_item(self) -> dict[str, Any]:
        item = super().to_item()
        if self.status is FileStatus.LANDED:
            item[PENDING_ATTRIBUTE] = self.table_id
        return item

    def processed(
        self,
        *,
        commit_instant: str,
        run_id: str,
        processed_at: str,
        expires_at: int | None,
        status: FileStatus = FileStatus.PROCESSED,
        skip_reason: str | None = None,
    ) -> TrackedFile:
        """This file as file_tracker_history stores it once ``commit_instant`` applied (or skipped) it."""
        return self.model_copy(
            update={
                "status": status,
                "commit_instant": commit_instant,
                "run_id": run_id,
                "processed_at": processed_at,
                "expires_at": expires_at,
                "skip_reason": skip_reason,
            }
        )

    def relanded(self, *, replay: bool) -> TrackedFile:
        """This processed file landed again (for a replay): the processing and failure fields cleared."""
        return self.model_copy(
            update=dict.fromkeys(_CLEARED_ON_RELAND)
            | {"status": FileStatus.LANDED, "replay": True if replay else self.replay}
        )

    @property
    def content_tag(self) -> str:
        """The ETag without quotes: equal for byte-identical objects uploaded the same way."""
        return self.etag.strip().strip('"')


@dataclass(frozen=True)
class JobRunRef:
    """One run of a Glue job (``--JOB_NAME`` / ``--JOB_RUN_ID``): who holds a table's lease (not a record)."""

    job_name: str
    run_id: str


class TableRun(StoredRecord):
    """One run of one table: the one record of its outcome, for every layer.

    Stored as a processing_tracker_history row (:meth:`to_history_item`) and as the ``last_*``
    summary on processing_tracker (:class:`TableState` embeds it); returned by the File Processor
    job, summarised by the Batch Manager and reported by the sandbox. The excluded fields at the
    end describe the job's own work on the table and are not stored.
    """

    table_id: str
    run_id: str
    started_at: str
    status: RunStatus
    finished_at: str | None = None
    files: int = 0
    rows: int = 0
    inserts: int = 0
    updates: int = 0
    deletes: int = 0
    seconds: float = 0.0
    commit_instant: str | None = None
    error: str | None = None
    error_trace: str | None = Field(default=None, repr=False)  # stored; too long for a log line
    cadence: str | None = None
    batch_id: str | None = None  # the Batch Manager's batch (job argument odp_batch_id) this run belonged to
    duplicate_files: int = 0  # historical tables: files not applied, their content was applied already
    quarantined_files: tuple[str, ...] = ()  # keys of the files this run quarantined (etl/file_processor/poison.py)
    # A failed run: the table's failed runs in a row, this one included, and whether they reached max_table_attempts
    # (then the table is held: the Batch Manager leaves it out until python -m odp retry)
    failed_runs: int | None = None
    held: bool | None = None
    # new_columns: ignore: the columns outside the table's columns this run dropped, and how many values
    ignored_columns: tuple[str, ...] = ()
    ignored_values: int = 0
    dpu_seconds: float | None = (
        None  # the run's share of the job's DPU-seconds (etl.file_processor.cost); None = unknown
    )
    # How the commit wrote the changes (etl.raw_table.write_strategy) and why, in one line; None: no choice was made
    # (no commit, a full load, a new table, a historical table)
    write_strategy: WriteStrategy | None = None
    write_reason: str | None = None
    # Where a completed run's time went: seconds of each step (etl.file_processor.steps: plan, reconcile, read, apply,
    # record) and of the write's phases inside apply (write.prepare, write.tombstones, write.hudi, write.after:
    # etl.raw_table.batch.WritePhase); None: a run that made no step (skipped, failed)
    step_seconds: dict[str, float] | None = None
    # Not stored: what the job did besides applying the files.
    base_path: str | None = Field(default=None, exclude=True)  # the Hudi table the run wrote
    reconciled: int = Field(default=0, exclude=True)  # landed files found already committed, moved without re-applying
    stale_dropped: int = Field(default=0, exclude=True)  # current mode: upserts not newer than their key's delete
    # Tables (main / tombstones) whose first commit never completed, removed.
    discarded: tuple[str, ...] = Field(default=(), exclude=True)

    @property
    def run_at(self) -> str:
        """Sort key of the history row: start time, then run id (two runs can start in one ms)."""
        return f"{self.started_at}#{self.run_id}"

    def to_history_item(self, *, expires_at: int | None = None) -> dict[str, Any]:
        item = self.to_item() | {"run_at": self.run_at}
        if expires_at is not None:
            item["expires_at"] = expires_at
        return item

    def last_run_attributes(self, finished_at: str) -> tuple[dict[str, Any], list[str]]:
        """Its summary on the processing_tracker item: the ``last_*`` attributes to set and those to remove.

        :meth:`TableState.from_item` reads them back. A failed run keeps the table's last good
        commit instant and stores its error and trace; a completed run removes the last error.
        """
        values = {name: getattr(self, name) for name in _FINISHED_FIELDS} | {"finished_at": finished_at}
        removes: list[str] = []
        if self.batch_id is not None:
            values["batch_id"] = self.batch_id
        if not self.quarantined_files:
            removes.append(LAST_RUN_ATTRIBUTES["quarantined_files"])
            del values["quarantined_files"]
        if self.status.failed:
            values |= {"error": self.error or "unknown error", "error_trace": self.error_trace or ""}
        else:
            removes += [LAST_RUN_ATTRIBUTES["error"], LAST_RUN_ATTRIBUTES["error_trace"]]
            if self.commit_instant:
                values["commit_instant"] = self.commit_instant
        return {LAST_RUN_ATTRIBUTES[name]: to_attribute(value) for name, value in values.items()}, removes


# TableRun field -> its attribute on the processing_tracker item (the summary of the table's last run).
# acquire sets the first three for the run it starts; finish sets the rest (last_run_attributes).
LAST_RUN_ATTRIBUTES = {
    "run_id": "last_run_id",
    "started_at": "last_run_at",
    "batch_id": "last_batch_id",
    "finished_at": "last_finished_at",
    "files": "last_files",
    "rows": "last_rows",
    "inserts": "last_inserts",
    "updates": "last_updates",
    "deletes": "last_deletes",
    "seconds": "last_seconds",
    "quarantined_files": "last_quarantined_files",
    "commit_instant": "last_commit_instant",
    "error": "last_error",
    "error_trace": "last_error_trace",
}
# What every finish writes (the conditional ones are added by last_run_attributes).
_FINISHED_FIELDS = ("run_id", "files", "rows", "inserts", "updates", "deletes", "seconds", "quarantined_files")
# While a run holds the lease only these describe it; the counts on the item are the previous run's.
_STARTED_FIELDS = ("run_id", "started_at", "batch_id", "commit_instant")


def run_fields(run: TableRun | None, names: tuple[str, ...]) -> dict[str, Any]:
    """These fields of a run, or their defaults (zero counts) when the table has no run: a report line's columns."""
    return {name: getattr(run, name) if run is not None else TableRun.model_fields[name].default for name in names}


class TableState(StoredRecord):
    """The processing_tracker item of a table: its lease and its last run.

    ``last_run`` is the run that last took the lease: while it works (status ``updating_table``)
    only its id, start and batch are known; once it finished, the outcome ProcessingTracker.finish
    recorded (its cadence, duplicate count and DPU share are on its history row only). Its
    ``commit_instant`` is the table's last good commit (a failed run keeps the one before it).
    """

    table_id: str
    status: RunStatus | None = None
    lease_owner: str | None = None
    lease_expires_at: int | None = None
    # The Glue job run holding the lease (recorded by acquire), so a later run can ask whether it ended.
    lease_job_name: str | None = None
    lease_job_run_id: str | None = None
    updated_at: str | None = None
    last_run: TableRun | None = None
    # Failed runs in a row (none after a completed run), and when they held the table (max_table_attempts)
    failed_runs: int | None = None
    held_at: str | None = None

    @property
    def lease_job_run(self) -> JobRunRef | None:
        if self.lease_job_name and self.lease_job_run_id:
            return JobRunRef(self.lease_job_name, self.lease_job_run_id)
        return None

    def finished_run(self) -> TableRun | None:
        """The last run if it finished (any recorded end: :attr:`RunStatus.finished`); None while a run holds it."""
        return self.last_run if self.status is not None and self.status.finished else None

    def lease_is_held(self, now_epoch: int) -> bool:
        """A lease counts while its expiry lies in the future; at or past it, any run may take it over."""
        return self.lease_owner is not None and (self.lease_expires_at or 0) > now_epoch

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> TableState:
        """Raises: pydantic.ValidationError: the item is not a processing_tracker item."""
        state = {name: value for name, value in item.items() if name not in _LAST_RUN_NAMES}
        if item.get(LAST_RUN_ATTRIBUTES["run_id"]) is not None:
            status = item.get("status") or RunStatus.UPDATING
            wanted = LAST_RUN_ATTRIBUTES if RunStatus(status).finished else _STARTED_FIELDS
            run = {name: item[LAST_RUN_ATTRIBUTES[name]] for name in wanted if LAST_RUN_ATTRIBUTES[name] in item}
            state["last_run"] = {"table_id": item["table_id"], "status": status, "started_at": ""} | run
        return cls.model_validate(state)

    def to_item(self) -> dict[str, Any]:
        """The flat processing_tracker item, as acquire and finish write it (``last_run`` as ``last_*``)."""
        item = super().to_item()
        run = item.pop("last_run", None) or {}
        flat = {LAST_RUN_ATTRIBUTES[name]: value for name, value in run.items() if name in LAST_RUN_ATTRIBUTES}
        return item | {name: value for name, value in flat.items() if value != []}


_LAST_RUN_NAMES = frozenset(LAST_RUN_ATTRIBUTES.values())
