"""The EMR Serverless application the cadences with ``engine: emr_serverless`` run their File Processor on, its
execution role, its logs and its failure alert. Created only when a cadence or a dataset runs there
(``odp.contracts.job_kinds.engines_in_use``).

- **application** ``odp-<env>-spark``: release :data:`RELEASE_LABEL` (Spark 3.5 and Hudi 1.0.2, the version
  ODP pins), pre-initialized capacity, a maximum, auto start and auto stop when idle, and the same VPC subnets and
  security group as the Glue jobs (so the same gateway and interface endpoints serve it; the subnets have no
  route to the internet). Logs go to CloudWatch ``/aws/emr-serverless/odp-<env>`` encrypted with the state key.
- **execution role** (trusted by ``emr-serverless.amazonaws.com`` of this account), from the same pieces as
  the Glue job roles (:mod:`infrastructure.jobs.job_role`): the File Processor's lake data, the raw key, the catalog
  sync per database, ``lakeformation:GetDataAccess`` (as the Glue job roles), ``cloudwatch:PutMetricData`` into
  ``ODP`` only, the code and library under ``emr/`` and ``glue/file_processor/`` of the artifacts bucket, its
  log group, and ``emr-serverless:GetJobRun`` on its own job runs (lease takeover, odp/tracker/job_runs.py).
- **entry point** ``s3://<artifacts>/emr/emr_serverless.py`` (``etl/jobs/emr_serverless.py``, deployed here);
  ``etl``/``odp`` come as ``--py-files`` (the Glue jobs' zip); Hudi is the release's own bundle
  (:data:`HUDI_BUNDLE`), with ODP's extensions jar from the image beside it (:data:`CLASS_PATH`), on the driver's and
  executors' class path, never ``spark.jars``.
- **image**: ODP's own (:mod:`infrastructure.jobs.engines.emr_image`: the release's image with Python 3.11 and the
  Glue jobs' wheels, in ODP's ECR repository, pulled by this application only), unless ``image_uri`` names a team's own;
  PySpark runs on :data:`PYTHON` on the driver and the executors.
- **stop before an update** (:mod:`infrastructure.jobs.engines.emr_application_stop`): a custom resource the
  application depends on stops it, and waits until it is stopped, whenever a setting EMR Serverless changes only on a
  stopped application changes (the image above all: it has pre-initialized capacity).
- **alert**: an EventBridge rule sends "EMR Serverless Job Run State Change" FAILED of this application to the
  alerts topic.

The application is a job engine (infrastructure/jobs/engines/base.py): a state machine of a job kind on EMR Serverless
fills its definition's engine fields from :meth:`EmrServerless.run_values` and gets its permissions from
:meth:`EmrServerless.grant_run`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aws_cdk import RemovalPolicy, Stack
from aws_cdk import aws_emrserverless as emr
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3_deployment as s3deploy
from aws_cdk import aws_sns as sns
from constructs import Construct

from infrastructure.foundation.observability import alert_on_event, encrypted_log_group
from infrastructure.grants import grant_key, grant_objects
from infrastructure.ingest.tracking import Tracking
from infrastructure.jobs.engines.emr_application_stop import EmrApplicationStop, EmrApplicationStopProps, StopTriggers
from infrastructure.jobs.engines.emr_image import EXTENSIONS_JAR_IN_IMAGE, EmrImage, EmrImageProps
from infrastructure.jobs.glue_job import (
    HUDI_SPARK_CONF,
    LIBRARY_PREFIX,
    GlueStage,
    acknowledge_bucket_deployments,
)
from infrastructure.jobs.job_role import (
    grant_catalog_sync,
    grant_file_processor_data,
    grant_lake_formation_data_access,
    grant_metrics,
    job_role,
)
from infrastructure.nag import acknowledge, acknowledge_many
from odp.config.models import EngineName
from odp.contracts.job_kinds import JobKind
from odp.contracts.metrics import NAMESPACE
from odp.contracts.spark import spark_submit_parameters
from odp.contracts.state_machines import EmrServerlessRun, entry_point_arguments
from odp.naming import EMR_APPLICATION, EMR_JOB_RUN_FAILED_RULE, environment_resource_name, resource_prefix

# emr-7.12.0: Spark 3.5 and Hudi 1.0.2-amzn-1 (the EMR release guide's Hudi release history); emr-7.11.0 was the
# first 7.x with Hudi 1.0.2, emr-7.10.0 and earlier ship Hudi 0.15 or older, which cannot read ODP's tables.
RELEASE_LABEL = "emr-7.12.0"
# The release's own Hudi bundle, on every node of the application.
HUDI_BUNDLE = "/usr/lib/hudi/hudi-spark-bundle.jar"
# The driver's and executors' class path: the bundle, then ODP's jar of Hudi extensions (jvm/), which ODP's image
# holds (emr_image.EXTENSIONS_JAR_IN_IMAGE; a team's own image must hold it there too). What Glue gets through
# --extra-jars; tests/infra/test_class_paths.py checks every class ODP's Hudi options name on each engine.
CLASS_PATH = (HUDI_BUNDLE, EXTENSIONS_JAR_IN_IMAGE)
ARCHITECTURE = "X86_64"  # ODP's image is built for linux/amd64
ENTRY_POINT_SOURCE = Path(__file__).resolve().parents[3] / "etl" / "jobs" / "emr_serverless.py"
CODE_PREFIX = "emr/"
ENTRY_POINT = "emr_serverless.py"
FAILED_STATES = ("FAILED",)
SERVICE = "emr-serverless.amazonaws.com"
# ODP's code needs Python 3.11 (Glue 5's); EMR 7.x's python3 is 3.9. ODP's image installs it (an own image must too).
PYTHON = "/usr/bin/python3.11"
# What Step Functions' .sync integration creates to learn that a job run ended.
SYNC_RULE = "StepFunctionsGetEventsForEMRServerlessJobRule"


def spark_parameters(library_uri: str) -> str:
    """Pure: StartJobRun's ``sparkSubmitParameters``: ``etl``/``odp`` as ``--py-files``, Hudi's session settings,
    :data:`CLASS_PATH` (the release's Hudi bundle, then ODP's extensions jar in ODP's image) on the driver's and
    executors' class path, the Glue Data Catalog as Hive metastore,
    PySpark on :data:`PYTHON` (driver and executors), and the Spark settings the Glue jobs share
    (``HUDI_SPARK_CONF``: FAIR pools, convertMetastoreParquet)."""
    shared = dict(item.split("=", 1) for item in HUDI_SPARK_CONF.split(" --conf "))
    conf = {
        **shared,
        "spark.hadoop.hive.metastore.client.factory.class": (
            "com.amazonaws.glue.catalog.metastore.AWSGlueDataCatalogHiveClientFactory"
        ),
        "spark.emr-serverless.driverEnv.PYSPARK_PYTHON": PYTHON,
        "spark.executorEnv.PYSPARK_PYTHON": PYTHON,
    }
    return " ".join(["--py-files", library_uri, *spark_submit_parameters(CLASS_PATH, conf)])


@dataclass(frozen=True)
class WorkerSize:
    """One EMR Serverless worker: ``cpu`` ("4 vCPU"), ``memory`` ("16 GB"), ``disk`` ("20 GB")."""

    cpu: str = "4 vCPU"
    memory: str = "16 GB"
    disk: str = "20 GB"


@dataclass(frozen=True)
class EmrServerlessProps:
    """The application of one environment.

    Attributes:
        stage: what the stage gives every job (network, buckets, keys, the library).
        tracking: the tracker tables the File Processor writes.
        databases: the raw databases of the configured tables (the catalog scope).
        alerts_topic: where a failed job run is published.
        initial_drivers / initial_executors: pre-initialized workers while the application is started
            (default 1 and 2): a job starts on them without waiting for capacity.
        worker: the size of each pre-initialized worker.
        maximum_cpu / maximum_memory / maximum_disk: the application's ceiling over all its runs.
        idle_timeout_minutes: the application stops after this long without a job (default 15).
        image_uri: a team's own image (ECR, built on the release's image, with Python 3.11 at :data:`PYTHON`,
            ODP's pinned packages and ODP's extensions jar at ``EXTENSIONS_JAR_IN_IMAGE``; its repository policy must
            let this application pull); None (default): ODP's
            image (:mod:`infrastructure.jobs.engines.emr_image`), built by ``cdk deploy``.
        image_key: the key of ODP's image repository (None: the stage's state key).
        removal_policy / log_retention: of the log group.
    """

    stage: GlueStage
    tracking: Tracking
    databases: Sequence[str]
    alerts_topic: sns.ITopic
    initial_drivers: int = 1
    initial_executors: int = 2
    worker: WorkerSize = WorkerSize()
    maximum_cpu: str = "64 vCPU"
    maximum_memory: str = "256 GB"
    maximum_disk: str = "1000 GB"
    idle_timeout_minutes: int = 15
    image_uri: str | None = None
    image_key: kms.IKey | None = None
    removal_policy: RemovalPolicy = RemovalPolicy.RETAIN
    log_retention: logs.RetentionDays = logs.RetentionDays.ONE_YEAR


class EmrServerless(Construct):
    """The application, its execution role (``role``), its log group and its failure alert.

    Attributes:
        application: the CfnApplication.
        role: the execution role every job run uses.
        log_group: ``/aws/emr-serverless/odp-<env>``.
        code: the BucketDeployment of the entry point.
        image: ODP's image (None when ``image_uri`` names a team's own).
        stop_before_update: the step that stops the application before CloudFormation updates it.
    """

    def __init__(self, scope: Construct, construct_id: str, props: EmrServerlessProps) -> None:
        super().__init__(scope, construct_id)
        self.props = props
        stage = props.stage
        stack = Stack.of(self)
        prefix = resource_prefix(stage.environment)
        self.log_group = encrypted_log_group(
            self,
            f"/aws/emr-serverless/{prefix}",
            key=stage.state_key,
            retention=props.log_retention,
            removal_policy=props.removal_policy,
        )
        self.code = s3deploy.BucketDeployment(
            self,
            "Code",
            sources=[s3deploy.Source.data(ENTRY_POINT, ENTRY_POINT_SOURCE.read_text(encoding="utf-8"))],
            destination_bucket=stage.artifacts_bucket,
            destination_key_prefix=CODE_PREFIX,
            retain_on_delete=False,
        )
        acknowledge_bucket_deployments(stack, stage.artifacts_bucket)
        self.image = (
            None
            if props.image_uri is not None
            else EmrImage(
                self,
                "Image",
                EmrImageProps(
                    environment=stage.environment,
                    artifacts=stage.artifacts,
                    release_label=RELEASE_LABEL,
                    key=props.image_key or stage.state_key,
                    removal_policy=props.removal_policy,
                ),
            )
        )
        image_uri = props.image_uri if self.image is None else self.image.image_uri
        worker = emr.CfnApplication.WorkerConfigurationProperty(
            cpu=props.worker.cpu, memory=props.worker.memory, disk=props.worker.disk
        )
        initial = {"Driver": props.initial_drivers, "Executor": props.initial_executors}
        subnet_ids = [subnet.subnet_id for subnet in stage.network.vpc.isolated_subnets]
        security_group_ids = [stage.network.security_group.security_group_id]
        self.application = emr.CfnApplication(
            self,
            "Application",
            name=environment_resource_name(stage.environment, EMR_APPLICATION),
            release_label=RELEASE_LABEL,
            type="Spark",
            architecture=ARCHITECTURE,
            initial_capacity=[
                emr.CfnApplication.InitialCapacityConfigKeyValuePairProperty(
                    key=kind,
                    value=emr.CfnApplication.InitialCapacityConfigProperty(
                        worker_count=count, worker_configuration=worker
                    ),
                )
                for kind, count in initial.items()
            ],
            maximum_capacity=emr.CfnApplication.MaximumAllowedResourcesProperty(
                cpu=props.maximum_cpu, memory=props.maximum_memory, disk=props.maximum_disk
            ),
            auto_start_configuration=emr.CfnApplication.AutoStartConfigurationProperty(enabled=True),
            auto_stop_configuration=emr.CfnApplication.AutoStopConfigurationProperty(
                enabled=True, idle_timeout_minutes=props.idle_timeout_minutes
            ),
            network_configuration=emr.CfnApplication.NetworkConfigurationProperty(
                subnet_ids=subnet_ids, security_group_ids=security_group_ids
            ),
            monitoring_configuration=emr.CfnApplication.MonitoringConfigurationProperty(
                cloud_watch_logging_configuration=emr.CfnApplication.CloudWatchLoggingConfigurationProperty(
                    enabled=True,
                    log_group_name=self.log_group.log_group_name,
                    encryption_key_arn=stage.state_key.key_arn,
                )
            ),
            image_configuration=emr.CfnApplication.ImageConfigurationInputProperty(image_uri=image_uri),
        )
        # Stopped first whenever a setting EMR Serverless changes only on a stopped application changes (the image
        # with every new wheel, jar or Dockerfile): infrastructure/jobs/engines/README.md.
        self.stop_before_update = EmrApplicationStop(
            self,
            "StopBeforeUpdate",
            EmrApplicationStopProps(
                environment=stage.environment,
                key=stage.state_key,
                application=self.application,
                triggers=StopTriggers(
                    release_label=RELEASE_LABEL,
                    image_uri=image_uri,
                    architecture=ARCHITECTURE,
                    initial_capacity=initial,
                    worker=[props.worker.cpu, props.worker.memory, props.worker.disk],
                    idle_timeout_minutes=props.idle_timeout_minutes,
                    subnet_ids=subnet_ids,
                    security_group_ids=security_group_ids,
                    log_group_name=self.log_group.log_group_name,
                ),
                removal_policy=props.removal_policy,
                log_retention=props.log_retention,
            ),
        )
        if self.image is not None:
            self.application.node.add_dependency(self.image.copy)  # the image is in ODP's repository first
            self.image.allow_pulls(self.application.attr_arn)
        self.role = self._role(stack)
        self._alert_on_failed_runs(stage.environment)

    @property
    def application_arn(self) -> str:
        return self.application.attr_arn

    @property
    def job_runs_arn(self) -> str:
        return f"{self.application.attr_arn}/jobruns/*"

    def _role(self, stack: Stack) -> iam.Role:
        props, stage = self.props, self.props.stage
        service = iam.ServicePrincipal(SERVICE, conditions={"StringEquals": {"aws:SourceAccount": stack.account}})
        role = job_role(self, "ExecutionRole", service, description=f"ODP {stage.environment} EMR Serverless job runs")
        grant_file_processor_data(role, stage.buckets, stage.zone_keys, props.tracking)
        grant_key(role, stage.zone_keys["raw"], encrypt=True)
        grant_key(role, stage.state_key, encrypt=True)  # the log group's key
        grant_objects(
            role,
            stage.artifacts_bucket,
            prefix=CODE_PREFIX,
            reason="The EMR Serverless entry point lives under emr/ in the artifacts bucket.",
        )
        grant_objects(
            role,
            stage.artifacts_bucket,
            prefix=LIBRARY_PREFIX,
            reason="The etl/odp zip (--py-files) lives under glue/file_processor/ in the artifacts bucket.",
        )
        grant_catalog_sync(role, props.databases, prefix=stage.database_prefix)
        grant_metrics(role, [NAMESPACE], sid="OdpMetrics")
        grant_lake_formation_data_access(role)
        role.add_to_policy(
            iam.PolicyStatement(
                sid="JobRunLogs",
                actions=["logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"],
                resources=[self.log_group.log_group_arn],
            )
        )
        role.add_to_policy(
            iam.PolicyStatement(
                sid="FindLogGroup",
                actions=["logs:DescribeLogGroups"],
                resources=[f"arn:{stack.partition}:logs:{stack.region}:{stack.account}:log-group:*"],
            )
        )
        self.grant_read_job_runs(role)
        acknowledge_many(  # on the role: its statements may move to overflow policies (policy_limits.py)
            role,
            {
                "AwsSolutions-IAM5[Resource::*]": (
                    "cloudwatch:PutMetricData (a condition limits it to the "
                    f"{NAMESPACE} namespace) and lakeformation:GetDataAccess support no resource-level permission."
                ),
                "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:{region}:{account}:log-group:*]": (
                    "EMR Serverless looks its log group up with logs:DescribeLogGroups, which names no log group."
                ),
            },
            region=stack.region,
            account=stack.account,
        )
        return role

    def _logical_id(self) -> str:
        return Stack.of(self).get_logical_id(self.application)

    def _alert_on_failed_runs(self, environment: str) -> None:
        alert_on_event(
            self,
            "JobRunFailed",
            rule_name=environment_resource_name(environment, EMR_JOB_RUN_FAILED_RULE),
            description="A job run of the ODP EMR Serverless application failed",
            pattern=events.EventPattern(
                source=["aws.emr-serverless"],
                detail_type=["EMR Serverless Job Run State Change"],
                detail={"applicationId": [self.application.attr_application_id], "state": list(FAILED_STATES)},
            ),
            topic=self.props.alerts_topic,
        )

    def grant_read_job_runs(self, grantee: iam.IGrantable) -> None:
        """emr-serverless:GetJobRun on this application's runs: whether a lease's holder has ended."""
        principal = grantee.grant_principal
        principal.add_to_principal_policy(
            iam.PolicyStatement(
                sid="LeaseHolderEmrJobRuns", actions=["emr-serverless:GetJobRun"], resources=[self.job_runs_arn]
            )
        )
        acknowledge(
            principal.node.find_child("DefaultPolicy"),
            f"AwsSolutions-IAM5[Resource::<{self._logical_id()}.Arn>/jobruns/*]",
            "A lease names the job run holding it; any run of this application may hold one.",
        )

    engine = EngineName.EMR_SERVERLESS

    def run_values(
        self, kind: JobKind, *, job_name: str, static_arguments: Mapping[str, str], timeout_minutes: int
    ) -> dict[str, Any]:
        """A run of ``kind`` on this application (the engine fields of its definition): the application, the
        execution role, the entry point with the kind's static contract arguments (what its Glue job holds as
        DefaultArguments) and its per-run ones, the spark-submit parameters (the library as ``--py-files``)."""
        bucket = self.props.stage.artifacts_bucket.bucket_name
        library = f"s3://{bucket}/{LIBRARY_PREFIX}{self.props.stage.artifacts.library}"
        return EmrServerlessRun(
            application_id=self.application.attr_application_id,
            execution_role_arn=self.role.role_arn,
            entry_point=f"s3://{bucket}/{CODE_PREFIX}{ENTRY_POINT}",
            entry_point_arguments=entry_point_arguments(kind, static_arguments),
            spark_submit_parameters=spark_parameters(library),
            execution_timeout_minutes=timeout_minutes,
        ).fields()

    def grant_run(self, role: iam.IRole, *, job_arn: str, sid: str) -> None:
        """What a state machine's role needs for emr-serverless:startJobRun.sync (:meth:`grant_run_jobs`), with the
        reason of its one wildcard."""
        self.grant_run_jobs(role)
        acknowledge(
            role.node.find_child("DefaultPolicy"),
            f"AwsSolutions-IAM5[Resource::<{self._logical_id()}.Arn>/jobruns/*]",
            "emr-serverless:startJobRun.sync polls and cancels the run it started; its id is known only then.",
        )

    def grant_start_job_runs(self, role: iam.IRole) -> None:
        """Start runs of this application as its execution role (passed to EMR Serverless only): the state
        machines' tasks and the post-deploy canary (odp/operations/canary.py)."""
        role.add_to_principal_policy(
            iam.PolicyStatement(
                sid="RunEmrServerlessJob",
                actions=["emr-serverless:StartJobRun"],
                resources=[self.application_arn],
            )
        )
        role.add_to_principal_policy(
            iam.PolicyStatement(
                sid="PassEmrExecutionRole",
                actions=["iam:PassRole"],
                resources=[self.role.role_arn],
                conditions={"StringEquals": {"iam:PassedToService": SERVICE}},
            )
        )

    def grant_run_jobs(self, role: iam.IRole) -> None:
        """What a state machine needs for emr-serverless:startJobRun.sync: start, poll and cancel runs of this
        application, pass the execution role (to EMR Serverless only), and the .sync integration's own rule."""
        stack = Stack.of(self)
        self.grant_start_job_runs(role)
        role.add_to_principal_policy(
            iam.PolicyStatement(
                sid="WatchEmrServerlessJob",
                actions=["emr-serverless:GetJobRun", "emr-serverless:CancelJobRun"],
                resources=[self.job_runs_arn],
            )
        )
        role.add_to_principal_policy(
            iam.PolicyStatement(
                sid="EmrServerlessSyncRule",
                actions=["events:PutTargets", "events:PutRule", "events:DescribeRule"],
                resources=[f"arn:{stack.partition}:events:{stack.region}:{stack.account}:rule/{SYNC_RULE}"],
            )
        )
