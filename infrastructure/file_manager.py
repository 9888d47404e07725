"""File Manager: S3 "Object Created" on staging -> EventBridge rule (prefix and suffix filters) ->
SQS (KMS, DLQ) -> the file_manager function, which reports partial batch failures."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infrastructure.grants import grant_key, grant_table
from infrastructure.lambda_function import OdpFunction
from infrastructure.nag import acknowledge
from infrastructure.tracking import Tracking
from odp.naming import resource_prefix
from odp.tracker.keys import DATA_SUFFIXES

HANDLER = "lambdas.file_manager.handler.handler"
SERVICE = "file_manager"
FUNCTION_TIMEOUT = Duration.seconds(60)
# AWS recommends a queue visibility timeout of six times the function timeout for SQS sources.
VISIBILITY_TIMEOUT = Duration.seconds(6 * 60)
MAX_RECEIVE_COUNT = 5
BATCH_SIZE = 10


def key_patterns(sources_: Iterable[str]) -> list[str]:
    """EventBridge wildcard patterns ``<source>/*<suffix>``: only data files of configured sources.

    Suffixes that another suffix already covers (``.csv.gz`` by ``.gz``) are left out.
    """
    suffixes = sorted(s for s in DATA_SUFFIXES if not any(s != o and s.endswith(o) for o in DATA_SUFFIXES))
    return [f"{source}/*{suffix}" for source in sorted(set(sources_)) for suffix in suffixes]


class FileManager(Construct):
    """The landing path of every CDC file; ``queue``, ``dead_letter_queue`` and ``function`` are public."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        environment: str,
        staging: s3.IBucket,
        sources_: Iterable[str],
        tracking: Tracking,
        key: kms.IKey,
        code_dir: Path,
        removal_policy: RemovalPolicy,
        log_retention: logs.RetentionDays,
    ) -> None:
        super().__init__(scope, construct_id)
        prefix = resource_prefix(environment)
        self.dead_letter_queue = sqs.Queue(
            self,
            "DeadLetterQueue",
            queue_name=f"{prefix}-file-manager-dlq",
            encryption=sqs.QueueEncryption.KMS,
            encryption_master_key=key,
            enforce_ssl=True,
            retention_period=Duration.days(14),
            removal_policy=removal_policy,
        )
        acknowledge(self.dead_letter_queue, "AwsSolutions-SQS3", "This queue is itself the dead-letter queue.")
        self.queue = sqs.Queue(
            self,
            "Queue",
            queue_name=f"{prefix}-file-manager",
            encryption=sqs.QueueEncryption.KMS,
            encryption_master_key=key,
            enforce_ssl=True,
            visibility_timeout=VISIBILITY_TIMEOUT,
            retention_period=Duration.days(4),
            dead_letter_queue=sqs.DeadLetterQueue(max_receive_count=MAX_RECEIVE_COUNT, queue=self.dead_letter_queue),
            removal_policy=removal_policy,
        )
        self.rule = events.Rule(
            self,
            "ObjectCreated",
            rule_name=f"{prefix}-staging-object-created",
            description="Data files landing in the staging bucket under a configured source",
            event_pattern=events.EventPattern(
                source=["aws.s3"],
                detail_type=["Object Created"],
                detail={
                    "bucket": {"name": [staging.bucket_name]},
                    "object": {"key": [{"wildcard": p} for p in key_patterns(sources_)]},
                },
            ),
        )
        self.rule.add_target(targets.SqsQueue(self.queue))

        self.lambda_ = OdpFunction(
            self,
            "Function",
            environment=environment,
            names=tracking.names,
            code_dir=code_dir,
            handler=HANDLER,
            service=SERVICE,
            description="Registers each landed CDC file in file_tracker (one item per object version)",
            key=key,
            timeout=FUNCTION_TIMEOUT,
            removal_policy=removal_policy,
            log_retention=log_retention,
        )
        self.function = self.lambda_.function
        grant_table(self.function, "file_tracker", tracking.table("file_tracker"), write=True)
        # register() is one transaction: a condition check on file_tracker_history, a put on file_tracker.
        grant_table(self.function, "file_tracker_history", tracking.table("file_tracker_history"), write=False)
        grant_table(self.function, "table_config", tracking.table("table_config"), write=False)
        grant_key(self.function, key, encrypt=True)
        self.function.add_event_source(
            sources.SqsEventSource(
                self.queue,
                batch_size=BATCH_SIZE,
                max_batching_window=Duration.seconds(5),
                report_batch_item_failures=True,
            )
        )
