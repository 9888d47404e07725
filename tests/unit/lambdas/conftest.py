"""Fixtures of the Lambda tests: the published event samples, variants of them, the function environment."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from lambdas.batch_manager import handler as batch_manager_handler
from lambdas.file_manager import handler as file_manager_handler
from odp.contracts.lambda_env import lambda_environment
from odp.naming import TrackerTableNames
from tests.support.aws import Clock
from tests.support.lambdas import EVENT_SAMPLE, SQS_SAMPLE


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


@pytest.fixture(autouse=True)
def cold_handlers() -> Iterator[None]:
    """Each test starts and ends with cold handlers: no process-wide manager built against another test's moto."""
    batch_manager_handler.default_manager.cache_clear()
    file_manager_handler.default_manager.cache_clear()
    yield
    batch_manager_handler.default_manager.cache_clear()
    file_manager_handler.default_manager.cache_clear()
