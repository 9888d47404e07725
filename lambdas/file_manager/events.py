"""Parse an SQS message body holding an EventBridge S3 "Object Created" event into a typed value."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from aws_lambda_powertools.utilities.data_classes import S3EventBridgeNotificationEvent

from odp.tracker import iso

OBJECT_CREATED = "Object Created"
S3_SOURCE = "aws.s3"


class MalformedEventError(ValueError):
    """A message that is not an S3 "Object Created" event: it fails its record and, after the queue's
    retries, lands in the dead-letter queue for an operator to inspect."""


@dataclass(frozen=True)
class ObjectCreated:
    """The facts of one S3 object version that the tracker needs."""

    bucket: str
    key: str
    size: int | None
    etag: str
    version_id: str | None
    sequencer: str | None
    event_time: str | None  # ISO-8601 UTC with milliseconds, from the event's ``time``
    event_id: str | None
    reason: str | None  # PutObject, CompleteMultipartUpload, CopyObject, ...


def _event_time(raw: Any) -> str | None:
    if not isinstance(raw, str) or not raw:
        return None
    try:
        return iso(datetime.fromisoformat(raw.replace("Z", "+00:00")))
    except ValueError as error:
        raise MalformedEventError(f"event time {raw!r} is not ISO-8601") from error


def parse_object_created(body: str) -> ObjectCreated:
    """Read the EventBridge event in an SQS message body.

    Raises:
        MalformedEventError: the body is not JSON, not an S3 "Object Created" event, or lacks the
            bucket name, object key or a well-typed size.
    """
    try:
        raw = json.loads(body)
    except (TypeError, json.JSONDecodeError) as error:
        raise MalformedEventError(f"message body is not JSON: {str(body)[:200]!r}") from error
    if not isinstance(raw, dict):
        raise MalformedEventError("message body is not a JSON object")
    if raw.get("source") != S3_SOURCE or raw.get("detail-type") != OBJECT_CREATED:
        raise MalformedEventError(
            f"expected an {S3_SOURCE} {OBJECT_CREATED!r} event, got source={raw.get('source')!r} "
            f"detail-type={raw.get('detail-type')!r}"
        )
    detail = raw.get("detail")
    if not isinstance(detail, dict) or not isinstance(detail.get("bucket"), dict):
        raise MalformedEventError("event has no detail.bucket")
    obj = detail.get("object")
    if not isinstance(obj, dict) or not isinstance(obj.get("key"), str) or not obj["key"]:
        raise MalformedEventError("event has no detail.object.key")
    event = S3EventBridgeNotificationEvent(raw)
    bucket = event.detail.bucket.name
    if not isinstance(bucket, str) or not bucket:
        raise MalformedEventError("event has no detail.bucket.name")
    size = event.detail.object.size
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
        raise MalformedEventError(f"detail.object.size {size!r} is not a byte count")
    return ObjectCreated(
        bucket=bucket,
        key=event.detail.object.key,
        size=size,
        etag=event.detail.object.etag,
        version_id=obj.get("version-id") or None,
        sequencer=obj.get("sequencer") or None,
        event_time=_event_time(raw.get("time")),
        event_id=raw.get("id"),
        reason=detail.get("reason"),
    )
