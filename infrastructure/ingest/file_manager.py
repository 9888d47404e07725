"""File Manager: S3 "Object Created" on staging -> one EventBridge rule (a key prefix per configured
source) -> SQS (KMS, DLQ) -> the file_manager function, which classifies each object (data file or not)
and reports partial batch failures.

The rule filters on the source prefix only: suffixes are the File Manager's business (Firehose writes
objects without an extension), and a prefix per source keeps the pattern far below EventBridge's
2,048-character quota. Past the quota the rule matches the whole bucket instead (a synth warning says
so): the File Manager ignores keys outside the configured sources.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import jsii
from aws_cdk import Annotations, Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infrastructure.grants import grant_key, grant_table
from infrastructure.ingest.lambda_function import FunctionOwnerProps, FunctionSpec, OdpFunction, OdpFunctionProps
from odp.naming import resource_prefix

HANDLER = "lambdas.file_manager.handler.handler"
SERVICE = "file_manager"
FUNCTION_TIMEOUT = Duration.seconds(60)
FUNCTION = FunctionSpec(
    HANDLER, SERVICE, FUNCTION_TIMEOUT, "Registers each landed CDC file in file_tracker (one item per object version)"
)
# AWS recommends a queue visibility timeout of six times the function timeout for SQS sources.
VISIBILITY_TIMEOUT = Duration.seconds(6 * 60)
MAX_RECEIVE_COUNT = 5
BATCH_SIZE = 10


# EventBridge's quota on an event pattern's length (characters).
EVENT_PATTERN_MAX_LENGTH = 2048
# A bucket name is at most 63 characters; the pattern is measured with the longest one.
_LONGEST_BUCKET_NAME = "b" * 63


def key_prefixes(sources_: Iterable[str]) -> list[str]:
    """One key prefix ``<source>/`` per configured source, sorted and without repeats."""
    return [f"{source}/" for source in sorted(set(sources_))]


def object_created_pattern(bucket_name: str, prefixes: list[str] | None) -> dict:
    """The rule's event pattern: Object Created in ``bucket_name``, under one of ``prefixes`` (None: any key)."""
    detail: dict = {"bucket": {"name": [bucket_name]}}
    if prefixes is not None:
        detail["object"] = {"key": [{"prefix": prefix} for prefix in prefixes]}
    return {"source": ["aws.s3"], "detail-type": ["Object Created"], "detail": detail}


def fits_event_pattern_quota(prefixes: list[str]) -> bool:
    """Whether the pattern with these prefixes stays within EVENT_PATTERN_MAX_LENGTH for any bucket name."""
    pattern = object_created_pattern(_LONGEST_BUCKET_NAME, prefixes)
    return len(json.dumps(pattern, separators=(",", ":"))) <= EVENT_PATTERN_MAX_LENGTH


# EventBridge retries a failed delivery for up to a day (its default), then moves the event to the DLQ.
TARGET_MAX_EVENT_AGE = Duration.hours(24)
TARGET_RETRY_ATTEMPTS = 185


@jsii.implements(events.IRuleTarget)
class RuleToQueue:
    """The SQS target of one rule: each queue admits EventBridge's SendMessage from this rule only
    (``aws:SourceArn``; CDK's ``SqsQueue`` target narrows a KMS-encrypted queue to the account only), and an
    event EventBridge cannot deliver (queue policy, key, throttling past a day of retries) goes to
    ``dead_letter_queue`` instead of being dropped."""

    def __init__(self, queue: sqs.IQueue, dead_letter_queue: sqs.IQueue) -> None:
        self.queue = queue
        self.dead_letter_queue = dead_letter_queue

    def bind(self, rule: events.IRule, _id: str | None = None) -> events.RuleTargetConfig:
        for queue in (self.queue, self.dead_letter_queue):
            queue.add_to_resource_policy(
                iam.PolicyStatement(
                    sid=f"EventsFrom{rule.node.id}",
                    principals=[iam.ServicePrincipal("events.amazonaws.com")],
                    actions=["sqs:SendMessage"],
                    resources=[queue.queue_arn],
                    conditions={"ArnEquals": {"aws:SourceArn": rule.rule_arn}},
                )
            )
        return events.RuleTargetConfig(
            arn=self.queue.queue_arn,
            target_resource=self.queue,
            dead_letter_config=events.CfnRule.DeadLetterConfigProperty(arn=self.dead_letter_queue.queue_arn),
            retry_policy=events.CfnRule.RetryPolicyProperty(
                maximum_event_age_in_seconds=int(TARGET_MAX_EVENT_AGE.to_seconds()),
                maximum_retry_attempts=TARGET_RETRY_ATTEMPTS,
            ),
        )


