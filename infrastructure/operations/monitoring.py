"""Monitoring: one KMS-encrypted SNS topic for alerts, the alarms that feed it, and a dashboard.

Alarms: DLQ depth > 0, state machine failures and timeouts, Glue job failures (an EventBridge rule
on "Glue Job State Change" publishes to the topic and its match count is alarmed), Lambda errors
and throttles, and data freshness per cadence (the Batch Manager's OldestPendingFileAgeSeconds above
twice the cadence interval), and quarantined files per cadence (the Batch Manager's QuarantinedFiles
above 0: a file failed its table max_file_attempts runs and was set aside; release it after a fix).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from aws_cdk import Duration, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infrastructure.foundation.observability import PERIOD, alert_on_event, dimension_metric
from odp.config.models import Cadence
from odp.contracts.metrics import (
    CADENCE_DIMENSION,
    EVENTS_NAMESPACE,
    FRESHNESS_METRIC,
    MATCHED_EVENTS_METRIC,
    NAMESPACE,
    QUARANTINED_METRIC,
    RULE_NAME_DIMENSION,
    TABLE_DIMENSION,
    TABLE_DPU_SECONDS_METRIC,
)
from odp.naming import resource_prefix

# cron cadences have no fixed interval: their freshness alarm assumes an hourly schedule.
DEFAULT_CRON_INTERVAL_MINUTES = 60


def freshness_threshold_seconds(cadence: Cadence) -> int:
    """Twice the cadence interval, in seconds (cron cadences: twice DEFAULT_CRON_INTERVAL_MINUTES)."""
    return 2 * 60 * (cadence.interval_minutes or DEFAULT_CRON_INTERVAL_MINUTES)


def _cadence_metric(name: str, cadence_name: str, statistic: str, *, period: Duration = PERIOD) -> cloudwatch.Metric:
    """A Batch Manager metric of one cadence. It emits them with Metrics(service=""): Powertools then adds
    no `service` dimension, and `cadence` is the metric's only dimension."""
    return dimension_metric(NAMESPACE, name, {CADENCE_DIMENSION: cadence_name}, statistic, period=period)


# CloudWatch refuses an alarm whose Period x EvaluationPeriods exceeds one day.
MAX_ALARM_WINDOW_SECONDS = 86_400


def freshness_period(cadence: Cadence) -> Duration:
    """Twice the cadence interval (at most one day, CloudWatch's limit): every period holds at least one
    run's datapoint while the schedule fires, so a missing datapoint means no run."""
    return Duration.seconds(min(freshness_threshold_seconds(cadence), MAX_ALARM_WINDOW_SECONDS))


@dataclass(frozen=True)
class MonitoringProps:
    """The alerts topic and dashboard of one environment.

    Attributes:
        environment: names every resource ``odp-<env>-...``.
        key: the state key (encrypts logs, tables, topic).
        alarm_email: subscribed to the alerts topic when set; default None.
    """

    environment: str
    key: kms.IKey
    alarm_email: str | None = None


