"""Typed tracker items and their DynamoDB form (boto3 resource style: str, int, bool)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from odp.tracker.statuses import FileKind, FileStatus, TableStatus

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


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value)
    return value


@dataclass(frozen=True)
class TrackedFile:
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
    expires_at: int | None = field(default=None)  # TTL, epoch seconds, history only
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
        item = {name: value for name, value in asdict(self).items() if value is not None}
        item["file_kind"] = self.file_kind.value
        item["status"] = self.status.value
        if self.status is FileStatus.LANDED:
            item[PENDING_ATTRIBUTE] = self.table_id
        return item

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> TrackedFile:
        known = {name: _plain(item[name]) for name in cls.__dataclass_fields__ if name in item}
        known["file_kind"] = FileKind(known["file_kind"])
        known["status"] = FileStatus(known["status"])
        return cls(**known)

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
        return replace(
            self,
            status=status,
            commit_instant=commit_instant,
            run_id=run_id,
            processed_at=processed_at,
            expires_at=expires_at,
            skip_reason=skip_reason,
        )

    @property
    def content_tag(self) -> str:
        """The ETag without quotes: equal for byte-identical objects uploaded the same way."""
        return self.etag.strip().strip('"')


@dataclass(frozen=True)
class JobRunRef:
    """One run of a Glue job (``--JOB_NAME`` / ``--JOB_RUN_ID``): who holds a table's lease."""

    job_name: str
    run_id: str


@dataclass(frozen=True)
class TableRun:
    """One run of one table: the one record of its outcome, for every layer.

    Stored as a processing_tracker_history row (:meth:`to_history_item`) and as the ``last_*``
    summary on processing_tracker (:meth:`TableState.last_run` reads it back); returned by the File
    Processor job, summarised by the Batch Manager and reported by the sandbox. The fields after
    ``dpu_seconds`` describe the job's own work on the table and are not stored.
    """

    table_id: str
    run_id: str
    started_at: str
    status: TableStatus
    finished_at: str | None = None
    files: int = 0
    rows: int = 0
    inserts: int = 0
    updates: int = 0
    deletes: int = 0
    seconds: float = 0.0
    commit_instant: str | None = None
    error: str | None = None
    error_trace: str | None = field(default=None, repr=False)  # stored; too long for a log line
    cadence: str | None = None
    batch_id: str | None = None  # the Batch Manager's batch (job argument odp_batch_id) this run belonged to
    duplicate_files: int = 0  # historical tables: files not applied, their content was applied already
    quarantined_files: tuple[str, ...] = ()  # keys of the files this run quarantined (they failed it too often)
    dpu_seconds: float | None = None  # the run's share of the Glue job's DPU-seconds (etl.cost); None = unknown
    # Not stored: what the job did besides applying the files.
    base_path: str | None = None  # the Hudi table the run wrote
    reconciled: int = 0  # landed files found already committed and moved without re-applying them
    stale_dropped: int = 0  # current mode: incoming upserts not newer than their key's committed delete
    discarded: tuple[str, ...] = ()  # tables (main / tombstones) whose first commit never completed, removed

    @property
    def run_at(self) -> str:
        """Sort key of the history row: start time, then run id (two runs can start in one ms)."""
        return f"{self.started_at}#{self.run_id}"

    def to_history_item(self, *, expires_at: int | None = None) -> dict[str, Any]:
        item = {name: value for name, value in asdict(self).items() if value is not None and name not in _NOT_STORED}
        item["status"] = self.status.value
        item["seconds"] = Decimal(str(round(self.seconds, 3)))
        if self.dpu_seconds is not None:
            item["dpu_seconds"] = Decimal(str(round(self.dpu_seconds, 3)))
        item["run_at"] = self.run_at
        if self.quarantined_files:
            item["quarantined_files"] = list(self.quarantined_files)
        else:
            item.pop("quarantined_files", None)
        if expires_at is not None:
            item["expires_at"] = expires_at
        return item

    def last_run_attributes(self, finished_at: str) -> tuple[dict[str, Any], list[str]]:
        """Its summary on the processing_tracker item: the ``last_*`` attributes to set and those to remove.

        :meth:`TableState.last_run` reads them back. A failed run keeps the table's last good commit
        instant and stores its error and trace; a completed run removes the last error.
        """
        values: dict[str, Any] = {
            "last_run_id": self.run_id,
            "last_finished_at": finished_at,
            "last_files": self.files,
            "last_rows": self.rows,
            "last_inserts": self.inserts,
            "last_updates": self.updates,
            "last_deletes": self.deletes,
            "last_seconds": Decimal(str(round(self.seconds, 3))),
        }
        removes: list[str] = []
        if self.batch_id is not None:
            values["last_batch_id"] = self.batch_id
        if self.quarantined_files:
            values["last_quarantined_files"] = list(self.quarantined_files)
        else:
            removes.append("last_quarantined_files")
        if self.status is TableStatus.REFRESH_ERROR:
            values["last_error"] = self.error or "unknown error"
            values["last_error_trace"] = self.error_trace or ""
        else:
            removes += ["last_error", "last_error_trace"]
            if self.commit_instant:
                values["last_commit_instant"] = self.commit_instant
        return values, removes

    @classmethod
    def from_history_item(cls, item: dict[str, Any]) -> TableRun:
        known = {name: item[name] for name in cls.__dataclass_fields__ if name in item and name not in _NOT_STORED}
        for name in ("files", "rows", "inserts", "updates", "deletes", "duplicate_files"):
            if name in known:
                known[name] = int(known[name])
        for name in ("seconds", "dpu_seconds"):
            if name in known:
                known[name] = float(known[name])
        known["status"] = TableStatus(known["status"])
        known["quarantined_files"] = tuple(known.get("quarantined_files") or ())
        return cls(**known)


