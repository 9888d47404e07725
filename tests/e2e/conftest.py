"""Fixtures of the end-to-end tests: moto with Step Functions execution on, sandbox folders, and the repository's
configuration."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from moto import mock_aws

from odp.config.loader import OdpConfig, load_config
from tests.support.paths import AWS_REGION


@pytest.fixture
def sfn_aws(aws_env: None) -> Iterator[None]:
    """moto with its Step Functions interpreter executing state machines (off by default)."""
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
        yield


@pytest.fixture
def region() -> str:
    return AWS_REGION


@pytest.fixture(scope="module")
def config(repo_root: Path) -> OdpConfig:
    """The repository's configuration (config/), loaded once per module."""
    return load_config(repo_root / "config")