class Monitoring(Construct):
    """The alerts topic and the ``watch_*`` methods that add an alarm (and a dashboard widget)."""

    def __init__(self, scope: Construct, construct_id: str, props: MonitoringProps) -> None:
        super().__init__(scope, construct_id)
        environment, key, alarm_email = props.environment, props.key, props.alarm_email
        self._prefix = resource_prefix(environment)
        self.topic = sns.Topic(
            self,
            "Alerts",
            topic_name=f"{self._prefix}-alerts",
            display_name=f"ODP {environment} alerts",
            master_key=key,
            enforce_ssl=True,
        )
        # The topic policy CDK writes (enforce_ssl, the EventBridge target) replaces SNS's default one,
        # which let the account's CloudWatch alarms publish: without this statement no alarm notifies.
        self.topic.add_to_resource_policy(
            iam.PolicyStatement(
                sid="CloudWatchAlarmsPublish",
                principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
                actions=["sns:Publish"],
                resources=[self.topic.topic_arn],
                conditions={
                    "StringEquals": {"aws:SourceAccount": Stack.of(self).account},
                    "ArnLike": {
                        "aws:SourceArn": f"arn:{Stack.of(self).partition}:cloudwatch:{Stack.of(self).region}:"
                        f"{Stack.of(self).account}:alarm:{self._prefix}-*"
                    },
                },
            )
        )
        if alarm_email:
            self.topic.add_subscription(subscriptions.EmailSubscription(alarm_email))
        self._action = actions.SnsAction(self.topic)
        self.dashboard = cloudwatch.Dashboard(self, "Dashboard", dashboard_name=f"{self._prefix}-overview")
        self.alarms: list[cloudwatch.Alarm] = []

    def _alarm(
        self,
        construct_id: str,
        metric: cloudwatch.IMetric,
        threshold: float,
        description: str,
        *,
        missing: cloudwatch.TreatMissingData = cloudwatch.TreatMissingData.NOT_BREACHING,
    ) -> None:
        alarm = metric.create_alarm(
            self,
            construct_id,
            alarm_name=f"{self._prefix}-{construct_id}",
            alarm_description=description,
            threshold=threshold,
            evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            treat_missing_data=missing,
        )
        alarm.add_alarm_action(self._action)
        self.alarms.append(alarm)

    def watch_queue(self, name: str, dead_letter_queue: sqs.IQueue) -> None:
        metric = dead_letter_queue.metric_approximate_number_of_messages_visible(period=PERIOD, statistic="Maximum")
        self._alarm(f"{name}-dlq-depth", metric, 0, f"Messages in the {name} dead-letter queue: files not tracked")
        self.dashboard.add_widgets(cloudwatch.GraphWidget(title=f"{name} DLQ depth", left=[metric]))

    def watch_function(self, name: str, function: lambda_.IFunction) -> None:
        self._alarms_and_widget(
            f"{name} errors and throttles",
            [
                (f"{name}-errors", function.metric_errors(period=PERIOD), f"The {name} function failed"),
                (f"{name}-throttles", function.metric_throttles(period=PERIOD), f"The {name} function was throttled"),
            ],
        )

    def watch_state_machine(self, cadence: str, state_machine: sfn.IStateMachine) -> None:
        name = f"file-processor-{cadence}"
        self._alarms_and_widget(
            f"File Processor {cadence}",
            [
                (
                    f"{name}-failed",
                    state_machine.metric_failed(period=PERIOD),
                    f"The {cadence} File Processor run failed",
                ),
                (
                    f"{name}-timed-out",
                    state_machine.metric_timed_out(period=PERIOD),
                    f"The {cadence} File Processor timed out",
                ),
            ],
            shown=[state_machine.metric_succeeded(period=PERIOD)],
        )

    def _alarms_and_widget(
        self,
        title: str,
        alarms: list[tuple[str, cloudwatch.IMetric, str]],
        *,
        shown: list[cloudwatch.IMetric] | None = None,
    ) -> None:
        """An alarm above 0 per (id, metric, description), and one widget with ``shown`` and the alarmed metrics."""
        for construct_id, metric, description in alarms:
            self._alarm(construct_id, metric, 0, description)
        metrics = [*(shown or []), *(metric for _, metric, _ in alarms)]
        self.dashboard.add_widgets(cloudwatch.GraphWidget(title=title, left=metrics))

    def watch_glue_jobs(self, job_names: list[str]) -> None:
        rule = alert_on_event(
            self,
            "GlueJobFailed",
            rule_name=f"{self._prefix}-glue-job-failed",
            description="A batch Glue run (the File Processor, a registered job kind) failed, timed out or errored",
            pattern=events.EventPattern(
                source=["aws.glue"],
                detail_type=["Glue Job State Change"],
                detail={"jobName": job_names, "state": ["FAILED", "TIMEOUT", "ERROR"]},
            ),
            topic=self.topic,
        )
        metric = cloudwatch.Metric(
            namespace=EVENTS_NAMESPACE,
            metric_name=MATCHED_EVENTS_METRIC,
            dimensions_map={RULE_NAME_DIMENSION: rule.rule_name},
            statistic="Sum",
            period=PERIOD,
        )
        self._alarm("glue-job-failed", metric, 0, "A batch Glue job run failed (the File Processor, a job kind)")
        self.dashboard.add_widgets(cloudwatch.GraphWidget(title="Glue job failures", left=[metric]))

    def watch_table_costs(self, cadences: Mapping[str, Cadence], top: int = 10) -> None:
        """Dashboard only (etl/file_processor/cost.py): each cadence's DPU-seconds per day, which every run
        publishes; and the tables that cost the most over the last day when a cadence publishes per-table figures
        (``table_metrics``; otherwise a table's cost is in the job's log and the run history)."""
        per_cadence = [
            _cadence_metric(TABLE_DPU_SECONDS_METRIC, name, "Sum", period=Duration.days(1)) for name in cadences
        ]
        widgets: list[cloudwatch.IWidget] = [
            cloudwatch.GraphWidget(
                title="DPU-seconds per cadence per day", left=per_cadence, view=cloudwatch.GraphWidgetView.BAR, width=12
            )
        ]
        if any(cadence.table_metrics for cadence in cadences.values()):
            schema = f"{{{NAMESPACE},{CADENCE_DIMENSION},{TABLE_DIMENSION}}}"
            search = f"SEARCH('{schema} MetricName=\"{TABLE_DPU_SECONDS_METRIC}\"', 'Sum', 86400)"
            costliest = cloudwatch.MathExpression(
                expression=f"SORT({search}, SUM, DESC, {top})", label="", period=Duration.days(1)
            )
            widgets.append(
                cloudwatch.GraphWidget(
                    title=f"Costliest tables, DPU-seconds per day (top {top}, cadences with table_metrics)",
                    left=[costliest],
                    view=cloudwatch.GraphWidgetView.BAR,
                    width=12,
                )
            )
        self.dashboard.add_widgets(*widgets)

    def watch_freshness(self, cadence_name: str, cadence: Cadence) -> None:
        metric = _cadence_metric(FRESHNESS_METRIC, cadence_name, "Maximum", period=freshness_period(cadence))
        threshold = freshness_threshold_seconds(cadence)
        # Every run publishes the metric (0 when nothing waits): a period without a datapoint means the
        # schedule stopped firing or the Batch Manager failed, which is as stale as a breach.
        self._alarm(
            f"freshness-{cadence_name}",
            metric,
            threshold,
            f"A landed file of cadence {cadence_name} has waited more than {threshold} s (twice its interval), "
            "or no run published the metric for twice the interval",
            missing=cloudwatch.TreatMissingData.BREACHING,
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title=f"Oldest pending file, {cadence_name} (s)",
                left=[metric],
                left_annotations=[cloudwatch.HorizontalAnnotation(value=threshold, label="alarm")],
            )
        )

    def watch_quarantine(self, cadence_name: str) -> None:
        """Alarm when a run of this cadence quarantined a file (bad content at its first failure, or a failure that
        may pass on a retry after max_file_attempts runs; etl.file_processor.poison)."""
        metric = _cadence_metric(QUARANTINED_METRIC, cadence_name, "Sum")
        self._alarm(
            f"quarantined-{cadence_name}",
            metric,
            0,
            f"A file of cadence {cadence_name} was quarantined (bad content, or failed its table repeatedly); "
            "the table's other files were applied: python -m odp status names it and why, fix, then "
            "python -m odp file release",
        )
        self.dashboard.add_widgets(cloudwatch.GraphWidget(title=f"Quarantined files, {cadence_name}", left=[metric]))
