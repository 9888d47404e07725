"""What every layer observes with: encrypted log groups kept as long as the environment says, ODP's own metrics by
namespace and dimensions, and EventBridge rules that send a state change to the alerts topic."""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from constructs import Construct

# The period of ODP's alarms and dashboard graphs.
PERIOD = Duration.minutes(5)


def encrypted_log_group(
    scope: Construct,
    name: str,
    *,
    key: kms.IKey,
    retention: logs.RetentionDays,
    removal_policy: RemovalPolicy,
) -> logs.LogGroup:
    """The ``Logs`` log group of a function or state machine: its own name, the state key, the retention."""
    return logs.LogGroup(
        scope, "Logs", log_group_name=name, encryption_key=key, retention=retention, removal_policy=removal_policy
    )


def function_role(scope: Construct, log_group: logs.LogGroup, *, description: str) -> iam.Role:
    """The ``Role`` of a Lambda function that may write to its own log group and nothing else yet (no
    AWSLambdaBasicExecutionRole: logs:* on every group); the caller adds what the function calls."""
    role = iam.Role(scope, "Role", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"), description=description)
    role.add_to_policy(
        iam.PolicyStatement(
            actions=["logs:CreateLogStream", "logs:PutLogEvents"],
            resources=[log_group.log_group_arn],  # the ARN attribute ends in ":*" (its streams)
        )
    )
    return role


_RETENTION_DAYS = {
    1: logs.RetentionDays.ONE_DAY,
    3: logs.RetentionDays.THREE_DAYS,
    5: logs.RetentionDays.FIVE_DAYS,
    7: logs.RetentionDays.ONE_WEEK,
    14: logs.RetentionDays.TWO_WEEKS,
    30: logs.RetentionDays.ONE_MONTH,
    60: logs.RetentionDays.TWO_MONTHS,
    90: logs.RetentionDays.THREE_MONTHS,
    120: logs.RetentionDays.FOUR_MONTHS,
    150: logs.RetentionDays.FIVE_MONTHS,
    180: logs.RetentionDays.SIX_MONTHS,
    365: logs.RetentionDays.ONE_YEAR,
    400: logs.RetentionDays.THIRTEEN_MONTHS,
    545: logs.RetentionDays.EIGHTEEN_MONTHS,
    731: logs.RetentionDays.TWO_YEARS,
    1827: logs.RetentionDays.FIVE_YEARS,
    3653: logs.RetentionDays.TEN_YEARS,
}


def log_retention(days: int) -> logs.RetentionDays:
    """The shortest CloudWatch retention that keeps logs at least ``days`` days (ten years at most)."""
    return next((_RETENTION_DAYS[d] for d in sorted(_RETENTION_DAYS) if d >= days), logs.RetentionDays.TEN_YEARS)


def dimension_metric(
    namespace: str, name: str, dimensions: dict[str, str], statistic: str, *, period: Duration = PERIOD
) -> cloudwatch.Metric:
    """One of ODP's own metrics (Batch Manager, File Processor, streaming job) by namespace and dimensions."""
    return cloudwatch.Metric(
        namespace=namespace, metric_name=name, dimensions_map=dimensions, statistic=statistic, period=period
    )


def alert_on_event(
    scope: Construct,
    construct_id: str,
    *,
    rule_name: str,
    description: str,
    pattern: events.EventPattern,
    topic: sns.ITopic,
) -> events.Rule:
    """An EventBridge rule sending the events ``pattern`` matches (a job or job run state change) to ``topic``."""
    rule = events.Rule(scope, construct_id, rule_name=rule_name, description=description, event_pattern=pattern)
    rule.add_target(targets.SnsTopic(topic))
    return rule
