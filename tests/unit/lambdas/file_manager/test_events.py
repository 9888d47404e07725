"""Parsing an SQS record with the File Manager's Powertools models: the published EventBridge sample as
it is, and what is not an S3 event (worded by MalformedEventError.from_validation)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from lambdas.file_manager.events import MalformedEventError, ObjectCreated, ObjectCreatedSqsRecord
from odp.operations.backend import StagedObject
from sandbox.staging import object_created_event, sqs_batches
from tests.support.lambdas import object_created, sqs_batch


@pytest.fixture
def parse(sqs_event: dict[str, Any]) -> Any:
    """Validate a body as the File Manager's BatchProcessor does, in a record of the published SQS sample."""

    def parse_body(body: str) -> ObjectCreated:
        [record] = sqs_batch(sqs_event, [body])["Records"]
        try:
            return ObjectCreatedSqsRecord.model_validate(record).body.object_created()
        except ValidationError as error:
            raise MalformedEventError.from_validation(error) from error

    return parse_body


def test_the_published_sample_parses_as_it_is(parse: Any, s3_event: dict[str, Any]) -> None:
    parsed = parse(json.dumps(s3_event))
    assert (parsed.bucket, parsed.key, parsed.size, parsed.etag) == (
        "example-bucket",
        "IMG_m7fzo3.jpg",
        184662,
        "4e68adba0abe2dc8653dc3354e14c01d",
    )
    assert (parsed.sequencer, parsed.version_id, parsed.reason) == ("006408CAD69598B05E", None, "PutObject")
    assert parsed.event_time == "2023-03-08T17:50:14.000Z"
    assert parsed.event_id == "f5f1e65c-dc3a-93ca-6c1e-b1647eac7963"


def test_version_id_and_url_encoded_keys(parse: Any, s3_event: dict[str, Any]) -> None:
    event = object_created(s3_event, "dms/public/trips/my+file%3D1.parquet", version_id="v-42")
    parsed = parse(json.dumps(event))
    assert parsed.key == "dms/public/trips/my file=1.parquet"  # S3 event keys are URL-encoded
    assert parsed.version_id == "v-42"


def test_an_s3_notification_sent_straight_to_sqs_is_not_accepted(parse: Any, samples_dir: Path) -> None:
    # s3SqsEvent.json: the S3 notification format, not EventBridge; the queue must only get EventBridge events.
    sample = json.loads((samples_dir / "lambda-events" / "s3SqsEvent.json").read_text())
    with pytest.raises(MalformedEventError, match=r"expected an aws\.s3 'Object Created' event"):
        parse(sample["Records"][0]["body"])


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
        (lambda e: {**e, "source": "aws.ec2"}, r"got source='aws\.ec2'"),
        (lambda e: {**e, "detail": {**e["detail"], "object": {**e["detail"]["object"], "size": 1.5}}}, "byte count"),
        (lambda e: {**e, "detail": {**e["detail"], "object": {**e["detail"]["object"], "size": -1}}}, "byte count"),
        (lambda e: {**e, "detail": {**e["detail"], "object": {**e["detail"]["object"], "size": True}}}, "byte count"),
        (lambda e: {**e, "detail": {**e["detail"], "object": {**e["detail"]["object"], "key": ""}}}, "object key"),
    ],
)
def test_malformed_bodies_raise(parse: Any, s3_event: dict[str, Any], mutate: Any, message: str) -> None:
    body = mutate(s3_event)
    with pytest.raises(MalformedEventError, match=message):
        parse(body if isinstance(body, str) else json.dumps(body))


def test_a_kafka_connect_key_keeps_its_plus_signs(parse: Any, s3_event: dict[str, Any]) -> None:
    # The S3 sink names files <topic>+<partition>+<offset>.json; S3 sends "+" as %2B in events.
    event = object_created(s3_event, "inventory_debezium/inventory/products/products%2B0%2B0000000001.json")
    assert parse(json.dumps(event)).key == "inventory_debezium/inventory/products/products+0+0000000001.json"


def test_a_record_that_is_not_an_sqs_record_says_so(sqs_event: dict[str, Any], s3_event: dict[str, Any]) -> None:
    [record] = sqs_batch(sqs_event, [s3_event])["Records"]
    del record["receiptHandle"]
    with pytest.raises(ValidationError) as raised:
        ObjectCreatedSqsRecord.model_validate(record)
    assert str(MalformedEventError.from_validation(raised.value)) == "not an SQS record: receiptHandle: Field required"


def test_the_sandboxs_sqs_records_validate() -> None:
    # The sandbox feeds the File Manager records it builds itself: they must pass the same model.
    obj = StagedObject(bucket="staging", key="src/app/t/a b+1.parquet", size=7, etag="0123456789abcdef0123456789abcdef")
    event = object_created_event(obj, sequencer=1, region="eu-west-1", now=datetime(2024, 5, 1, tzinfo=UTC))
    [batch] = sqs_batches([event], queue_arn="arn:aws:sqs:eu-west-1:123456789012:q", region="eu-west-1")
    parsed = ObjectCreatedSqsRecord.model_validate(batch["Records"][0]).body.object_created()
    assert (parsed.bucket, parsed.key, parsed.size, parsed.etag) == ("staging", obj.key, 7, obj.etag)
    assert parsed.event_time == "2024-05-01T00:00:00.000Z"
