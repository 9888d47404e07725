"""The local staging bucket: which files are new, and the S3 events they produce.

The staging bucket is the ``--staging`` folder: an object's key is its path relative to that
folder. A file is *new* when its (key, ETag) pair has not been announced before; a file whose
content changed is a new object version (new ETag) and is announced again, as S3 would.
Events take the EventBridge "Object Created" form (ETag = MD5 of the content, as S3 reports for a
single-part upload) and reach the File Manager in SQS batches, as the queue would deliver them.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote_plus

from odp.operations.backend import StagedObject

SQS_BATCH_SIZE = 10
EVENT_ACCOUNT = "0" * 12  # placeholder: the events' account field is not read by ODP


def md5_of(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def list_objects(staging_dir: Path, bucket: str) -> list[StagedObject]:
    """Every file under the staging folder (the bucket ``bucket``), in key order (hidden files included: ODP
    decides what to skip)."""
    objects = []
    for path in sorted(p for p in staging_dir.rglob("*") if p.is_file()):
        key = path.relative_to(staging_dir).as_posix()
        objects.append(StagedObject(bucket=bucket, key=key, size=path.stat().st_size, etag=md5_of(path)))
    return objects


def new_objects(objects: Iterable[StagedObject], announced: dict[str, str]) -> list[StagedObject]:
    """Objects whose (key, ETag) was not announced yet (pure)."""
    return [obj for obj in objects if announced.get(obj.key) != obj.etag]


def event_key(key: str) -> str:
    """S3 URL-encodes keys in its events (a space becomes ``+``, ``+`` becomes ``%2B``, ``=`` ``%3D``)."""
    return quote_plus(key, safe="/")


def object_created_event(obj: StagedObject, *, sequencer: int, region: str, now: datetime) -> dict:
    """An S3 "Object Created" event as EventBridge delivers it."""
    bucket = obj.bucket
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Object Created",
        "source": "aws.s3",
        "account": EVENT_ACCOUNT,
        "time": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": region,
        "resources": [f"arn:aws:s3:::{bucket}"],
        "detail": {
            "version": "0",
            "bucket": {"name": bucket},
            "object": {"key": event_key(obj.key), "size": obj.size, "etag": obj.etag, "sequencer": f"{sequencer:018X}"},
            "request-id": uuid.uuid4().hex[:16].upper(),
            "requester": EVENT_ACCOUNT,
            "source-ip-address": "127.0.0.1",
            "reason": "PutObject",
        },
    }


def sqs_record(body: dict, *, queue_arn: str, region: str) -> dict:
    """One SQS message of a Lambda SQS event."""
    text = json.dumps(body)
    return {
        "messageId": str(uuid.uuid4()),
        "receiptHandle": uuid.uuid4().hex,
        "body": text,
        "attributes": {
            "ApproximateReceiveCount": "1",
            "SentTimestamp": str(int(datetime.now(UTC).timestamp() * 1000)),
            "SenderId": "AIDAEVENTBRIDGE",
            "ApproximateFirstReceiveTimestamp": str(int(datetime.now(UTC).timestamp() * 1000)),
        },
        "messageAttributes": {},
        "md5OfBody": hashlib.md5(text.encode("utf-8"), usedforsecurity=False).hexdigest(),
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": region,
    }


def sqs_batches(events: list[dict], *, queue_arn: str, region: str, size: int = SQS_BATCH_SIZE) -> Iterator[dict]:
    """Lambda SQS events of at most ``size`` messages each."""
    for start in range(0, len(events), size):
        yield {"Records": [sqs_record(e, queue_arn=queue_arn, region=region) for e in events[start : start + size]]}


def hadoop_file_uri(path: Path) -> str:
    """``file://`` + the absolute path, not percent-encoded: Hadoop's Path takes the text as it is
    (``Path.as_uri()`` would turn a ``+`` in a Kafka Connect file name into ``%2B``, a missing file)."""
    return f"file://{path.resolve().as_posix()}"


@dataclass(frozen=True)
class BucketMap:
    """Buckets are folders: s3://<bucket>/<key> -> file://<folder>/<key>."""

    folders: dict[str, Path]

    def resolve(self, uri: str) -> str:
        """Map an ``s3://`` (or ``s3a://``) URI to a ``file://`` URI; other URIs pass through.

        Raises:
            KeyError: the bucket is not one of the sandbox's buckets.
        """
        for scheme in ("s3://", "s3a://"):
            if uri.startswith(scheme):
                bucket, _, key = uri[len(scheme) :].partition("/")
                if bucket not in self.folders:
                    raise KeyError(f"bucket {bucket!r} is not a sandbox bucket ({', '.join(sorted(self.folders))})")
                return hadoop_file_uri(self.folders[bucket] / key)
        return uri
