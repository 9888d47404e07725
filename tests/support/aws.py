"""A clock tests move by hand, and a counter of the DynamoDB calls a client makes."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta
from typing import Any


class Clock:
    """A clock the test sets by hand."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


class CallCounter:
    """Counts DynamoDB operations (and the table and index each one names) through a botocore event hook."""

    def __init__(self, client: Any) -> None:
        self.calls: Counter[str] = Counter()
        self.targets: Counter[tuple[str, str, str | None]] = Counter()
        # before-parameter-build sees the API parameters (before-call only sees the HTTP request).
        client.meta.events.register("before-parameter-build.dynamodb", self._count)

    def _count(self, model: Any, params: dict[str, Any], **_: Any) -> None:
        self.calls[model.name] += 1
        tables = [params["TableName"]] if "TableName" in params else sorted(params.get("RequestItems", {}))
        for table in tables:
            self.targets[(model.name, table, params.get("IndexName"))] += 1

    @property
    def total(self) -> int:
        return sum(self.calls.values())
