"""Fixtures of the end-to-end tests: moto with Step Functions execution on, and sandbox folders."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from moto import mock_aws

from tests.support.paths import AWS_REGION


@pytest.fixture
def sfn_aws(aws_env: None) -> Iterator[None]:
    """moto with its Step Functions interpreter executing state machines (off by default)."""
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
        yield


@pytest.fixture
def region() -> str:
    return AWS_REGION
