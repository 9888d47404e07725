"""Parsing the SQS body: the published EventBridge sample as it is, and what is not an S3 event."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lambdas.file_manager.events import MalformedEventError, parse_object_created
from tests.unit.lambdas.conftest import object_created


def test_the_published_sample_parses_as_it_is(s3_event: dict[str, Any]) -> None:
    parsed = parse_object_created(json.dumps(s3_event))
    assert (parsed.bucket, parsed.key, parsed.size, parsed.etag) == (
        "example-bucket",
        "IMG_m7fzo3.jpg",
        184662,
        "4e68adba0abe2dc8653dc3354e14c01d",
    )
    assert (parsed.sequencer, parsed.version_id, parsed.reason) == ("006408CAD69598B05E", None, "PutObject")
    assert parsed.event_time == "2023-03-08T17:50:14.000Z"
    assert parsed.event_id == "f5f1e65c-dc3a-93ca-6c1e-b1647eac7963"


def test_version_id_and_url_encoded_keys(s3_event: dict[str, Any]) -> None:
    event = object_created(s3_event, "dms/public/trips/my+file%3D1.parquet", version_id="v-42")
    parsed = parse_object_created(json.dumps(event))
    assert parsed.key == "dms/public/trips/my file=1.parquet"  # S3 event keys are URL-encoded
    assert parsed.version_id == "v-42"


def test_an_s3_notification_sent_straight_to_sqs_is_not_accepted(samples_dir: Path) -> None:
    # s3SqsEvent.json: the S3 notification format, not EventBridge; the queue must only get EventBridge events.
    sample = json.loads((samples_dir / "lambda-events" / "s3SqsEvent.json").read_text())
    with pytest.raises(MalformedEventError, match=r"expected an aws\.s3 'Object Created' event"):
        parse_object_created(sample["Records"][0]["body"])


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda e: "Test message.", "not JSON"),
        (lambda e: [e], "not a JSON object"),
        (lambda e: {**e, "detail-type": "Object Deleted"}, "'Object Deleted'"),
        (lambda e: {**e, "detail": {**e["detail"], "bucket": None}}, "no detail.bucket"),
        (lambda e: {**e, "detail": {**e["detail"], "object": {"size": 1}}}, "no detail.object.key"),
        (lambda e: {**e, "detail": {**e["detail"], "object": {**e["detail"]["object"], "size": "big"}}}, "byte count"),
        (lambda e: {**e, "time": "yesterday"}, "not ISO-8601"),
    ],
)
def test_malformed_bodies_raise(s3_event: dict[str, Any], mutate: Any, message: str) -> None:
    body = mutate(s3_event)
    with pytest.raises(MalformedEventError, match=message):
        parse_object_created(body if isinstance(body, str) else json.dumps(body))


def test_a_kafka_connect_key_keeps_its_plus_signs(s3_event: dict[str, Any]) -> None:
    # The S3 sink names files <topic>+<partition>+<offset>.json; S3 sends "+" as %2B in events.
    event = object_created(s3_event, "inventory_debezium/inventory/products/products%2B0%2B0000000001.json")
    assert (
        parse_object_created(json.dumps(event)).key
        == "inventory_debezium/inventory/products/products+0+0000000001.json"
    )
