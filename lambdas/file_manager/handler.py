"""File Manager Lambda: SQS (EventBridge S3 "Object Created" events) -> file_tracker.

Partial batch response: each record is validated as an :class:`ObjectCreatedSqsRecord` by
Powertools' ``BatchProcessor``; a malformed message fails only its own record, SQS retries it and,
after the queue's maxReceiveCount, moves it to the dead-letter queue.
"""

from __future__ import annotations

import functools
from typing import Any

from aws_lambda_powertools import Logger, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.base import FailureResponse
from aws_lambda_powertools.utilities.batch.exceptions import ExceptionInfo
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from pydantic import ValidationError

from lambdas.file_manager.events import MalformedEventError, ObjectCreatedSqsRecord
from lambdas.file_manager.manager import FileManager
from lambdas.runtime import publish_metrics
from odp.contracts.metrics import FAILED_MESSAGES_METRIC

logger = Logger()
tracer = Tracer()


@functools.cache
def default_manager() -> FileManager:
    """The process-wide File Manager, built at the first invocation from the environment
    (``default_manager.cache_clear()`` is a cold start)."""
    return FileManager.from_environment()


class ObjectCreatedBatch(BatchProcessor):
    """An SQS batch of :class:`ObjectCreatedSqsRecord`; every failed record is logged as an error
    under its message id (the id to look for in the dead-letter queue)."""

    def __init__(self) -> None:
        super().__init__(event_type=EventType.SQS, model=ObjectCreatedSqsRecord)

    def failure_handler(self, record: ObjectCreatedSqsRecord | SQSRecord, exception: ExceptionInfo) -> FailureResponse:
        """Log, then record the failure as Powertools does. A record that failed validation arrives
        as an ``SQSRecord`` (Powertools converts it without the model); it is logged as a
        :class:`MalformedEventError` that says what is wrong with it."""
        error = exception[1]
        if isinstance(error, ValidationError) and error.title == ObjectCreatedSqsRecord.__name__:
            error = MalformedEventError.from_validation(error)
        message_id = record.messageId if isinstance(record, ObjectCreatedSqsRecord) else record.message_id
        logger.set_correlation_id(message_id)
        try:
            logger.error("message failed; SQS retries it, then moves it to the dead-letter queue", exc_info=error)
        finally:
            logger.set_correlation_id(None)
        return super().failure_handler(record, exception)


def handle(event: dict[str, Any], context: Any, manager: FileManager) -> PartialItemFailureResponse:
    """Process one SQS batch with the given manager; returns ``{"batchItemFailures": [...]}``.

    Raises:
        aws_lambda_powertools.utilities.batch.exceptions.BatchProcessingError: every record failed.
    """
    manager.start_invocation()
    processor = ObjectCreatedBatch()

    def record_handler(record: ObjectCreatedSqsRecord) -> str:
        # Every log line of a record carries its SQS message id: the id to look for in the DLQ.
        logger.set_correlation_id(record.messageId)
        try:
            return manager.process(record.body.object_created()).value
        finally:
            logger.set_correlation_id(None)

    try:
        response = process_partial_response(
            event=event, record_handler=record_handler, processor=processor, context=context
        )
        if manager.metrics is not None:
            failed = len(response.get("batchItemFailures", []))
            manager.metrics.add_metric(name=FAILED_MESSAGES_METRIC, unit=MetricUnit.Count, value=failed)
        return response
    finally:
        if manager.metrics is not None:
            publish_metrics(manager.metrics)


@tracer.capture_lambda_handler(capture_response=False)
@logger.inject_lambda_context(clear_state=True)  # each record sets its own correlation id (its message id)
def handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return handle(event, context, default_manager())