@dataclass(frozen=True, kw_only=True)
class FileManagerFunctionProps(FunctionOwnerProps):
    """What the landing path of one environment is built from.

    Attributes:
        environment: environment name (physical names ``odp-<env>-file-manager[-dlq]``, the rule's name).
        staging: the staging bucket whose Object Created events the rule matches.
        sources: the configured sources; one key prefix ``<source>/`` each.
        tracking: the tracker tables (file_tracker written, file_tracker_history and table_config read).
        key: the state key (queues, log group, tables).
        code_dir: the Lambda asset folder (``infrastructure.assets.lambda_code``).
        removal_policy: queues and log group when the stack goes; default RETAIN.
        log_retention: the function's log retention; default one month.
    """

    staging: s3.IBucket
    sources: Sequence[str]
    log_retention: logs.RetentionDays = logs.RetentionDays.ONE_MONTH


class FileManagerFunction(Construct):
    """The landing path of every CDC file; ``queue``, ``dead_letter_queue`` and ``function`` are public."""

    def __init__(self, scope: Construct, construct_id: str, props: FileManagerFunctionProps) -> None:
        environment, staging, tracking, key = props.environment, props.staging, props.tracking, props.key
        removal_policy = props.removal_policy
        sources_ = props.sources
        super().__init__(scope, construct_id)
        prefix = resource_prefix(environment)
        queue = {  # both queues: the state key, TLS only, kept or removed with the stack
            "encryption": sqs.QueueEncryption.KMS,
            "encryption_master_key": key,
            "enforce_ssl": True,
            "removal_policy": removal_policy,
        }
        self.dead_letter_queue = sqs.Queue(
            self,
            "DeadLetterQueue",
            queue_name=f"{prefix}-file-manager-dlq",
            retention_period=Duration.days(14),
            **queue,
        )
        # No SQS3 acknowledgment: cdk-nag recognises a queue that another queue uses as its DLQ.
        self.queue = sqs.Queue(
            self,
            "Queue",
            queue_name=f"{prefix}-file-manager",
            visibility_timeout=VISIBILITY_TIMEOUT,
            retention_period=Duration.days(4),
            dead_letter_queue=sqs.DeadLetterQueue(max_receive_count=MAX_RECEIVE_COUNT, queue=self.dead_letter_queue),
            **queue,
        )
        prefixes: list[str] | None = key_prefixes(sources_)
        if not fits_event_pattern_quota(prefixes):
            Annotations.of(self).add_warning_v2(
                "odp:file-manager-rule-whole-bucket",
                f"{len(prefixes)} source prefixes exceed EventBridge's {EVENT_PATTERN_MAX_LENGTH}-character pattern "
                "quota: the rule matches every object of the staging bucket and the File Manager ignores the rest",
            )
            prefixes = None
        pattern = object_created_pattern(staging.bucket_name, prefixes)
        self.rule = events.Rule(
            self,
            "ObjectCreated",
            rule_name=f"{prefix}-staging-object-created",
            description="Objects landing in the staging bucket under a configured source",
            event_pattern=events.EventPattern(
                source=pattern["source"], detail_type=pattern["detail-type"], detail=pattern["detail"]
            ),
        )
        self.rule.add_target(RuleToQueue(self.queue, self.dead_letter_queue))

        self.lambda_ = OdpFunction(self, "Function", OdpFunctionProps(props, FUNCTION))
        self.function = self.lambda_.function
        grant_table(self.function, "file_tracker", tracking.table("file_tracker"), write=True)
        # register() is one transaction: a condition check on file_tracker_history, a put on file_tracker.
        grant_table(self.function, "file_tracker_history", tracking.table("file_tracker_history"), write=False)
        grant_table(self.function, "table_config", tracking.table("table_config"), write=True)  # include: onboards
        grant_key(self.function, key, encrypt=True)
        self.function.add_event_source(
            sources.SqsEventSource(
                self.queue,
                batch_size=BATCH_SIZE,
                max_batching_window=Duration.seconds(5),
                report_batch_item_failures=True,
            )
        )
