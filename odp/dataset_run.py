"""One dataset refresh and its quality rules: the record the dataset job returns, logs and stores.

The dataset job builds a :class:`DatasetRun` per dataset; the sandbox report, the SNS message and
the run history item (DynamoDB, key ``dataset`` + ``run_at``) are all this one model.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

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


class DatasetRun(BaseModel):
    """The outcome of one refresh of one dataset."""

    model_config = ConfigDict(frozen=True)

    dataset: str
    zone: str
    status: RunStatus  # written, up_to_date, quality_failed or failed (RunStatus.failed: nothing written)
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
        if self.error:
            text += f"; error: {self.error}"
        return text

    def to_history_item(self, *, expires_at: int | None = None) -> dict[str, Any]:
        """The DynamoDB item of the run history (key: dataset, run_at); nested values as JSON text."""
        item: dict[str, Any] = {
            "dataset": self.dataset,
            "run_at": self.started_at,
            **self.model_dump(mode="json", exclude={"dataset", "started_at", "rules", "consumed"}),
            "consumed": json.dumps(self.consumed, sort_keys=True),
            "rules": json.dumps([rule.model_dump(mode="json") for rule in self.rules], default=str),
            "duration_seconds": str(self.duration_seconds),
        }
        if expires_at is not None:
            item["expires_at"] = expires_at
        return {key: value for key, value in item.items() if value is not None}

    @classmethod
    def from_history_item(cls, item: dict[str, Any]) -> DatasetRun:
        data = dict(item)
        data.pop("expires_at", None)
        data["started_at"] = data.pop("run_at")
        data["consumed"] = json.loads(data.get("consumed") or "{}")
        data["rules"] = json.loads(data.get("rules") or "[]")
        data["duration_seconds"] = float(data.get("duration_seconds") or 0)
        for name in ("rows_upserted", "rows_deleted", "row_count"):
            if data.get(name) is not None:
                data[name] = int(data[name])
        return cls.model_validate(data)
