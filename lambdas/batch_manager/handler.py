"""Batch Manager Lambda, invoked by the File Processor state machine.

``{"action": "plan", "cadence": ..., "execution_name": ...}`` writes the plan to S3 and says where;
``{"action": "summarise", "cadence": ..., "execution_name": ..., "plan": ..., "results": ...}`` returns each table's
outcome (bounded; the whole summary goes to S3 beside the plan).
Both requests are models in :mod:`lambdas.batch_manager.events`.
"""

from __future__ import annotations

import functools
from typing import Any

from aws_lambda_powertools import Logger, Tracer

from lambdas.batch_manager.events import PlanRequest, parse_request
from lambdas.batch_manager.manager import BatchManager
from lambdas.runtime import publish_metrics

logger = Logger()
tracer = Tracer()


@functools.cache
def default_manager() -> BatchManager:
    """The process-wide Batch Manager, built at the first invocation from the environment
    (``default_manager.cache_clear()`` is a cold start)."""
    return BatchManager.from_environment()


def handle(event: dict[str, Any], context: Any, manager: BatchManager) -> dict[str, Any]:
    """Parse the request (a union discriminated on ``action``) and run it.

    Raises:
        InvalidRequestError: unknown action or a missing field.
        UnknownCadenceError: the cadence is not in batch_config.
        InvalidBatchResultError: summarise got something that is not the Map's results.
    """
    request = parse_request(event)
    logger.append_keys(cadence=request.cadence, action=request.action)
    try:
        if isinstance(request, PlanRequest):
            return manager.plan(request.cadence, request.execution_name)
        return manager.summarise(request.cadence, request.plan, request.results)
    finally:
        if manager.metrics is not None:
            publish_metrics(manager.metrics)


@tracer.capture_lambda_handler(capture_response=False)
@logger.inject_lambda_context(clear_state=True, correlation_id_path="execution_name")
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return handle(event, context, default_manager())
