"""One dataset refresh and its quality rules: the record the dataset job returns, logs and stores.

The dataset job builds a :class:`DatasetRun` per dataset; the sandbox report, the SNS message and
the run history item (DynamoDB, key ``dataset`` + ``run_at``) are all this one model.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from odp.dynamodb import StoredRecord
from odp.tracker.items import TableRun
from odp.tracker.ledger import dataset_subject
from odp.tracker.statuses import RunStatus


class RuleOutcome(BaseModel):
    """One quality rule checked on the dataset as it would be after the write."""

    model_config = ConfigDict(frozen=True)

    rule: str
    type: str
    severity: str
    passed: bool
    failing_rows: int = 0
    examples: tuple[dict[str, Any], ...] = ()  # at most a few rows (key and the rule's columns)
    detail: str = ""


class DatasetRun(StoredRecord):
    """The outcome of one refresh of one dataset (a dataset run history item)."""

    dataset: str
    zone: str
    # written, up_to_date, waiting_for_sources, quality_failed or failed (RunStatus.failed: nothing written)
    status: RunStatus
    refresh: str  # incremental | full: what this run did (a first run is always full)
    run_id: str = ""
    started_at: str = ""
    duration_seconds: float = 0.0
    commit_instant: str | None = None
    consumed: dict[str, str] = Field(default_factory=dict)  # source id -> latest source commit this run read
    rows_upserted: int = 0
    rows_deleted: int = 0
    row_count: int | None = None  # rows of the dataset after the run (as checked by the rules)
    rules: tuple[RuleOutcome, ...] = ()
    error: str | None = None
    waiting_for: tuple[str, ...] = ()  # waiting_for_sources: the source ids without a commit yet

    @property
    def failed_rules(self) -> list[RuleOutcome]:
        return [rule for rule in self.rules if not rule.passed and rule.severity == "fail"]

    @property
    def warnings(self) -> list[RuleOutcome]:
        return [rule for rule in self.rules if not rule.passed and rule.severity == "warn"]

    def summary(self) -> str:
        """One line for logs, reports and notifications."""
        text = f"{self.dataset}: {self.status} ({self.refresh}) +{self.rows_upserted} -{self.rows_deleted}"
        for rule in self.rules:
            if not rule.passed:
                text += f"; {rule.severity} rule {rule.rule}: {rule.failing_rows} row(s) {rule.detail}".rstrip()
        if self.waiting_for:
            text += f"; waiting for a first commit of {', '.join(self.waiting_for)}"
        if self.error:
            text += f"; error: {self.error}"
        return text

    def to_item(self) -> dict[str, Any]:
        """The run history item (key: dataset, run_at): nested values and the duration as text, as stored."""
        item = super().to_item()
        for name in ("started_at", "rules", "consumed"):
            item.pop(name, None)
        return item | {
            "run_at": self.started_at,
            "consumed": json.dumps(self.consumed, sort_keys=True),
            "rules": json.dumps([rule.model_dump(mode="json") for rule in self.rules], default=str),
            "duration_seconds": str(self.duration_seconds),
        }

    def to_history_item(self, *, expires_at: int | None = None) -> dict[str, Any]:
        """:meth:`to_item` with its expiry (TTL ``expires_at``, epoch seconds)."""
        return self.to_item() | ({"expires_at": expires_at} if expires_at is not None else {})

    def as_table_run(self, *, finished_at: str | None = None) -> TableRun:
        """The run as the run ledger records it (odp.tracker.ledger), under the subject ``dataset:<name>``: its
        status, rows (``rows_upserted``, the rows it wrote), deletes, seconds, commit and error."""
        return TableRun(
            table_id=dataset_subject(self.dataset),
            run_id=self.run_id,
            started_at=self.started_at,
            status=self.status,
            finished_at=finished_at,
            rows=self.rows_upserted,
            deletes=self.rows_deleted,
            seconds=self.duration_seconds,
            commit_instant=self.commit_instant,
            error=self.error,
        )

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> DatasetRun:
        """Raises: pydantic.ValidationError: the item is not a dataset run."""
        nested = {"consumed": json.loads(item.get("consumed") or "{}"), "rules": json.loads(item.get("rules") or "[]")}
        return cls.model_validate({**item, "started_at": item["run_at"], **nested})
