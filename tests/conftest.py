"""Fixtures shared by every test package: paths, the published samples, emulated AWS (moto).

Spark: one local session per test session, from the ``spark`` fixture below (etl/spark_session.py
builds it with the Hudi bundle the Makefile fetched, and the options of ``ODP_LOCAL_JVM_OPTIONS``: the class data
archive ``make setup`` builds); the local Spark JVMs the tests start in child processes also compile with C1 only
(tests/support/jvm_options.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from odp.naming import TrackerTableNames
from odp.tracker.schema import create_tables
from tests.support.botocore_models import share_botocore_loader
from tests.support.jvm_options import give_children_short_lived_options, shared_session_options
from tests.support.paths import AWS_REGION, REPO_ROOT, SAMPLES_DIR


def pytest_configure(config: pytest.Config) -> None:
    give_children_short_lived_options()
    share_botocore_loader()


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def samples_dir() -> Path:
    """tests/samples: real events and CDC files published by others, kept as they are (see SOURCES.md)."""
    if not SAMPLES_DIR.is_dir():
        pytest.fail(f"samples not found at {SAMPLES_DIR}")
    return SAMPLES_DIR


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake credentials and a region, so nothing can reach a real account."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SECURITY_TOKEN": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": AWS_REGION,
        "AWS_REGION": AWS_REGION,
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)


@pytest.fixture
def aws(aws_env: None) -> Iterator[None]:
    """Every AWS API emulated by moto for the duration of one test."""
    with mock_aws():
        yield


@pytest.fixture
def tracker_names() -> TrackerTableNames:
    return TrackerTableNames.for_environment("test")


@pytest.fixture
def dynamodb(aws: None) -> object:
    return boto3.resource("dynamodb", region_name=AWS_REGION)


@pytest.fixture
def tracker_tables(dynamodb: object, tracker_names: TrackerTableNames) -> dict[str, object]:
    """The six tracker and config tables, created in moto; logical name -> boto3 Table."""
    create_tables(dynamodb.meta.client, tracker_names)
    return {logical: dynamodb.Table(physical) for logical, physical in tracker_names.as_dict().items()}


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory):  # pyspark is imported lazily: no return annotation
    """The one local Spark + Hudi session of the test run (local[2], 2 shuffle partitions, UI off)."""
    from etl.spark_session import local_spark_session

    warehouse = str(tmp_path_factory.mktemp("spark-warehouse"))
    session = local_spark_session("odp-tests", warehouse_dir=warehouse, jvm_options=shared_session_options())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
