"""Batch Manager fixtures: configuration in DynamoDB, pending files, the plans' bucket in S3, a manager with a fixed
clock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import boto3
import pytest

from lambdas.batch_manager.manager import BatchManager
from lambdas.batch_manager.plans import PlanStore
from odp.config.items import batch_config_item, table_config_item
from odp.config.loader import OdpConfig, load_config
from odp.contracts.lambda_env import PLAN_BUCKET
from odp.tracker import FileTracker, ProcessingTracker
from tests.support.aws import Clock
from tests.support.paths import AWS_REGION

PLANS = "odp-test-artifacts"


@pytest.fixture(scope="session")
def repo_config(repo_root: Path) -> OdpConfig:
    return load_config(repo_root / "config")


@pytest.fixture
def config_loaded(tracker_tables: dict[str, Any], repo_config: OdpConfig) -> OdpConfig:
    """batch_config and table_config as the Configuration Manager writes them for environment 'test'."""
    with tracker_tables["table_config"].batch_writer() as writer:
        for table in repo_config.tables:
            writer.put_item(Item=table_config_item(table))
    with tracker_tables["batch_config"].batch_writer() as writer:
        for name, cadence in repo_config.cadences.cadences.items():
            writer.put_item(Item=batch_config_item("test", name, cadence))
    return repo_config


@pytest.fixture
def processing(tracker_tables: dict[str, Any], clock: Clock) -> ProcessingTracker:
    return ProcessingTracker(
        tracker_tables["processing_tracker"], tracker_tables["processing_tracker_history"], clock=clock
    )


@pytest.fixture
def plans(aws: None, monkeypatch: pytest.MonkeyPatch) -> PlanStore:
    """The plans' bucket (the artifacts bucket) in moto, named where the deployed function finds it."""
    s3 = boto3.client("s3", region_name=AWS_REGION)
    s3.create_bucket(Bucket=PLANS, CreateBucketConfiguration={"LocationConstraint": AWS_REGION})
    monkeypatch.setenv(PLAN_BUCKET, PLANS)
    return PlanStore(s3, PLANS)


@pytest.fixture
def manager(
    tracker_tables: dict[str, Any], processing: ProcessingTracker, plans: PlanStore, clock: Clock
) -> BatchManager:
    return BatchManager(
        batch_config=tracker_tables["batch_config"],
        table_config=tracker_tables["table_config"],
        file_tracker=FileTracker(tracker_tables["file_tracker"], tracker_tables["file_tracker_history"], clock=clock),
        processing_tracker=processing,
        plans=plans,
        clock=clock,
    )
