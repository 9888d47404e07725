"""The trackers over DynamoDB: files landed and processed, table leases, run history.

Small repositories over injected boto3 ``dynamodb.Table`` resources. The File Manager registers
files, the Batch Manager reads pending work and leases, the Glue job leases tables, reads their
files and records the outcome. Every write that could race is conditional.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from boto3.dynamodb.conditions import Attr, Key
from botocore.exceptions import ClientError

from odp.dynamodb import table_items
from odp.naming import TrackerTableNames
from odp.tracker.conditions import (
    LeaseLostError,
    is_cancelled_by_condition,
    is_conditional_failure,
)
from odp.tracker.items import (
    LAST_RUN_ATTRIBUTES,
    PENDING_ATTRIBUTE,
    PENDING_INDEX,
    JobRunRef,
    TableRun,
    TableState,
    TrackedFile,
    iso,
    utc_now,
)
from odp.tracker.job_runs import JobRuns
from odp.tracker.keys import file_kind
from odp.tracker.ledger import RunLedger
from odp.tracker.processed_files import BATCH_GET_LIMIT, Clock, ProcessedFiles, batch_get
from odp.tracker.statuses import FileStatus, RunStatus


@dataclass(frozen=True)
class LeaseAnswer:
    """What :meth:`ProcessingTracker.take` did: ``taken``; ``took_over`` says from which ended run;
    ``refused`` names the holder and its expiry."""

    taken: bool
    took_over: str | None = None
    refused: str | None = None


@dataclass(frozen=True)
class PendingSummary:
    """Pending work of one table, as the Batch Manager needs it."""

    table_id: str
    files: int
    bytes: int
    oldest_landed_at: str | None


class FileTracker(ProcessedFiles):
    """file_tracker (landed, unregistered, unmatched and quarantined files) and, through :class:`ProcessedFiles`,
    file_tracker_history (processed files)."""

    def register(self, tracked: TrackedFile) -> bool:
        """Record a file once. Returns False when it is already tracked or already processed.

        One transaction checks file_tracker_history and puts into file_tracker, both conditionally,
        so a message redelivered after its file was processed cannot bring the file back.
        """
        # The client of a boto3 Table resource (de)serialises attribute values itself: pass plain values.
        key = {"table_id": tracked.table_id, "file_id": tracked.file_id}
        try:
            self._client.transact_write_items(
                TransactItems=[
                    {
                        "ConditionCheck": {
                            "TableName": self._history.name,
                            "Key": key,
                            "ConditionExpression": "attribute_not_exists(file_id)",
                        }
                    },
                    {
                        "Put": {
                            "TableName": self._tracker.name,
                            "Item": tracked.to_item(),
                            "ConditionExpression": "attribute_not_exists(file_id)",
                        }
                    },
                ]
            )
        except ClientError as error:
            if is_cancelled_by_condition(error):
                return False
            raise
        return True

    def landed_files(self, table_id: str) -> list[TrackedFile]:
        """Every landed file of a table (consistent read of the base table), in key order."""
        return self.files(table_id, FileStatus.LANDED)

    def unregistered_files(self, table_id: str) -> list[TrackedFile]:
        """Files kept while the table had no active configuration, in key order."""
        return self.files(table_id, FileStatus.UNREGISTERED)

    def unmatched_files(self) -> list[TrackedFile]:
        """Every unmatched file (no entry or rule of its source takes its table), in key order.

        A filtered scan: file_tracker holds pending files only, and this is an operator's question
        (python -m odp status --unmatched), never a job's.
        """
        items = table_items(self._tracker, "scan", FilterExpression=Attr("status").eq(FileStatus.UNMATCHED.value))
        return sorted((TrackedFile.from_item(item) for item in items), key=lambda f: (f.key, f.landed_at))

    def promote_unregistered(self, table_id: str, source_format: str | None = None) -> int:
        """Make a newly configured table's unregistered (or unmatched) files pending (status landed); returns how many.

        The file kind is decided again with the table's source format (only DMS names full loads
        LOAD*). Each update is conditional on the file still being unregistered, so running this
        twice, or beside the File Manager, changes nothing twice.
        """
        return sum(
            self._move_status(
                tracked,
                tracked.status,
                f"SET #status = :to, {PENDING_ATTRIBUTE} = :table, file_kind = :kind",
                {
                    ":to": FileStatus.LANDED.value,
                    ":table": tracked.table_id,
                    ":kind": file_kind(tracked.file_name, source_format).value,
                },
            )
            for tracked in self.files(table_id)
            if tracked.status in (FileStatus.UNREGISTERED, FileStatus.UNMATCHED)
        )

    def _move_status(self, tracked: TrackedFile, expected: FileStatus, update: str, values: dict[str, Any]) -> bool:
        """One conditional update of a file_tracker item whose status is ``expected``; False if it is not.

        ``update`` may name ``#status``; ``values`` holds every other placeholder it uses.
        """
        try:
            self._tracker.update_item(
                Key={"table_id": tracked.table_id, "file_id": tracked.file_id},
                UpdateExpression=update,
                ConditionExpression="#status = :expected",
                ExpressionAttributeNames={"#status": "status"},
                ExpressionAttributeValues={**values, ":expected": expected.value},
            )
        except ClientError as error:
            if is_conditional_failure(error):
                return False
            raise
        return True

    def files(self, table_id: str, status: FileStatus | None = None) -> list[TrackedFile]:
        """file_tracker items of a table (every status, or one), in key order."""
        query: dict[str, Any] = {"KeyConditionExpression": Key("table_id").eq(table_id), "ConsistentRead": True}
        if status is not None:
            query["FilterExpression"] = Attr("status").eq(status.value)
        items = table_items(self._tracker, "query", **query)
        return sorted((TrackedFile.from_item(item) for item in items), key=lambda f: (f.key, f.landed_at))

    def record_failure(self, tracked: TrackedFile, error: str, *, max_attempts: int) -> bool:
        """Count one failed run against a landed file; quarantine it at ``max_attempts``. True if quarantined.

        Conditional on the file still being landed (a file moved or released meanwhile is left alone).
        """
        key = {"table_id": tracked.table_id, "file_id": tracked.file_id}
        try:
            updated = self._tracker.update_item(
                Key=key,
                UpdateExpression="ADD attempts :one SET last_error = :error",
                ConditionExpression="#status = :landed",
                ExpressionAttributeNames={"#status": "status"},
                ExpressionAttributeValues={":one": 1, ":error": error[:4000], ":landed": FileStatus.LANDED.value},
                ReturnValues="ALL_NEW",
            )["Attributes"]
        except ClientError as failure:
            if is_conditional_failure(failure):
                return False
            raise
        if int(updated.get("attempts", 0)) < max_attempts:
            return False
        reason = f"failed {int(updated['attempts'])} runs of its table (max_file_attempts {max_attempts}): {error}"
        return self.quarantine(tracked, reason)

    def quarantine(self, tracked: TrackedFile, reason: str) -> bool:
        """Set a landed file aside: status quarantined, the reason kept, out of the pending index.

        Returns False (nothing changed) when the file is not landed any more.
        """
        return self._move_status(
            tracked,
            FileStatus.LANDED,
            f"SET #status = :to, last_error = :reason, quarantined_at = :now REMOVE {PENDING_ATTRIBUTE}",
            {":to": FileStatus.QUARANTINED.value, ":reason": reason[:4000], ":now": iso(self._clock())},
        )

    def release(self, tracked: TrackedFile) -> bool:
        """Make a quarantined file landed again (attempts start afresh); the next run applies it in key order.

        The last error stays on the item until the file is processed. Returns False when the file is
        not quarantined (nothing changed).
        """
        return self._move_status(
            tracked,
            FileStatus.QUARANTINED,
            f"SET #status = :to, {PENDING_ATTRIBUTE} = :table REMOVE attempts, quarantined_at",
            {":to": FileStatus.LANDED.value, ":table": tracked.table_id},
        )

    def pending_summary(self, table_id: str) -> PendingSummary:
        """Count, bytes and oldest landing time of a table's pending files, from the sparse index."""
        items = table_items(
            self._tracker,
            "query",
            IndexName=PENDING_INDEX,
            KeyConditionExpression=Key(PENDING_ATTRIBUTE).eq(table_id),
            **_PENDING_PROJECTION,
        )
        return summarise_pending([table_id], items)[0]

    def pending_summaries(self, table_ids: Iterable[str]) -> list[PendingSummary]:
        """Pending work of these tables, in their order, from one paginated Scan of the sparse pending index.

        The index holds only landed files (of every cadence), so planning reads pending files, never tables one by
        one: one read for 20,000 tables where a Query per table made 20,000 round trips (docs/decisions/024).
        """
        items = table_items(self._tracker, "scan", IndexName=PENDING_INDEX, **_PENDING_PROJECTION)
        return summarise_pending(table_ids, items)


