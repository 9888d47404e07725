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
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_glue as glue
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kinesis as kinesis
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_deployment as s3deploy
from aws_cdk import custom_resources as cr
from constructs import Construct

from infrastructure.assets import GlueArtifacts
from infrastructure.glue_jobs import GLUE_VERSION, GLUE_VPC_ACTIONS, GlueJobs, glue_runtime_arguments
from infrastructure.grants import grant_key, grant_objects, grant_table
from infrastructure.monitoring import Monitoring
from infrastructure.nag import acknowledge, acknowledge_many
from infrastructure.network import Network
from infrastructure.tracking import Tracking
from odp.config.models import TableConfig
from odp.config.streams import Stream, streamed_tables
from odp.contracts.metrics import (
    BAD_RECORDS_METRIC,
    BATCH_SECONDS_METRIC,
    FAILED_TABLES_METRIC,
    GLUE_NAMESPACE,
    RECORDS_METRIC,
    STREAM_DIMENSION,
    STREAMING_NAMESPACE,
)
from odp.contracts.streaming import StreamingJobArgs
from odp.naming import kinesis_stream_name, resource_prefix, stream_job_name

SCRIPT = Path(__file__).resolve().parents[1] / "etl" / "jobs" / "streaming_job.py"
SCRIPT_PREFIX = "glue/streaming/"
STREAMING_PREFIX = "streaming/"
# Alarm when a batch takes more than this share of the window: the job is about to fall behind.
BATCH_DURATION_SHARE = 0.8
# Alarm when the oldest unread record is older than this many windows.
ITERATOR_AGE_WINDOWS = 3
PERIOD = Duration.minutes(5)


@dataclass(frozen=True)
class StreamingProps:
    """What the streaming construct needs from the rest of the stage.

    Attributes:
        streams: streams.yaml's streams by name (a construct with none creates nothing).
        tables: every configured table; each stream takes those that name it.
        removal_policy: of the Kinesis streams and their key (RETAIN by default: records are data).
    """

    environment: str
    streams: Mapping[str, Stream]
    tables: Sequence[TableConfig]
    glue_jobs: GlueJobs
    network: Network
    tracking: Tracking
    monitoring: Monitoring
    buckets: Mapping[str, s3.IBucket]
    zone_keys: Mapping[str, kms.IKey]
    state_key: kms.IKey
    artifacts: GlueArtifacts
    removal_policy: RemovalPolicy = RemovalPolicy.RETAIN