_NOT_STORED = frozenset(("base_path", "reconciled", "stale_dropped", "discarded"))


def run_fields(run: TableRun | None, names: Iterable[str]) -> dict[str, Any]:
    """These fields of a run, or their defaults (zero counts) when the table has no run: a report line's columns."""
    defaults = {spec.name: spec.default for spec in fields(TableRun)}
    return {name: getattr(run, name) if run is not None else defaults[name] for name in names}


@dataclass(frozen=True)
class TableState:
    """The processing_tracker item of a table: its lease and the outcome of its last run."""

    table_id: str
    status: TableStatus | None = None
    lease_owner: str | None = None
    lease_expires_at: int | None = None
    last_run_id: str | None = None
    last_run_at: str | None = None
    last_commit_instant: str | None = None
    last_error: str | None = None
    last_error_trace: str | None = None
    updated_at: str | None = None
    # The outcome of the last finished run (ProcessingTracker.finish), so a summary needs no history query.
    last_batch_id: str | None = None
    last_finished_at: str | None = None
    last_files: int | None = None
    last_rows: int | None = None
    last_inserts: int | None = None
    last_updates: int | None = None
    last_deletes: int | None = None
    last_seconds: float | None = None
    # The Glue job run holding the lease (recorded by acquire), so a later run can ask whether it ended.
    lease_job_name: str | None = None
    lease_job_run_id: str | None = None
    # Keys of the files the last finished run quarantined (empty when it quarantined none).
    last_quarantined_files: tuple[str, ...] = ()

    @property
    def lease_job_run(self) -> JobRunRef | None:
        if self.lease_job_name and self.lease_job_run_id:
            return JobRunRef(self.lease_job_name, self.lease_job_run_id)
        return None

    def last_run(self) -> TableRun | None:
        """The last finished run (completed or refresh_error) as ProcessingTracker.finish summarised it here.

        None while no run has finished, or while a run holds the table (status updating_table). The
        commit instant is the table's last good one (a failed run keeps it); the run's start time,
        trace and cadence are on its history row only.
        """
        if self.last_run_id is None or self.status not in (TableStatus.COMPLETED, TableStatus.REFRESH_ERROR):
            return None
        return TableRun(
            self.table_id,
            self.last_run_id,
            self.last_run_at or "",
            self.status,
            finished_at=self.last_finished_at,
            files=self.last_files or 0,
            rows=self.last_rows or 0,
            inserts=self.last_inserts or 0,
            updates=self.last_updates or 0,
            deletes=self.last_deletes or 0,
            seconds=self.last_seconds or 0.0,
            commit_instant=self.last_commit_instant,
            error=self.last_error,
            batch_id=self.last_batch_id,
            quarantined_files=self.last_quarantined_files,
        )

    def lease_is_held(self, now_epoch: int) -> bool:
        """A lease counts while its expiry lies in the future; at or past it, any run may take it over."""
        return self.lease_owner is not None and (self.lease_expires_at or 0) > now_epoch

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> TableState:
        known = {name: _plain(item[name]) for name in cls.__dataclass_fields__ if name in item}
        if "status" in known:
            known["status"] = TableStatus(known["status"])
        if "last_seconds" in item:
            known["last_seconds"] = float(item["last_seconds"])
        known["last_quarantined_files"] = tuple(known.get("last_quarantined_files") or ())
        return cls(**known)
