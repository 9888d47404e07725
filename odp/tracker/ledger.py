"""The run ledger: the one record of every writer's runs, whatever wrote them.

A batch table run (the File Processor), a streamed micro-batch's commit to a table (the streaming job) and a dataset
refresh (the dataset job, subject ``dataset:<name>``) each record one :class:`~odp.tracker.items.TableRun` through
:meth:`RunLedger.record`: one row in processing_tracker_history, and the run's summary (``status`` and the ``last_*``
attributes) on the subject's processing_tracker item, where the Batch Manager's summary and ``python -m odp status``
read it. A run that holds the subject's lease (the File Processor's) records under that lease and releases it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from boto3.dynamodb.conditions import Key
from botocore.exceptions import ClientError

from odp.dynamodb import table_items
from odp.tracker.conditions import LeaseLostError, is_conditional_failure
from odp.tracker.items import TableRun, TableState, iso, utc_now
from odp.tracker.statuses import RunStatus

# a dataset's subject in the ledger (and its lease): dataset:<name>; no table id has a colon
DATASET_SUBJECT = "dataset:"
LEASE_ATTRIBUTES = ("lease_owner", "lease_expires_at", "lease_job_name", "lease_job_run_id")


def dataset_subject(name: str) -> str:
    """A dataset's id in processing_tracker (its lease and its runs): ``dataset:<name>``."""
    return f"{DATASET_SUBJECT}{name}"


class RunLedger:
    """processing_tracker's run summaries and processing_tracker_history's rows (boto3 Table resources)."""

    def __init__(self, tracker_table: Any, history_table: Any, *, clock: Callable[[], datetime] = utc_now) -> None:
        self._tracker = tracker_table
        self._history = history_table
        self._clock = clock

    def record(self, run: TableRun, *, owner: str | None = None, history_retention: timedelta | None = None) -> None:
        """Record one run: its summary on the subject's item and a history row.

        ``owner``: the run holds the subject's lease (the File Processor): the summary is written only while it still
        holds it, and the lease is released with it. A failed run keeps the last good commit instant; its error and
        trace are stored on the item; a failed File Processor run also its failed runs in a row (and the hold).

        Raises:
            LeaseLostError: ``owner`` no longer holds the lease; nothing was recorded.
        """
        now = iso(self._clock())
        summary, removed = run.last_run_attributes(finished_at=now)
        summary |= _failed_runs_attributes(run, now)
        values: dict[str, Any] = {":status": run.status.value, ":now": now}
        values |= {f":{name}": value for name, value in summary.items()}
        sets = ["#status = :status", "updated_at = :now", *(f"{name} = :{name}" for name in summary)]
        removes = list(removed)
        if run.status is RunStatus.COMPLETED:
            removes += ["failed_runs", "held_at"]
        update: dict[str, Any] = {}
        if owner is not None:
            removes += list(LEASE_ATTRIBUTES)
            values[":owner"] = owner
            update["ConditionExpression"] = "attribute_not_exists(lease_owner) OR lease_owner = :owner"
        expression = f"SET {', '.join(sets)}" + (f" REMOVE {', '.join(removes)}" if removes else "")
        try:
            self._tracker.update_item(
                Key={"table_id": run.table_id},
                UpdateExpression=expression,
                ExpressionAttributeNames={"#status": "status"},
                ExpressionAttributeValues=values,
                **update,
            )
        except ClientError as error:
            if owner is not None and is_conditional_failure(error):
                raise LeaseLostError(
                    f"lease on {run.table_id} was taken by another run before {owner} could record its outcome"
                ) from error
            raise
        self.append_history(run, history_retention=history_retention)

    def append_history(self, run: TableRun, *, history_retention: timedelta | None = None) -> None:
        """A history row only (a run that did not take the subject: another run held its lease)."""
        expires_at = int((self._clock() + history_retention).timestamp()) if history_retention else None
        self._history.put_item(Item=run.to_history_item(expires_at=expires_at))

    def history(self, subject: str) -> list[TableRun]:
        """Every run of a subject still in history, oldest first."""
        items = table_items(self._history, "query", KeyConditionExpression=Key("table_id").eq(subject))
        return [TableRun.from_item(item) for item in items]

    def subjects(self) -> list[TableState]:
        """Every subject the ledger knows (batch and streamed tables, datasets), with its last run, in id order."""
        states = [TableState.from_item(item) for item in table_items(self._tracker, "scan")]
        return sorted(states, key=lambda state: state.table_id)


def _failed_runs_attributes(run: TableRun, now: str) -> dict[str, Any]:
    """A failed run's count of failed runs in a row, and when they held the table (none for other runs)."""
    if run.status is not RunStatus.REFRESH_ERROR or not run.failed_runs:
        return {}
    return {"failed_runs": run.failed_runs, **({"held_at": now} if run.held else {})}
