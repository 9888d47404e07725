"""The File Manager's input as Powertools parser models: an SQS record whose body is an EventBridge S3
"Object Created" event, and the facts of it the tracker needs.

``BatchProcessor(model=ObjectCreatedSqsRecord)`` validates each record before the record handler
sees it; a record that does not validate fails on its own (partial batch response), and
:meth:`MalformedEventError.from_validation` words the first problem for the log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal
from urllib.parse import unquote_plus

from aws_lambda_powertools.utilities.parser.models import (
    S3EventNotificationEventBridgeDetailModel,
    S3EventNotificationEventBridgeModel,
    SqsRecordModel,
)
from aws_lambda_powertools.utilities.parser.models.s3 import S3EventNotificationObjectModel
from pydantic import Field, Json, Strict, ValidationError, field_validator
from pydantic_core import ErrorDetails

from odp.tracker import iso

OBJECT_CREATED = "Object Created"
S3_SOURCE = "aws.s3"
# The fields that say what an event is: a wrong one is reported before anything else is.
_IDENTITY = ("source", "detail-type")
# What a field's value should be, in the error text (default: "valid").
_EXPECTED = {"time": "ISO-8601", "detail.object.size": "a byte count", "detail.object.key": "an object key"}


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


class ObjectCreatedObject(S3EventNotificationObjectModel):
    """``detail.object``, narrowed: a non-empty key (URL-decoded, as S3 encodes it in events) and a
    whole byte count (Powertools accepts any non-negative number)."""

    key: str = Field(min_length=1, description="The object key, URL-decoded.")
    size: Annotated[int, Strict(), Field(ge=0)] | None = Field(default=None, description="Bytes.")

    @field_validator("key")
    @classmethod
    def _decoded(cls, key: str) -> str:
        # S3 URL-encodes keys in its events: a space arrives as "+", a "+" as "%2B", "=" as "%3D".
        return unquote_plus(key)


class ObjectCreatedDetail(S3EventNotificationEventBridgeDetailModel):
    object: ObjectCreatedObject  # type: ignore[assignment]


class ObjectCreatedEvent(S3EventNotificationEventBridgeModel):
    """An EventBridge S3 event that is an "Object Created" event and nothing else."""

    source: Literal["aws.s3"]  # type: ignore[assignment]
    detail_type: Literal["Object Created"] = Field(alias="detail-type")  # type: ignore[assignment]
    detail: ObjectCreatedDetail  # type: ignore[assignment]

    def object_created(self) -> ObjectCreated:
        obj = self.detail.object
        return ObjectCreated(
            bucket=self.detail.bucket.name,
            key=obj.key,
            size=obj.size,
            etag=obj.etag,
            version_id=obj.version_id or None,
            sequencer=obj.sequencer or None,
            event_time=iso(self.time),
            event_id=self.id,
            reason=self.detail.reason,
        )


class ObjectCreatedSqsRecord(SqsRecordModel):
    """One message of the file-events queue: its body is the JSON text of an :class:`ObjectCreatedEvent`."""

    body: Json[ObjectCreatedEvent]  # type: ignore[assignment]


class MalformedEventError(ValueError):
    """A message that is not an S3 "Object Created" event: it fails its record and, after the queue's
    retries, lands in the dead-letter queue for an operator to inspect."""

    @classmethod
    def from_validation(cls, error: ValidationError) -> MalformedEventError:
        """The first problem of a record that did not validate, in words (the event's identity first);
        the full pydantic report is the ``__cause__``."""
        problems = error.errors()
        first = min(problems, key=lambda problem: 0 if _where(problem) in ("", *_IDENTITY) else 1)
        malformed = cls(_sentence(first))
        malformed.__cause__ = error
        return malformed


def _where(problem: ErrorDetails) -> str | None:
    """The problem's path inside the message body, dotted (``""``: the body itself; None: outside it)."""
    loc = problem["loc"]
    return ".".join(str(part) for part in loc[1:]) if loc[:1] == ("body",) else None


def _sentence(problem: ErrorDetails) -> str:
    where = _where(problem)
    value = None if problem["type"] == "missing" else problem["input"]
    if where is None:
        return f"not an SQS record: {'.'.join(map(str, problem['loc']))}: {problem['msg']}"
    if where == "":
        if problem["type"] == "json_invalid":
            return f"message body is not JSON: {str(value)[:200]!r}"
        return "message body is not a JSON object"
    if where in _IDENTITY:
        return f"expected an {S3_SOURCE} {OBJECT_CREATED!r} event, got {where}={value!r}"
    if value is None:
        return f"event has no {where}"
    return f"{where} {str(value)[:200]!r} is not {_EXPECTED.get(where, 'valid')}: {problem['msg']}"
