"""Batch Manager: the function every File Processor state machine calls to plan batches of tables
and to summarise their outcome; it publishes the freshness metric."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from constructs import Construct

from infrastructure.grants import grant_key, grant_table
from infrastructure.lambda_function import OdpFunction, OdpFunctionProps
from infrastructure.tracking import Tracking

HANDLER = "lambdas.batch_manager.handler.handler"
SERVICE = "batch_manager"  # Powertools service name: the `service` dimension of its metrics
FUNCTION_TIMEOUT = Duration.minutes(2)


@dataclass(frozen=True)
class BatchManagerProps:
    """What the Batch Manager function needs.

    Attributes:
        environment: names every resource ``odp-<env>-...``.
        tracking: the tracker tables.
        key: the state key (encrypts logs, tables, topic).
        code_dir: the Lambda asset folder (infrastructure.assets).
        removal_policy: RETAIN (default) keeps data when the stack goes; DESTROY deletes it.
        log_retention: of the log groups (default one year).
    """

    environment: str
    tracking: Tracking
    key: kms.IKey
    code_dir: Path
    removal_policy: RemovalPolicy = RemovalPolicy.RETAIN
    log_retention: logs.RetentionDays = logs.RetentionDays.ONE_YEAR


class BatchManager(Construct):
    """One function shared by every cadence (the cadence travels in the payload)."""

    def __init__(self, scope: Construct, construct_id: str, props: BatchManagerProps) -> None:
        super().__init__(scope, construct_id)
        tracking, key = props.tracking, props.key
        self.lambda_ = OdpFunction(
            self,
            "Function",
            OdpFunctionProps.of(
                props,
                handler=HANDLER,
                service=SERVICE,
                timeout=FUNCTION_TIMEOUT,
                description="Plans batches of tables with landed files per cadence and summarises each run",
            ),
        )
        self.function = self.lambda_.function
        for logical in (
            "file_tracker",
            "processing_tracker",
            "batch_config",
            "table_config",
        ):
            grant_table(self.function, logical, tracking.table(logical), write=False)
        grant_key(self.function, key, encrypt=False)