# What a pending summary reads of an index item ("size" is a reserved word).
_PENDING_PROJECTION: dict[str, Any] = {
    "ProjectionExpression": f"{PENDING_ATTRIBUTE}, #size, landed_at",
    "ExpressionAttributeNames": {"#size": "size"},
}


def summarise_pending(table_ids: Iterable[str], items: Iterable[dict[str, Any]]) -> list[PendingSummary]:
    """Count, bytes and oldest landing time per table of pending-index items, for each of ``table_ids`` in order
    (zero for a table with none); items of other tables are ignored."""
    tallies: dict[str, list[Any]] = {table_id: [0, 0, None] for table_id in table_ids}
    for item in items:
        tally = tallies.get(item[PENDING_ATTRIBUTE])
        if tally is None:
            continue
        tally[0] += 1
        tally[1] += int(item.get("size", 0))
        landed = item.get("landed_at")
        if landed is not None and (tally[2] is None or landed < tally[2]):
            tally[2] = landed
    return [
        PendingSummary(table_id=table_id, files=files, bytes=size, oldest_landed_at=oldest)
        for table_id, (files, size, oldest) in tallies.items()
    ]


class ProcessingTracker:
    """processing_tracker (lease and last outcome per table) and processing_tracker_history."""

    def __init__(
        self, tracker_table: Any, history_table: Any, *, clock: Clock = utc_now, job_runs: JobRuns | None = None
    ) -> None:
        self._tracker = tracker_table
        self._history = history_table
        self._clock = clock
        self._job_runs = job_runs  # answers whether a lease holder's job run has ended (None: never asked)
        self.ledger = RunLedger(tracker_table, history_table, clock=clock)  # each run's record and history

    def _now_epoch(self) -> int:
        return int(self._clock().timestamp())

    def acquire(
        self,
        table_id: str,
        owner: str,
        *,
        lease_seconds: int,
        run_id: str | None = None,
        batch_id: str | None = None,
        job_run: JobRunRef | None = None,
        replacing: str | None = None,
    ) -> bool:
        """Take the table's lease if it is free, expired, or already ours. Sets status updating_table. A lease whose
        expiry equals the current second counts as expired (as in :meth:`TableState.lease_is_held`), so the Batch
        Manager and the job agree on who may take it. ``batch_id`` (optional) is recorded as ``last_batch_id``: a run
        that dies before :meth:`finish` is then still attributed to its batch. ``job_run`` (the Glue job run holding
        the lease) is recorded as ``lease_job_name`` / ``lease_job_run_id``, so a later run can ask Glue whether the
        holder has ended. ``replacing`` takes the lease over from that owner even before it expires (its job run has
        ended); the write is conditional on that owner still holding it, so two runs never take over the same lease.

        Returns False when another run holds an unexpired lease.
        """
        update = _lease_update(
            owner,
            self._clock(),
            lease_seconds=lease_seconds,
            run_id=run_id or owner,
            batch_id=batch_id,
            job_run=job_run,
            replacing=replacing,
        )
        try:
            self._tracker.update_item(Key={"table_id": table_id}, **update)
        except ClientError as error:
            if is_conditional_failure(error):
                return False
            raise
        return True

    def take(
        self,
        table_id: str,
        owner: str,
        *,
        lease_seconds: int,
        job_runs: JobRuns | None,
        run_id: str | None = None,
        batch_id: str | None = None,
        job_run: JobRunRef | None = None,
    ) -> LeaseAnswer:
        """:meth:`acquire`, or take the lease over at once when its holder's job run has ended (``job_runs``:
        FAILED, TIMEOUT, STOPPED, CANCELLED; gone in the sandbox) instead of waiting for it to expire.

        The one lease routine of the File Processor's tables and the dataset job's datasets (``dataset:<name>``).
        """

        def acquire(replacing: str | None = None) -> bool:
            return self.acquire(
                table_id,
                owner,
                lease_seconds=lease_seconds,
                run_id=run_id,
                batch_id=batch_id,
                job_run=job_run,
                replacing=replacing,
            )

        if acquire():
            return LeaseAnswer(taken=True)
        holder = self.state(table_id)
        holder_run = holder.lease_job_run
        ended = job_runs.ended(holder_run) if holder_run is not None and job_runs is not None else None
        if ended is not None and holder.lease_owner is not None and acquire(replacing=holder.lease_owner):
            return LeaseAnswer(
                taken=True, took_over=f"took over the lease of run {holder.lease_owner} at once: {ended}"
            )
        expires = datetime.fromtimestamp(holder.lease_expires_at or 0, UTC)
        job = f" (job run {holder_run.run_id} of {holder_run.job_name})" if holder_run is not None else ""
        return LeaseAnswer(
            taken=False,
            refused=f"leased by another run: {holder.lease_owner}{job} holds the table until {iso(expires)}",
        )

    def renew(self, table_id: str, owner: str, *, lease_seconds: int) -> None:
        """Extend our lease.

        Raises:
            LeaseLostError: the lease is no longer ours.
        """
        try:
            self._tracker.update_item(
                Key={"table_id": table_id},
                UpdateExpression="SET lease_expires_at = :expires",
                ConditionExpression="lease_owner = :owner",
                ExpressionAttributeValues={":owner": owner, ":expires": self._now_epoch() + lease_seconds},
            )
        except ClientError as error:
            if is_conditional_failure(error):
                raise LeaseLostError(f"lease on {table_id} is no longer held by {owner}") from error
            raise

    def release(self, table_id: str, owner: str) -> bool:
        """Drop our lease; False if it was not ours any more (nothing changed then)."""
        try:
            self._tracker.update_item(
                Key={"table_id": table_id},
                UpdateExpression="REMOVE lease_owner, lease_expires_at, lease_job_name, lease_job_run_id",
                ConditionExpression="lease_owner = :owner",
                ExpressionAttributeValues={":owner": owner},
            )
        except ClientError as error:
            if is_conditional_failure(error):
                return False
            raise
        return True

    def finish(self, run: TableRun, owner: str, *, history_retention: timedelta | None = None) -> None:
        """Record the run of the lease holder ``owner`` and release its lease (:meth:`RunLedger.record`).

        Raises:
            LeaseLostError: another run holds the lease now; nothing was recorded.
        """
        self.ledger.record(run, owner=owner, history_retention=history_retention)

    def state(self, table_id: str) -> TableState:
        item = self._tracker.get_item(Key={"table_id": table_id}, ConsistentRead=True).get("Item")
        return TableState.from_item(item) if item else TableState(table_id=table_id)

    def states(self, table_ids: Iterable[str]) -> dict[str, TableState]:
        """processing_tracker items of many tables (BatchGetItem, 100 keys a call)."""
        wanted = list(dict.fromkeys(table_ids))
        found = {table_id: TableState(table_id=table_id) for table_id in wanted}
        client = self._tracker.meta.client
        for start in range(0, len(wanted), BATCH_GET_LIMIT):
            request: dict[str, Any] = {
                self._tracker.name: {"Keys": [{"table_id": t} for t in wanted[start : start + BATCH_GET_LIMIT]]}
            }
            for response in batch_get(client, request):
                for item in response.get("Responses", {}).get(self._tracker.name, []):
                    found[item["table_id"]] = TableState.from_item(item)
        return found

    def leased_tables(self, table_ids: Iterable[str]) -> set[str]:
        """Tables whose lease is held and unexpired now, by a job run that has not ended.

        With ``job_runs``, a lease whose recorded job run has ended (FAILED, TIMEOUT, STOPPED, or gone)
        does not count: the next job run takes it over at once instead of waiting for its expiry.
        """
        return self.unavailable_tables(table_ids)[0]

    def unavailable_tables(self, table_ids: Iterable[str]) -> tuple[set[str], set[str]]:
        """(leased, held): the tables :meth:`leased_tables` names, and those held after ``max_table_attempts``
        failed runs in a row (until :meth:`release_hold`); one read of the items (BatchGetItem, 100 a call)."""
        return self.unavailable_among(self.states(table_ids))

    def unavailable_among(self, states: Mapping[str, TableState]) -> tuple[set[str], set[str]]:
        """(leased, held) of tables whose items were read already (:meth:`states`): the Batch Manager reads each
        pending table's item once, for its lease and for its last run's duration."""
        now = self._now_epoch()
        leased = {
            table_id for table_id, state in states.items() if state.lease_is_held(now) and not self._holder_ended(state)
        }
        return leased, {table_id for table_id, state in states.items() if state.held_at is not None}

    def release_hold(self, table_id: str) -> bool:
        """Let the Batch Manager plan a held table again, its failed runs counted afresh; False if it was not held."""
        try:
            self._tracker.update_item(
                Key={"table_id": table_id},
                UpdateExpression="REMOVE held_at, failed_runs",
                ConditionExpression="attribute_exists(held_at)",
            )
        except ClientError as error:
            if is_conditional_failure(error):
                return False
            raise
        return True

    def _holder_ended(self, state: TableState) -> bool:
        job_run = state.lease_job_run
        return self._job_runs is not None and job_run is not None and self._job_runs.ended(job_run) is not None

    def history(self, table_id: str) -> list[TableRun]:
        return self.ledger.history(table_id)


