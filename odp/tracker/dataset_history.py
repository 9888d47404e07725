"""Where dataset runs are recorded and announced: the run history table and the SNS message.

Table ``<prefix>-dataset-run-history`` (logical ``dataset_run_history``, declared with the other
tracker tables in odp/tracker/schema.py and created by infrastructure/ingest/tracking.py): key ``dataset``
(hash) + ``run_at`` (range), one item per run (:meth:`DatasetRun.to_history_item`), expiring after
the environment's retention. The message names the dataset, the status, the counts and every rule
that did not hold.
"""

from __future__ import annotations

import json
import time
from typing import Any

from odp.dynamodb import table_items
from odp.naming import DATASET_RUN_HISTORY, resource_prefix, tracker_table_names
from odp.tracker.dataset_run import DatasetRun
from odp.tracker.statuses import RunStatus

DAY_SECONDS = 86_400


def dataset_history_table_name(environment: str) -> str:
    return tracker_table_names(environment)[DATASET_RUN_HISTORY]


def dataset_job_name(environment: str) -> str:
    return f"{resource_prefix(environment)}-dataset-job"


class DatasetRunHistory:
    """Writes one item per dataset run; ``table`` is a boto3 Table resource."""

    def __init__(self, table: Any, *, retention_days: int = 365) -> None:
        self.table = table
        self.retention_days = retention_days

    def record(self, run: DatasetRun) -> None:
        expires_at = int(time.time()) + self.retention_days * DAY_SECONDS
        self.table.put_item(Item=run.to_history_item(expires_at=expires_at))

    def runs(self, dataset: str) -> list[DatasetRun]:
        """Every recorded run of a dataset, oldest first."""
        items = table_items(
            self.table, "query", KeyConditionExpression="dataset = :d", ExpressionAttributeValues={":d": dataset}
        )
        return [DatasetRun.from_item(item) for item in items]


def notification(run: DatasetRun) -> tuple[str, str]:
    """(subject, JSON message) of the SNS notification of one run; subject within SNS's 100 characters."""
    subject = f"ODP dataset {run.dataset}: {run.status}"[:100]
    body = {
        "dataset": run.dataset,
        "zone": run.zone,
        "status": run.status.value,
        "refresh": run.refresh,
        "rows_upserted": run.rows_upserted,
        "rows_deleted": run.rows_deleted,
        "row_count": run.row_count,
        "failed_rules": [r.model_dump(mode="json") for r in run.failed_rules],
        "warnings": [r.model_dump(mode="json") for r in run.warnings],
        "error": run.error,
        "summary": run.summary(),
    }
    return subject, json.dumps(body, default=str)


def should_notify(run: DatasetRun) -> bool:
    """Every run that wrote or failed; an up-to-date run (nothing changed) or one waiting for a source's first
    commit is not news."""
    return run.status not in (RunStatus.UP_TO_DATE, RunStatus.WAITING)
