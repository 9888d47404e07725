"""The streaming path: per configured stream, a KMS-encrypted on-demand Kinesis data stream, the Glue
streaming job that reads it (``gluestreaming``, Glue 5.1), the DynamoDB Kinesis streaming destination of
each streamed table in this account, alarms and dashboard widgets.

The job shares the File Processor's packaging (the ``etl`` / ``odp`` zip and the offline wheels in the
artifacts bucket) and security configuration; its script is deployed beside them. Its checkpoint and
its bad records live in the artifacts bucket under ``streaming/<stream>/``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_glue as glue
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kinesis as kinesis
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3_deployment as s3deploy
from aws_cdk import aws_sns as sns
from aws_cdk import custom_resources as cr
from constructs import Construct

from infrastructure.foundation.observability import dimension_metric
from infrastructure.grants import grant_key, grant_objects, grant_table
from infrastructure.ingest.tracking import Tracking
from infrastructure.jobs.glue_job import GlueCommand, GlueJobFamily, GlueJobFamilyProps, GlueJobSpec, GlueStage
from infrastructure.jobs.glue_jobs import GlueJobs
from infrastructure.nag import acknowledge, acknowledge_custom_resource_singleton
from odp.config.models import TableConfig
from odp.config.streams import Stream, streamed_tables
from odp.contracts.job_kinds import STREAMING_JOB, STREAMING_PREFIX, JobDeployment, JobUnit
from odp.contracts.metrics import (
    BAD_RECORDS_METRIC,
    BATCH_SECONDS_METRIC,
    FAILED_TABLES_METRIC,
    RECORDS_METRIC,
    STREAM_DIMENSION,
    STREAMING_NAMESPACE,
)
from odp.naming import (
    PROCESSING_TRACKER,
    PROCESSING_TRACKER_HISTORY,
    kinesis_stream_name,
    resource_prefix,
    stream_job_name,
)

SCRIPT = Path(__file__).resolve().parents[2] / "etl" / "jobs" / "streaming_job.py"
SCRIPT_PREFIX = "glue/streaming/"
# Alarm when a batch takes more than this share of the window: the job is about to fall behind.
BATCH_DURATION_SHARE = 0.8
# Alarm when the oldest unread record is older than this many windows.
ITERATOR_AGE_WINDOWS = 3
PERIOD = Duration.minutes(5)
# DynamoDB's service-linked role for Kinesis Data Streams replication, created on the first destination.
KINESIS_REPLICATION_SERVICE = "kinesisreplication.dynamodb.amazonaws.com"
KINESIS_REPLICATION_ROLE = "AWSServiceRoleForDynamoDBKinesisDataStreamsReplication"


@dataclass(frozen=True)
class StreamingProps:
    """What the streaming construct needs from the rest of the stage.

    Attributes:
        stage: what the stage gives every job family (the raw bucket and key, artifacts, the network).
        streams: streams.yaml's streams by name (a construct with none creates nothing).
        tables: every configured table; each stream takes those that name it.
        glue_jobs: the File Processor jobs, whose deployment ships the library the streaming jobs load.
        alerts_topic, dashboard: where the streams' alarms go and their graphs are shown.
        deployment: what the jobs' static arguments name (odp.contracts.job_kinds.JobDeployment).
        removal_policy: of the Kinesis streams and their key (RETAIN by default: records are data).
    """

    stage: GlueStage
    streams: Mapping[str, Stream]
    tables: Sequence[TableConfig]
    glue_jobs: GlueJobs
    tracking: Tracking
    alerts_topic: sns.ITopic
    dashboard: cloudwatch.Dashboard
    deployment: JobDeployment
    removal_policy: RemovalPolicy = RemovalPolicy.RETAIN


class Streaming(Construct):
    """Kinesis streams, Glue streaming jobs, DynamoDB destinations, alarms: one set per configured stream.

    Attributes:
        streams: stream name -> Kinesis stream; ``jobs``: stream name -> Glue job; ``family``: the jobs'
            :class:`GlueJobFamily` (``role``: its role).
    """

    def __init__(self, scope: Construct, construct_id: str, *, props: StreamingProps) -> None:
        super().__init__(scope, construct_id)
        self.streams: dict[str, kinesis.Stream] = {}
        self.jobs: dict[str, glue.JobBase] = {}
        if not props.streams:
            return
        stack = Stack.of(self)
        stage = props.stage
        self.key = kms.Key(
            self,
            "StreamKey",
            description=f"ODP {stage.environment}: Kinesis data streams of DynamoDB changes",
            enable_key_rotation=True,
            removal_policy=props.removal_policy,
        )
        databases = sorted({table.database for name in props.streams for table in streamed_tables(props.tables, name)})
        self.family = GlueJobFamily(
            self,
            "Jobs",
            GlueJobFamilyProps(
                stage,
                "streaming",
                SCRIPT_PREFIX,
                [s3deploy.Source.data(SCRIPT.name, SCRIPT.read_text(encoding="utf-8"))],
                data_key=stage.zone_keys["raw"],  # Hudi tables in raw; checkpoints and bad records in artifacts
                databases=databases,
                metric_namespaces=[STREAMING_NAMESPACE],
                requires=[props.glue_jobs.code],  # the etl/odp zip and the wheels
            ),
        )
        self.role = self.family.role
        self._grant(props)
        for name, stream in props.streams.items():
            tables = streamed_tables(props.tables, name)
            kinesis_stream = kinesis.Stream(
                self,
                f"Stream-{name}",
                stream_name=kinesis_stream_name(props.stage.environment, name),
                stream_mode=kinesis.StreamMode.ON_DEMAND,
                encryption=kinesis.StreamEncryption.KMS,
                encryption_key=self.key,
                retention_period=Duration.hours(stream.retention_hours),
                removal_policy=props.removal_policy,
            )
            acknowledge(
                kinesis_stream,
                "AwsSolutions-KDS3",
                "A customer managed key, not aws/kinesis: its key policy can admit a producer in another account "
                "(a DynamoDB table there) and it rotates; the cost is one key for all streams of the environment.",
            )
            kinesis_stream.grant_read(self.role)
            self.streams[name] = kinesis_stream
            self.jobs[name] = self._job(props, name, stream, kinesis_stream, tables)
            if stream.wire_dynamodb:
                for table in tables:
                    self._dynamodb_destination(stack, name, kinesis_stream, table)
            self._monitor(props, name, stream, kinesis_stream)

    def _grant(self, props: StreamingProps) -> None:
        """What the streaming jobs need beyond the family's role: raw, their prefixes, table_config, the run ledger."""
        grant_objects(
            self.role,
            props.stage.buckets["raw"],
            write=True,
            delete=True,
            reason="The streaming job owns the Hudi tables of its streamed tables under s3://raw/<database>/<table>/.",
        )
        grant_objects(
            self.role,
            props.stage.buckets["artifacts"],
            prefix=STREAMING_PREFIX,
            write=True,
            delete=True,  # Spark rewrites and cleans its checkpoint files
            reason="Each stream's checkpoint and bad records live under streaming/<stream>/ in the artifacts bucket.",
        )
        grant_table(self.role, "table_config", props.tracking.table("table_config"), write=False)
        for logical in (PROCESSING_TRACKER, PROCESSING_TRACKER_HISTORY):  # the run ledger: each table commit's run
            grant_table(self.role, logical, props.tracking.table(logical), write=True)

    def _job(
        self,
        props: StreamingProps,
        name: str,
        stream: Stream,
        kinesis_stream: kinesis.Stream,
        tables: list[TableConfig],
    ) -> glue.JobBase:
        unit = JobUnit(
            name,
            settings=stream,
            table_ids=tuple(table.table_id for table in tables),
            values={"stream_arn": kinesis_stream.stream_arn},
        )
        return self.family.add_job(
            GlueJobSpec(
                construct_id=f"Job-{name}",
                name=STREAMING_JOB.job_name(props.stage.environment, unit),
                description=f"ODP stream {name}: DynamoDB changes on Kinesis -> Hudi every {stream.window_seconds} s",
                script=SCRIPT.name,
                arguments=STREAMING_JOB.static_arguments(props.deployment, unit),
                command=GlueCommand.STREAMING,
                worker_type=stream.worker_type.value,
                number_of_workers=stream.number_of_workers,
            )
        )

    def _dynamodb_destination(
        self, stack: Stack, name: str, kinesis_stream: kinesis.Stream, table: TableConfig
    ) -> None:
        """Turn on the DynamoDB table's Kinesis streaming destination (and off when the stack removes it)."""
        table_arn = f"arn:{stack.partition}:dynamodb:{stack.region}:{stack.account}:table/{table.table}"
        parameters = {"TableName": table.table, "StreamArn": kinesis_stream.stream_arn}
        resource = cr.AwsCustomResource(
            self,
            f"Destination-{name}-{table.table}",
            on_create=cr.AwsSdkCall(
                service="DynamoDB",
                action="enableKinesisStreamingDestination",
                parameters={
                    **parameters,
                    "EnableKinesisStreamingConfiguration": {"ApproximateCreationDateTimePrecision": "MILLISECOND"},
                },
                physical_resource_id=cr.PhysicalResourceId.of(f"{table.table}->{name}"),
            ),
            on_delete=cr.AwsSdkCall(
                service="DynamoDB", action="disableKinesisStreamingDestination", parameters=parameters
            ),
            policy=cr.AwsCustomResourcePolicy.from_statements(
                [
                    iam.PolicyStatement(
                        actions=[
                            "dynamodb:EnableKinesisStreamingDestination",
                            "dynamodb:DisableKinesisStreamingDestination",
                            "dynamodb:DescribeKinesisStreamingDestination",
                        ],
                        resources=[table_arn],
                    ),
                    iam.PolicyStatement(
                        actions=[
                            "kinesis:PutRecord",
                            "kinesis:PutRecords",
                            "kinesis:DescribeStream",
                            "kinesis:DescribeStreamSummary",
                        ],
                        resources=[kinesis_stream.stream_arn],
                    ),
                    # DynamoDB's documented requirements of EnableKinesisStreamingDestination beyond the table and
                    # stream: ListStreams (no resource-level permission) and, in an account where it does not
                    # exist yet, creating DynamoDB's Kinesis replication service-linked role.
                    iam.PolicyStatement(actions=["kinesis:ListStreams"], resources=["*"]),
                    iam.PolicyStatement(
                        actions=["iam:CreateServiceLinkedRole"],
                        resources=[
                            f"arn:{stack.partition}:iam::{stack.account}:role/aws-service-role/"
                            f"{KINESIS_REPLICATION_SERVICE}/{KINESIS_REPLICATION_ROLE}"
                        ],
                        conditions={"StringEquals": {"iam:AWSServiceName": KINESIS_REPLICATION_SERVICE}},
                    ),
                ]
            ),
            install_latest_aws_sdk=False,
        )
        grant_key(resource, self.key, encrypt=True)
        acknowledge(
            resource,
            "AwsSolutions-IAM5[Resource::*]",
            "kinesis:ListStreams supports no resource-level permission; DynamoDB requires it to enable a destination.",
        )
        acknowledge_custom_resource_singleton(stack)

    def _monitor(self, props: StreamingProps, name: str, stream: Stream, kinesis_stream: kinesis.Stream) -> None:
        action = actions.SnsAction(props.alerts_topic)
        prefix = f"{resource_prefix(props.stage.environment)}-stream-{name}"

        def alarm(suffix: str, metric: cloudwatch.IMetric, threshold: float, description: str) -> None:
            created = metric.create_alarm(
                self,
                f"{name}-{suffix}",
                alarm_name=f"{prefix}-{suffix}",
                alarm_description=description,
                threshold=threshold,
                evaluation_periods=1,
                comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
                treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            )
            created.add_alarm_action(action)

        def own(metric_name: str, statistic: str) -> cloudwatch.Metric:
            return dimension_metric(
                STREAMING_NAMESPACE, metric_name, {STREAM_DIMENSION: name}, statistic, period=PERIOD
            )

        iterator_age = kinesis_stream.metric_get_records_iterator_age_milliseconds(period=PERIOD, statistic="Maximum")
        age_threshold = ITERATOR_AGE_WINDOWS * stream.window_seconds * 1000
        alarm(
            "iterator-age",
            iterator_age,
            age_threshold,
            f"Stream {name}: the oldest unread record is older than {ITERATOR_AGE_WINDOWS} windows",
        )
        batch_seconds = own(BATCH_SECONDS_METRIC, "Maximum")
        duration_threshold = BATCH_DURATION_SHARE * stream.window_seconds
        alarm(
            "batch-duration",
            batch_seconds,
            duration_threshold,
            f"Stream {name}: a micro-batch took more than {int(BATCH_DURATION_SHARE * 100)}% of the "
            f"{stream.window_seconds} s window; the job is about to fall behind",
        )
        bad = own(BAD_RECORDS_METRIC, "Sum")
        failed = own(FAILED_TABLES_METRIC, "Sum")
        alarm("bad-records", bad, 0, f"Stream {name}: bad records were set aside (streaming/errors/{name}/)")
        alarm("failed-tables", failed, 0, f"Stream {name}: a table's batch failed; its records were set aside")
        self.family.alert_when_stopped(
            stream_job_name(props.stage.environment, name),
            rule_name=f"{prefix}-job-stopped",
            topic=props.alerts_topic,
            description=f"The streaming job of {name} stopped (failed, timed out, errored or was stopped)",
        )
        props.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title=f"Stream {name}: iterator age (ms)",
                left=[iterator_age],
                left_annotations=[cloudwatch.HorizontalAnnotation(value=age_threshold, label="alarm")],
            ),
            cloudwatch.GraphWidget(
                title=f"Stream {name}: batch seconds",
                left=[batch_seconds],
                left_annotations=[
                    cloudwatch.HorizontalAnnotation(value=stream.window_seconds, label="window"),
                    cloudwatch.HorizontalAnnotation(value=duration_threshold, label="alarm"),
                ],
            ),
            cloudwatch.GraphWidget(
                title=f"Stream {name}: records, bad records, failed tables",
                left=[own(RECORDS_METRIC, "Sum"), bad, failed],
            ),
        )
