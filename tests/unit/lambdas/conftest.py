"""Fixtures of the Lambda tests: the published event samples, variants of them, the function environment."""

from __future__ import annotations

import copy
import json
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from odp.lambda_env import lambda_environment
from odp.naming import TrackerTableNames

EVENT_SAMPLE = "s3EventBridgeNotificationObjectCreatedEvent.json"
SQS_SAMPLE = "sqsEvent.json"


@dataclass(frozen=True)
class LambdaContext:
    """The Lambda context attributes Powertools' ``inject_lambda_context`` reads."""

    function_name: str = "odp-test-function"
    memory_limit_in_mb: int = 128
    invoked_function_arn: str = "arn:aws:lambda:eu-west-1:123456789012:function:odp-test-function"
    aws_request_id: str = "request-1"


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


@pytest.fixture
def clock() -> Clock:
    return Clock(datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC))


@pytest.fixture
def lambda_env(monkeypatch: pytest.MonkeyPatch, tracker_names: TrackerTableNames) -> dict[str, str]:
    """The variables the CDK construct sets, plus Powertools' tracing switch for a run without X-Ray."""
    variables = lambda_environment("test", tracker_names, service="odp-test")
    variables["POWERTOOLS_TRACE_DISABLED"] = "true"
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    return variables


@pytest.fixture
def s3_event(samples_dir: Path) -> dict[str, Any]:
    """The published EventBridge S3 "Object Created" event, as it is."""
    return json.loads((samples_dir / "lambda-events" / EVENT_SAMPLE).read_text())


@pytest.fixture
def sqs_event(samples_dir: Path) -> dict[str, Any]:
    """The published SQS event, as it is (its bodies are not S3 events)."""
    return json.loads((samples_dir / "lambda-events" / SQS_SAMPLE).read_text())


def object_created(
    sample: dict[str, Any],
    key: str,
    *,
    etag: str = "0f343b0931126a20f133d67c2b018a3b",
    size: int | None = 1024,
    time: str = "2024-05-01T11:00:00Z",
    event_id: str = "e-1",
    bucket: str = "odp-test-staging",
    version_id: str | None = None,
) -> dict[str, Any]:
    """A variant of the published event for another object."""
    event = copy.deepcopy(sample)
    event["id"] = event_id
    event["time"] = time
    event["detail"]["bucket"]["name"] = bucket
    event["resources"] = [f"arn:aws:s3:::{bucket}"]
    obj = event["detail"]["object"]
    obj["key"] = key
    obj["etag"] = etag
    if size is None:
        obj.pop("size", None)
    else:
        obj["size"] = size
    if version_id is not None:
        obj["version-id"] = version_id
    return event


def sqs_batch(sqs_sample: dict[str, Any], bodies: list[Any]) -> dict[str, Any]:
    """An SQS event shaped like the published one, one record per body (dicts are JSON-encoded)."""
    template = sqs_sample["Records"][0]
    records = []
    for number, body in enumerate(bodies):
        record = copy.deepcopy(template)
        record["messageId"] = f"message-{number}"
        record["body"] = body if isinstance(body, str) else json.dumps(body)
        records.append(record)
    return {"Records": records}


def emf_blobs(output: str) -> list[dict[str, Any]]:
    """The EMF documents Powertools Metrics printed."""
    blobs = []
    for line in output.splitlines():
        if line.startswith("{") and '"_aws"' in line:
            blobs.append(json.loads(line))
    return blobs
