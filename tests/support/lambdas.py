"""Lambda test inputs: the published S3 and SQS samples as events, a Lambda context, the metrics a handler printed."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

EVENT_SAMPLE = "s3EventBridgeNotificationObjectCreatedEvent.json"


SQS_SAMPLE = "sqsEvent.json"


@dataclass(frozen=True)
class LambdaContext:
    """The Lambda context attributes Powertools' ``inject_lambda_context`` reads."""

    function_name: str = "odp-test-function"
    memory_limit_in_mb: int = 128
    invoked_function_arn: str = "arn:aws:lambda:eu-west-1:123456789012:function:odp-test-function"
    aws_request_id: str = "request-1"


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
