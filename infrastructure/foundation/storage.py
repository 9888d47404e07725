"""Storage: one customer-managed KMS key per data zone plus one for operational state and logs,
and the buckets of the lake (staging, raw, conformed, purpose_built, artifacts, athena_results),
each logging to the access_logs bucket."""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from infrastructure.foundation.secure_bucket import SecureBucket, SecureBucketProps
from odp.contracts.batches import PLAN_RETENTION_DAYS, PLANS_PREFIX
from odp.naming import bucket_name, resource_prefix

DATA_ZONES = ("staging", "raw", "conformed", "purpose_built")


@dataclass(frozen=True)
class RetentionSettings:
    """Lifecycle settings from environments.yaml."""

    staging_days: int  # landed CDC files expire after this many days
    data_days: int  # noncurrent versions (and access logs) expire after this many days


@dataclass(frozen=True)
class StorageProps:
    """What Storage needs: keys and buckets of one environment.

    Attributes:
        environment: names every resource ``odp-<env>-...``.
        retention: staging and data retention in days (lifecycle rules).
        removal_policy: RETAIN (default) keeps data when the stack goes; DESTROY deletes it.
    """

    environment: str
    retention: RetentionSettings
    removal_policy: RemovalPolicy = RemovalPolicy.RETAIN


class Storage(Construct):
    """Keys and buckets. Data is kept when ``removal_policy`` is RETAIN (test and prod).

    Attributes:
        keys: zone name -> key, for ``DATA_ZONES``.
        state_key: key of the tracker tables, queues, topic, logs, artifacts and Athena results.
        buckets: bucket purpose -> bucket (``DATA_ZONES`` plus artifacts and athena_results).
        access_logs: the server-access-log bucket (SSE-S3).
    """

    def __init__(self, scope: Construct, construct_id: str, props: StorageProps) -> None:
        super().__init__(scope, construct_id)
        environment, retention, removal_policy = props.environment, props.retention, props.removal_policy
        stack = Stack.of(self)
        prefix = resource_prefix(environment)

        def key(zone: str, description: str) -> kms.Key:
            return kms.Key(
                self,
                f"{zone.title().replace('_', '')}Key",
                alias=f"alias/{prefix}-{zone.replace('_', '-')}",
                description=description,
                enable_key_rotation=True,
                removal_policy=removal_policy,
            )

        self.keys = {zone: key(zone, f"ODP {environment}: {zone} zone data") for zone in DATA_ZONES}
        self.state_key = key("state", f"ODP {environment}: tracker tables, queues, topic, logs, artifacts")
        # Services that encrypt with the state key on their own behalf (log groups, alarms and
        # EventBridge publishing to the encrypted topic), limited to this account.
        logs_arn = f"arn:{stack.partition}:logs:{stack.region}:{stack.account}:*"
        self.state_key.add_to_resource_policy(
            iam.PolicyStatement(
                sid="AllowCloudWatchLogs",
                principals=[iam.ServicePrincipal(f"logs.{stack.region}.amazonaws.com")],
                actions=["kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*"],
                resources=["*"],
                conditions={"ArnLike": {"kms:EncryptionContext:aws:logs:arn": logs_arn}},
            )
        )
        self.state_key.add_to_resource_policy(
            iam.PolicyStatement(
                sid="AllowAlarmsAndEventsToPublishToTheAlertsTopic",
                principals=[
                    iam.ServicePrincipal("cloudwatch.amazonaws.com"),
                    iam.ServicePrincipal("events.amazonaws.com"),
                ],
                actions=["kms:Decrypt", "kms:GenerateDataKey*"],
                resources=["*"],
                conditions={"StringEquals": {"aws:SourceAccount": stack.account}},
            )
        )

        # S3 server access logs cannot be delivered to a KMS-encrypted bucket: SSE-S3 (no key).
        # No S1 acknowledgment: cdk-nag recognises a bucket that other buckets log into.
        self.access_logs = SecureBucket(
            self,
            "AccessLogsBucket",
            SecureBucketProps(
                bucket_name=bucket_name(environment, "access_logs", stack.account, stack.region),
                lifecycle_rules=(
                    s3.LifecycleRule(id="expire-access-logs", expiration=Duration.days(retention.data_days)),
                ),
                noncurrent_version_days=1,
                removal_policy=removal_policy,
            ),
        ).bucket

        purposes = {zone: self.keys[zone] for zone in DATA_ZONES}
        purposes.update({"artifacts": self.state_key, "athena_results": self.state_key})
        self.buckets: dict[str, s3.Bucket] = {}
        for purpose, bucket_key in purposes.items():
            rules = []
            if purpose == "staging":
                rules.append(
                    s3.LifecycleRule(id="expire-landed-files", expiration=Duration.days(retention.staging_days))
                )
            if purpose == "athena_results":
                rules.append(s3.LifecycleRule(id="expire-query-results", expiration=Duration.days(retention.data_days)))
            if purpose == "artifacts":  # the cadences' plans, their Map results and summaries (lambdas/batch_manager)
                rules.append(
                    s3.LifecycleRule(
                        id="expire-plans", prefix=f"{PLANS_PREFIX}/", expiration=Duration.days(PLAN_RETENTION_DAYS)
                    )
                )
            self.buckets[purpose] = SecureBucket(
                self,
                f"{purpose.title().replace('_', '')}Bucket",
                SecureBucketProps(
                    bucket_name=bucket_name(environment, purpose, stack.account, stack.region),
                    encryption_key=bucket_key,
                    access_logs=self.access_logs,
                    access_logs_prefix=f"{purpose}/",
                    lifecycle_rules=tuple(rules),
                    noncurrent_version_days=retention.data_days,
                    removal_policy=removal_policy,
                ),
            ).bucket

        # EventBridge notifications set on the bucket itself, not through CDK's notifications
        # custom resource (a Lambda that would only flip this one switch).
        staging = self.buckets["staging"].node.default_child
        staging.add_property_override("NotificationConfiguration.EventBridgeConfiguration.EventBridgeEnabled", True)

    @property
    def staging(self) -> s3.Bucket:
        return self.buckets["staging"]

    @property
    def raw(self) -> s3.Bucket:
        return self.buckets["raw"]

    @property
    def artifacts(self) -> s3.Bucket:
        return self.buckets["artifacts"]

    @property
    def athena_results(self) -> s3.Bucket:
        return self.buckets["athena_results"]
