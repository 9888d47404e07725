"""Batch Manager Lambda, invoked by the File Processor state machine.

``{"action": "plan", "cadence": ..., "execution_name": ...}`` returns the Map input;
``{"action": "summarise", "cadence": ..., "batch_results": [...]}`` returns each table's outcome.
"""

from __future__ import annotations

import os
from typing import Any

from aws_lambda_powertools import Logger, Tracer

from lambdas.batch_manager.manager import BatchManager, BatchManagerError
from lambdas.runtime import dynamodb_tables, new_metrics, publish_metrics
from odp.tracker import GlueJobRuns, Trackers

logger = Logger()
tracer = Tracer()
_default: BatchManager | None = None


class InvalidRequestError(BatchManagerError):
    """The event is not a plan or summarise request; the message says what is missing."""


def default_manager() -> BatchManager:
    """The process-wide Batch Manager, built at the first invocation from the environment."""
    global _default  # noqa: PLW0603 - one lazily built instance per Lambda process
    if _default is None:
        dynamodb, names = dynamodb_tables()
        trackers = Trackers.build(dynamodb, names, job_runs=GlueJobRuns())  # a lease of an ended job run is not held
        _default = BatchManager(
            batch_config=dynamodb.Table(names.batch_config),
            table_config=dynamodb.Table(names.table_config),
            file_tracker=trackers.files,
            processing_tracker=trackers.processing,
            # Only the cadence dimension: the freshness alarm names exactly {cadence}.
            metrics=new_metrics(os.environ, service=""),
        )
    return _default


def _text(event: dict[str, Any], name: str) -> str:
    value = event.get(name)
    if not isinstance(value, str) or not value:
        raise InvalidRequestError(f"event field {name!r} must be a non-empty string, got {value!r}")
    return value


def handle(event: dict[str, Any], context: Any, manager: BatchManager) -> dict[str, Any]:
    """Dispatch on ``action``.

    Raises:
        InvalidRequestError: unknown action or a missing field.
        UnknownCadenceError: the cadence is not in batch_config.
        InvalidBatchResultError: summarise got something that is not the Map's output.
    """
    if not isinstance(event, dict):
        raise InvalidRequestError(f"event must be an object, got {type(event).__name__}")
    action = _text(event, "action")
    cadence = _text(event, "cadence")
    logger.append_keys(cadence=cadence, action=action)
    try:
        if action == "plan":
            return manager.plan(cadence, _text(event, "execution_name"))
        if action == "summarise":
            results = event.get("batch_results")
            first = results[0] if isinstance(results, list) and results else None
            if isinstance(first, dict) and isinstance(first.get("batch_id"), str):  # no execution_name here
                logger.set_correlation_id(first["batch_id"].rsplit("-", 1)[0])  # <execution_name>-<n>
            return manager.summarise(cadence, results)
        raise InvalidRequestError(f"unknown action {action!r}: expected 'plan' or 'summarise'")
    finally:
        if manager.metrics is not None:
            publish_metrics(manager.metrics)


@tracer.capture_lambda_handler(capture_response=False)
@logger.inject_lambda_context(clear_state=True, correlation_id_path="execution_name")
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return handle(event, context, default_manager())