class Streaming(Construct):
    """Kinesis streams, Glue streaming jobs, DynamoDB destinations, alarms: one set per configured stream.

    Attributes:
        streams: stream name -> Kinesis stream; ``jobs``: stream name -> CfnJob; ``role``: the jobs' role.
    """

    def __init__(self, scope: Construct, construct_id: str, *, props: StreamingProps) -> None:
        super().__init__(scope, construct_id)
        self.streams: dict[str, kinesis.Stream] = {}
        self.jobs: dict[str, glue.CfnJob] = {}
        if not props.streams:
            return
        stack = Stack.of(self)
        artifacts_bucket = props.buckets["artifacts"]
        self.key = kms.Key(
            self,
            "StreamKey",
            description=f"ODP {props.environment}: Kinesis data streams of DynamoDB changes",
            enable_key_rotation=True,
            removal_policy=props.removal_policy,
        )
        self.script = s3deploy.BucketDeployment(
            self,
            "Script",
            sources=[s3deploy.Source.data(SCRIPT.name, SCRIPT.read_text(encoding="utf-8"))],
            destination_bucket=artifacts_bucket,
            destination_key_prefix=SCRIPT_PREFIX,
            prune=True,
            retain_on_delete=False,
        )
        self.role = self._role(props)
        for name, stream in props.streams.items():
            tables = streamed_tables(props.tables, name)
            kinesis_stream = kinesis.Stream(
                self,
                f"Stream-{name}",
                stream_name=kinesis_stream_name(props.environment, name),
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

    def _role(self, props: StreamingProps) -> iam.Role:
        stack = Stack.of(self)
        role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("glue.amazonaws.com"),
            description=f"ODP {props.environment} streaming Glue jobs",
        )
        grant_objects(
            role,
            props.buckets["raw"],
            write=True,
            delete=True,
            reason="The streaming job owns the Hudi tables of its streamed tables under s3://raw/<database>/<table>/.",
        )
        grant_objects(
            role,
            props.buckets["artifacts"],
            prefix="glue/",
            reason="Job code, the etl/odp zip and the wheels live under glue/ in the artifacts bucket.",
        )
        grant_objects(
            role,
            props.buckets["artifacts"],
            prefix=STREAMING_PREFIX,
            write=True,
            delete=True,  # Spark rewrites and cleans its checkpoint files
            reason="Each stream's checkpoint and bad records live under streaming/<stream>/ in the artifacts bucket.",
        )
        grant_table(role, "table_config", props.tracking.table("table_config"), write=False)
        grant_key(role, props.zone_keys["raw"], encrypt=True)
        grant_key(role, props.state_key, encrypt=True)
        catalog = f"arn:{stack.partition}:glue:{stack.region}:{stack.account}"
        role.add_to_policy(
            iam.PolicyStatement(
                sid="GlueCatalogSync",
                actions=[
                    "glue:GetDatabase",
                    "glue:GetTable",
                    "glue:GetTables",
                    "glue:CreateTable",
                    "glue:UpdateTable",
                    "glue:GetPartitions",
                    "glue:BatchCreatePartition",
                    "glue:BatchUpdatePartition",
                    "glue:BatchDeletePartition",
                    "glue:GetConnection",
                    "glue:GetSecurityConfiguration",
                ],
                resources=[
                    f"{catalog}:catalog",
                    f"{catalog}:database/*",
                    f"{catalog}:table/*",
                    *(f"{catalog}:connection/{name}" for name in props.network.glue_connection_names),
                ],
            )
        )
        role.add_to_policy(
            iam.PolicyStatement(
                sid="GlueLogs",
                actions=["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents", "logs:AssociateKmsKey"],
                resources=[f"arn:{stack.partition}:logs:{stack.region}:{stack.account}:log-group:/aws-glue/*"],
            )
        )
        role.add_to_policy(
            iam.PolicyStatement(
                sid="Metrics",
                actions=["cloudwatch:PutMetricData"],
                resources=["*"],
                conditions={"StringEquals": {"cloudwatch:namespace": [GLUE_NAMESPACE, STREAMING_NAMESPACE]}},
            )
        )
        role.add_to_policy(
            iam.PolicyStatement(
                sid="GlueVpcNetworkInterfaces",
                actions=list(GLUE_VPC_ACTIONS),
                resources=["*"],
            )
        )
        policy = role.node.find_child("DefaultPolicy")
        acknowledge_many(policy, _ROLE_FINDINGS, region=stack.region, account=stack.account)
        return role

    def _job(
        self,
        props: StreamingProps,
        name: str,
        stream: Stream,
        kinesis_stream: kinesis.Stream,
        tables: list[TableConfig],
    ) -> glue.CfnJob:
        bucket = props.buckets["artifacts"].bucket_name
        contract = StreamingJobArgs(
            environment=props.environment,
            stream=name,
            stream_arn=kinesis_stream.stream_arn,
            table_ids=tuple(table.table_id for table in tables),
            raw_root=f"s3://{props.buckets['raw'].bucket_name}",
            error_root=f"s3://{bucket}/{STREAMING_PREFIX}errors",
            checkpoint_location=f"s3://{bucket}/{stream.checkpoint_key_prefix(name)}",
            table_config_table=props.tracking.names.table_config,
            window_seconds=stream.window_seconds,
            starting_position=stream.starting_position.value,
        )
        arguments = {**contract.to_arguments(), **glue_runtime_arguments(bucket, props.artifacts)}
        job = glue.CfnJob(
            self,
            f"Job-{name}",
            name=stream_job_name(props.environment, name),
            description=f"ODP stream {name}: DynamoDB changes on Kinesis -> Hudi every {stream.window_seconds} s",
            role=self.role.role_arn,
            command=glue.CfnJob.JobCommandProperty(
                name="gluestreaming",
                python_version="3",
                script_location=f"s3://{bucket}/{SCRIPT_PREFIX}{SCRIPT.name}",
            ),
            glue_version=GLUE_VERSION,
            worker_type=stream.worker_type.value,
            number_of_workers=stream.number_of_workers,
            max_retries=0,  # a failed stream alarms; the restarted run resumes from the checkpoint exactly once
            connections=glue.CfnJob.ConnectionsListProperty(connections=list(props.network.glue_connection_names)),
            security_configuration=props.glue_jobs.security_configuration_name,
            default_arguments=arguments,
        )
        job.node.add_dependency(props.glue_jobs.security_configuration, props.glue_jobs.code, self.script)
        return job

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
                        actions=["kinesis:PutRecord", "kinesis:PutRecords", "kinesis:DescribeStream"],
                        resources=[kinesis_stream.stream_arn],
                    ),
                ]
            ),
            install_latest_aws_sdk=False,
        )
        grant_key(resource, self.key, encrypt=True)
        singleton = stack.node.try_find_child(_CUSTOM_RESOURCE_SINGLETON)
        if singleton is not None:
            acknowledge_many(singleton, _CUSTOM_RESOURCE_FINDINGS)

    def _monitor(self, props: StreamingProps, name: str, stream: Stream, kinesis_stream: kinesis.Stream) -> None:
        action = actions.SnsAction(props.monitoring.topic)
        prefix = f"{resource_prefix(props.environment)}-stream-{name}"

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
            return cloudwatch.Metric(
                namespace=STREAMING_NAMESPACE,
                metric_name=metric_name,
                dimensions_map={STREAM_DIMENSION: name},
                statistic=statistic,
                period=PERIOD,
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
        rule = events.Rule(
            self,
            f"{name}-job-stopped",
            rule_name=f"{prefix}-job-stopped",
            description=f"The streaming job of {name} stopped (failed, timed out, errored or was stopped)",
            event_pattern=events.EventPattern(
                source=["aws.glue"],
                detail_type=["Glue Job State Change"],
                detail={
                    "jobName": [stream_job_name(props.environment, name)],
                    "state": ["FAILED", "TIMEOUT", "ERROR", "STOPPED"],
                },
            ),
        )
        rule.add_target(targets.SnsTopic(props.monitoring.topic))
        props.monitoring.dashboard.add_widgets(
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


_ROLE_FINDINGS = {
    "AwsSolutions-IAM5[Resource::*]": (
        "EC2 network-interface actions Glue needs to run in the VPC, and cloudwatch:PutMetricData (limited to the "
        f"{GLUE_NAMESPACE} and {STREAMING_NAMESPACE} namespaces by condition), support no resource-level permissions."
    ),
    "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:glue:{region}:{account}:database/*]": (
        "Hudi's catalog sync creates and updates tables in the databases of the streamed tables (config)."
    ),
    "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:glue:{region}:{account}:table/*]": (
        "Hudi's catalog sync creates and updates the streamed tables, which change with config."
    ),
    "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:{region}:{account}:log-group:/aws-glue/*]": (
        "Glue writes job logs to its own /aws-glue/* log groups (names fixed by the service)."
    ),
}
_CUSTOM_RESOURCE_SINGLETON = "AWS679f53fac002430cb0da5b7982bd2287"  # CDK's fixed id of AwsCustomResource's Lambda
_CUSTOM_RESOURCE_FINDINGS = {
    "AwsSolutions-L1": "CDK's AwsCustomResource singleton pins its own runtime; it runs only during deployment.",
    "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]": (
        "CDK's AwsCustomResource singleton uses the basic execution role for its logs."
    ),
}