def _lease_update(
    owner: str,
    now: datetime,
    *,
    lease_seconds: int,
    run_id: str,
    batch_id: str | None,
    job_run: JobRunRef | None,
    replacing: str | None,
) -> dict[str, Any]:
    """The conditional update_item arguments of :meth:`ProcessingTracker.acquire` (see there)."""
    run = LAST_RUN_ATTRIBUTES
    sets = [
        "lease_owner = :owner",
        "lease_expires_at = :expires",
        "#status = :updating",
        f"{run['run_id']} = :run",
        f"{run['started_at']} = :now",
        "updated_at = :now",
    ]
    values: dict[str, Any] = {
        ":owner": owner,
        ":expires": int(now.timestamp()) + lease_seconds,
        ":updating": RunStatus.UPDATING.value,
        ":run": run_id,
        ":now": iso(now),
        ":epoch": int(now.timestamp()),
    }
    # A new run starts: the batch and job run of an earlier run must not be attributed to it.
    removes = []
    if batch_id is not None:
        sets.append(f"{run['batch_id']} = :batch")
        values[":batch"] = batch_id
    else:
        removes.append(run["batch_id"])
    if job_run is not None:
        sets += ["lease_job_name = :job_name", "lease_job_run_id = :job_run_id"]
        values |= {":job_name": job_run.job_name, ":job_run_id": job_run.run_id}
    else:
        removes += ["lease_job_name", "lease_job_run_id"]
    condition = "attribute_not_exists(lease_owner) OR lease_expires_at <= :epoch OR lease_owner = :owner"
    if replacing is not None:
        condition += " OR lease_owner = :previous"
        values[":previous"] = replacing
    return {
        "UpdateExpression": "SET " + ", ".join(sets) + (" REMOVE " + ", ".join(removes) if removes else ""),
        "ConditionExpression": condition,
        "ExpressionAttributeNames": {"#status": "status"},
        "ExpressionAttributeValues": values,
    }


@dataclass(frozen=True)
class Trackers:
    """Both trackers over an environment's tables: the one place that pairs each table with its history."""

    files: FileTracker
    processing: ProcessingTracker

    @classmethod
    def build(
        cls, dynamodb: Any, names: TrackerTableNames, *, clock: Clock = utc_now, job_runs: JobRuns | None = None
    ) -> Trackers:
        """``dynamodb`` is a boto3 DynamoDB resource; ``job_runs`` answers whether a lease holder's job run ended."""
        table = dynamodb.Table
        return cls(
            FileTracker(table(names.file_tracker), table(names.file_tracker_history), clock=clock),
            ProcessingTracker(
                table(names.processing_tracker),
                table(names.processing_tracker_history),
                clock=clock,
                job_runs=job_runs,
            ),
        )
