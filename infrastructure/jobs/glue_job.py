"""One Glue job construct family for every ODP job: the base the File Processor jobs (``glue_jobs.py``),
the streaming jobs (``streaming.py``) and the dataset job (``datasets.py``) are thin constructs on.

:class:`GlueJobFamily` owns what every Glue job of ODP needs and what used to drift between three copies:

- the **role**: the Glue catalog scoped per database (``database/<db>`` and ``table/<db>/*`` of each
  database the jobs sync into, plus ``default``), ``glue:GetSecurityConfiguration`` on ``*`` (the only
  resource it supports), the VPC connections, Glue's ``/aws-glue/*`` logs, ``cloudwatch:PutMetricData``
  conditioned on the ``Glue`` namespace and the family's own, the EC2 network-interface actions of a job in
  the VPC, ``glue/`` of the artifacts bucket (code, library, wheels, ``--TempDir``), and the family's keys;
- the **security configuration** ``odp-<env>-<purpose>``: S3 SSE-KMS with the family's data key, CloudWatch
  logs SSE-KMS and bookmarks CSE-KMS with the state key;
- the **code**: one BucketDeployment of the family's sources under its prefix of the artifacts bucket;
- the **runtime arguments** every job shares (Hudi, the catalog, the ``etl``/``odp`` zip, the offline wheels,
  ODP's jar of Hudi extensions (``--extra-jars``), metrics and observability metrics, continuous logs) on
  aws-cdk-lib's stable L2 jobs (``aws_glue.PySparkEtlJob`` / ``PySparkStreamingJob``), the VPC connections by
  ``Ref`` and the security configuration by ``Ref`` (so CloudFormation creates them first);
- an optional EventBridge **alert** per job when it stops (:meth:`GlueJobFamily.alert_when_stopped`).

A thin construct gives its :class:`GlueJobFamilyProps`, adds its own grants to ``role`` and calls
:meth:`GlueJobFamily.add_job` with a :class:`GlueJobSpec` (name, script, the ETL contract's arguments,
size). pydantic and PyYAML reach every job offline in the form AWS documents for Glue 5: a zip of wheels
(``odp_dependencies.gluewheels.zip``) named in ``--additional-python-modules`` with
``--python-modules-installer-option --no-index``.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from aws_cdk import DefaultStackSynthesizer, Duration, RemovalPolicy, Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_glue as glue
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_deployment as s3deploy
from aws_cdk import aws_sns as sns
from constructs import Construct, IDependable

from infrastructure.assets import GlueArtifacts
from infrastructure.foundation.network import Network
from infrastructure.foundation.observability import alert_on_event
from infrastructure.grants import grant_key, grant_objects
from infrastructure.jobs.job_role import grant_catalog_sync, grant_lake_formation_data_access, grant_metrics, job_role
from infrastructure.nag import acknowledge_many, logical_id
from odp.contracts.metrics import GLUE_NAMESPACE
from odp.naming import resource_prefix

GLUE_VERSION = "5.1"
# Where the File Processor family ships the etl/odp zip and the zip of wheels every job loads.
LIBRARY_PREFIX = "glue/file_processor/"
# What Hudi 1.0 needs from Spark on Glue (Glue adds the bundle itself with --datalake-formats hudi).
HUDI_SPARK_CONF = " --conf ".join(
    (
        "spark.serializer=org.apache.spark.serializer.KryoSerializer",
        "spark.sql.hive.convertMetastoreParquet=false",
        "spark.sql.extensions=org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
        "spark.sql.catalog.spark_catalog=org.apache.spark.sql.hudi.catalog.HoodieCatalog",
        "spark.kryo.registrator=org.apache.spark.HoodieSparkKryoRegistrar",
        # the tables of a batch run concurrently, each in its own FAIR pool (etl/file_processor/concurrency.py)
        "spark.scheduler.mode=FAIR",
    )
)
# What a Glue job needs to run in the VPC (elastic network interfaces); no resource-level permissions.
GLUE_VPC_ACTIONS = (
    "ec2:CreateNetworkInterface",
    "ec2:DeleteNetworkInterface",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeVpcEndpoints",
    "ec2:DescribeRouteTables",
    "ec2:DescribeSubnets",
    "ec2:DescribeSecurityGroups",
    "ec2:DescribeVpcAttribute",
    "ec2:CreateTags",
    "ec2:DeleteTags",
)
# The states after which a job no longer runs; a streaming job should never reach one.
STOPPED_STATES = ("FAILED", "TIMEOUT", "ERROR", "STOPPED")


def runtime_arguments(artifacts_bucket: str, artifacts: GlueArtifacts) -> dict[str, str]:
    """Glue's own switches every ODP job shares, beyond what the L2 job sets itself (``--job-language``,
    ``--extra-py-files``, ``--extra-jars``, ``--enable-metrics``, ``--enable-observability-metrics``, continuous
    logs)."""
    library = f"s3://{artifacts_bucket}/{LIBRARY_PREFIX}"
    return {
        "--datalake-formats": "hudi",
        "--enable-glue-datacatalog": "true",
        "--conf": HUDI_SPARK_CONF,
        # The zip of wheels (wheels/requirements.txt + wheels/*.whl): one offline pip install.
        "--additional-python-modules": library + artifacts.wheels_zip,
        "--python-modules-installer-option": "--no-index",
        "--job-bookmark-option": "job-bookmark-disable",
        "--TempDir": f"s3://{artifacts_bucket}/glue/temp/",
    }


class ArtifactCode(glue.Code):
    """A file already in the artifacts bucket (a BucketDeployment puts it there). Unlike ``Code.from_bucket``,
    binding grants nothing: the family's role reads ``glue/`` with explicit actions (``grants.py``)."""

    def __init__(self, bucket: s3.IBucket, key: str) -> None:
        super().__init__()
        self._bucket = bucket
        self._key = key

    def bind(self, scope: Construct, grantable: iam.IGrantable) -> glue.CodeConfig:
        return glue.CodeConfig(s3_location=s3.Location(bucket_name=self._bucket.bucket_name, object_key=self._key))


class GlueCommand(enum.Enum):
    """A Glue job's command: a batch ETL job, or a streaming job that runs until stopped."""

    ETL = "glueetl"
    STREAMING = "gluestreaming"


@dataclass(frozen=True)
class BucketKeys:
    """S3 encryption left to each bucket's default key (the security configuration says ``DISABLED``).

    Only for a job that writes buckets with different keys: a Glue security configuration holds one S3 key,
    which would override the second bucket's default key. ``reason`` is recorded in the code and README."""

    reason: str


@dataclass(frozen=True)
class GlueStage:
    """What every job family takes from the stage.

    Attributes:
        environment: names everything ``odp-<env>-...``.
        network: the VPC connections every job lists (Glue moves to the second when the first's AZ fails).
        buckets: Storage's buckets by purpose; ``artifacts`` holds the code, the library and ``--TempDir``.
        zone_keys: Storage's zone keys.
        state_key: CloudWatch logs (SSE-KMS) and job bookmarks (CSE-KMS).
        artifacts: the library (``etl``/``odp`` zip) and the zip of wheels, both under ``LIBRARY_PREFIX``.
        database_prefix: environments.yaml's ``database_prefix``: the roles' catalog grants name ``<prefix>*``
            instead of each database (infrastructure/jobs/job_role.py ``catalog_scope``).
    """

    environment: str
    network: Network
    buckets: Mapping[str, s3.IBucket]
    zone_keys: Mapping[str, kms.IKey]
    state_key: kms.IKey
    artifacts: GlueArtifacts
    database_prefix: str | None = None

    @property
    def artifacts_bucket(self) -> s3.IBucket:
        return self.buckets["artifacts"]


@dataclass(frozen=True)
class GlueJobFamilyProps:
    """What a family of Glue jobs shares.

    Attributes:
        stage: what the stage gives every family (:class:`GlueStage`).
        purpose: the family's short name (``file-processor``, ``streaming``, ``datasets``): the security
            configuration is ``odp-<env>-<purpose>``.
        code_prefix: where this family's code is deployed in the artifacts bucket.
        code_sources: what the family deploys there.
        data_key: the SSE-KMS key of every object the jobs write, or :class:`BucketKeys` with the reason.
        databases: the catalog databases the jobs sync into (each named in the role; ``default`` added).
        metric_namespaces: CloudWatch namespaces besides ``Glue`` the jobs publish to (default: none).
        prune_code: whether the deployment deletes files under ``code_prefix`` it did not ship (default: yes).
        requires: deployments the jobs need beyond their own code (the library, for the families other
            than the File Processor's, which ships it). Default: none.
    """

    stage: GlueStage
    purpose: str
    code_prefix: str
    code_sources: Sequence[s3deploy.ISource]
    data_key: kms.IKey | BucketKeys
    databases: Sequence[str]
    metric_namespaces: Sequence[str] = ()
    prune_code: bool = True
    requires: Sequence[IDependable] = field(default_factory=tuple)


@dataclass(frozen=True)
class GlueJobSpec:
    """One job of a family.

    Attributes:
        construct_id: the job's id under the family.
        name: the job's physical name.
        script: the script's file name under the family's ``code_prefix``.
        arguments: the job's ETL contract (``odp/contracts/``), merged with :func:`runtime_arguments`.
        command: ``glueetl`` (default) or ``gluestreaming``.
        worker_type: a Glue worker type as config spells it (default ``G.1X``).
        number_of_workers: default 2.
        timeout_minutes: ETL only; default None (Glue's own 2,880). A streaming job runs until stopped.
        max_concurrent_runs: default 1.
    """

    construct_id: str
    name: str
    description: str
    script: str
    arguments: Mapping[str, str]
    command: GlueCommand = GlueCommand.ETL
    worker_type: str = "G.1X"
    number_of_workers: int = 2
    timeout_minutes: int | None = None
    max_concurrent_runs: int = 1


class GlueJobFamily(Construct):
    """The base of every ODP Glue job: role, security configuration, code, runtime arguments, connections.

    Attributes:
        role: the jobs' role (thin constructs add their own grants to it).
        security_configuration: ``odp-<env>-<purpose>``.
        code: the BucketDeployment of the family's code.
        jobs: job name -> L2 job.
    """

    def __init__(self, scope: Construct, construct_id: str, props: GlueJobFamilyProps) -> None:
        super().__init__(scope, construct_id)
        self.props = props
        stack = Stack.of(self)
        self.jobs: dict[str, glue.JobBase] = {}
        self.code = s3deploy.BucketDeployment(
            self,
            "Code",
            sources=list(props.code_sources),
            destination_bucket=props.stage.artifacts_bucket,
            destination_key_prefix=props.code_prefix,
            prune=props.prune_code,
            retain_on_delete=False,
        )
        acknowledge_bucket_deployments(stack, props.stage.artifacts_bucket)
        self.role = self._role(stack)
        self.security_configuration = glue.SecurityConfiguration(
            self,
            "SecurityConfiguration",
            security_configuration_name=f"{resource_prefix(props.stage.environment)}-{props.purpose}",
            s3_encryption=None if isinstance(props.data_key, BucketKeys) else glue.S3Encryption.kms(props.data_key),
            cloud_watch_encryption=glue.CloudWatchEncryption.kms(props.stage.state_key),
            job_bookmarks_encryption=glue.JobBookmarksEncryption.client_side_kms(props.stage.state_key),
            # configuration, not data: a retained named configuration would block the next deployment
            removal_policy=RemovalPolicy.DESTROY,
        )
        if isinstance(props.data_key, BucketKeys):
            cfn = self.security_configuration.node.default_child
            cfn.add_property_override("EncryptionConfiguration.S3Encryptions", [{"S3EncryptionMode": "DISABLED"}])
        self.connections = [
            glue.Connection.from_connection_name(self, f"Connection{index}", connection.ref)
            for index, connection in enumerate(props.stage.network.glue_connections)
        ]

    def _role(self, stack: Stack) -> iam.Role:
        props, stage_ = self.props, self.props.stage
        description = f"ODP {stage_.environment} {props.purpose} Glue jobs"
        role = job_role(self, "Role", iam.ServicePrincipal("glue.amazonaws.com"), description=description)
        grant_objects(
            role,
            stage_.artifacts_bucket,
            prefix="glue/",
            write=True,
            reason="Job code, the etl/odp zip, the wheels and --TempDir live under glue/ in the artifacts bucket.",
        )
        grant_key(role, stage_.state_key, encrypt=True)
        if not isinstance(props.data_key, BucketKeys):
            grant_key(role, props.data_key, encrypt=True)
        grant_catalog_sync(
            role,
            props.databases,
            prefix=stage_.database_prefix,
            connection_names=stage_.network.glue_connection_names,
        )
        role.add_to_policy(
            iam.PolicyStatement(
                # GetSecurityConfiguration supports no resource-level permission: on any ARN it is never allowed.
                sid="GlueSecurityConfiguration",
                actions=["glue:GetSecurityConfiguration"],
                resources=["*"],
            )
        )
        role.add_to_policy(
            iam.PolicyStatement(
                sid="GlueLogs",
                actions=["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents", "logs:AssociateKmsKey"],
                resources=[f"arn:{stack.partition}:logs:{stack.region}:{stack.account}:log-group:/aws-glue/*"],
            )
        )
        grant_metrics(role, self.metric_namespaces, sid="GlueMetrics")
        role.add_to_policy(
            iam.PolicyStatement(sid="GlueVpcNetworkInterfaces", actions=list(GLUE_VPC_ACTIONS), resources=["*"])
        )
        grant_lake_formation_data_access(role)
        acknowledge_many(  # on the role: a statement may sit in one of its overflow policies (policy_limits.py)
            role,
            {
                "AwsSolutions-IAM5[Resource::*]": (
                    "EC2 network-interface actions Glue needs to run in the VPC, glue:GetSecurityConfiguration, "
                    "lakeformation:GetDataAccess and "
                    f"cloudwatch:PutMetricData (limited to the {', '.join(self.metric_namespaces)} namespaces by "
                    "condition) support no resource-level permissions."
                ),
                "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:{region}:{account}:log-group:/aws-glue/*]": (
                    "Glue writes job logs to its own /aws-glue/* log groups (names fixed by the service)."
                ),
            },
            region=stack.region,
            account=stack.account,
        )
        return role

    @property
    def metric_namespaces(self) -> list[str]:
        """``Glue`` (the job's own metrics) and the family's namespaces: the PutMetricData condition."""
        return [GLUE_NAMESPACE, *(n for n in self.props.metric_namespaces if n != GLUE_NAMESPACE)]

    def arn_of(self, job_name: str) -> str:
        """The ARN of a job of this family, by its physical name (known before the job exists)."""
        stack = Stack.of(self)
        return f"arn:{stack.partition}:glue:{stack.region}:{stack.account}:job/{job_name}"

    def add_job(self, spec: GlueJobSpec) -> glue.JobBase:
        """One job of the family: the L2 job with the shared role, security configuration, connections,
        library and runtime arguments, and the spec's script, contract arguments and size."""
        props = self.props
        bucket = props.stage.artifacts_bucket
        common = {
            "role": self.role,
            "script": ArtifactCode(bucket, f"{props.code_prefix}{spec.script}"),
            "job_name": spec.name,
            "description": spec.description,
            "glue_version": glue.GlueVersion.V5_1,
            "worker_configuration": glue.WorkerConfiguration(
                worker_type=glue.WorkerType[spec.worker_type.replace(".", "_")],
                number_of_workers=spec.number_of_workers,
            ),
            "max_concurrent_runs": spec.max_concurrent_runs,
            "max_retries": 0,  # the caller retries (the state machine) or alarms (streaming): never a blind rerun
            "connections": self.connections,
            "security_configuration": self.security_configuration,
            "extra_python_files": [ArtifactCode(bucket, f"{LIBRARY_PREFIX}{props.stage.artifacts.library}")],
            # --extra-jars: ODP's Hudi extensions on the driver's and the executors' class path (the catalog sync's
            # partition extractor for URL-encoded partition paths, etl/hudi/partition_paths.py; the MERGE_ON_READ
            # compaction strategy, etl/hudi/options.py)
            "extra_jars": [ArtifactCode(bucket, f"{LIBRARY_PREFIX}{props.stage.artifacts.extensions_jar}")],
            "enable_metrics": True,
            "enable_observability_metrics": True,
            "default_arguments": {
                **spec.arguments,
                **runtime_arguments(bucket.bucket_name, props.stage.artifacts),
            },
        }
        if spec.command is GlueCommand.STREAMING:
            job: glue.JobBase = glue.PySparkStreamingJob(self, spec.construct_id, **common)
        else:
            timeout = None if spec.timeout_minutes is None else Duration.minutes(spec.timeout_minutes)
            job = glue.PySparkEtlJob(self, spec.construct_id, timeout=timeout, **common)
        job.node.add_dependency(self.code, *props.requires)
        self.jobs[spec.name] = job
        return job

    def alert_when_stopped(self, job_name: str, *, rule_name: str, topic: sns.ITopic, description: str) -> None:
        """An EventBridge rule sending the job's "Glue Job State Change" to ``topic`` when it stops."""
        alert_on_event(
            self,
            f"{job_name}-stopped",
            rule_name=rule_name,
            description=description,
            pattern=events.EventPattern(
                source=["aws.glue"],
                detail_type=["Glue Job State Change"],
                detail={"jobName": [job_name], "state": list(STOPPED_STATES)},
            ),
            topic=topic,
        )


def acknowledge_bucket_deployments(stack: Stack, artifacts_bucket: s3.IBucket) -> None:
    """The findings of CDK's BucketDeployment singleton (shared by every job family's code), with reasons."""
    for child in stack.node.children:
        if child.node.id.startswith("Custom::CDKBucketDeployment"):
            acknowledge_many(
                child,
                _DEPLOYMENT_FINDINGS,
                region=stack.region,
                account=stack.account,
                artifacts=logical_id(artifacts_bucket),
                qualifier=DefaultStackSynthesizer.DEFAULT_QUALIFIER,
            )


_DEPLOYMENT_REASON = (
    "CDK's BucketDeployment singleton copies the job code from the CDK asset bucket into glue/ of the artifacts "
    "bucket; CDK generates its role and grants."
)
_DEPLOYMENT_FINDINGS = {
    "AwsSolutions-L1": "CDK's BucketDeployment singleton pins its own runtime; it runs only during deployment.",
    "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]": (
        "CDK's BucketDeployment singleton uses the basic execution role for its logs."
    ),
    **{
        f"AwsSolutions-IAM5[Action::{action}]": _DEPLOYMENT_REASON
        for action in ("s3:Abort*", "s3:DeleteObject*", "s3:GetBucket*", "s3:GetObject*", "s3:List*")
    },
    "AwsSolutions-IAM5[Action::kms:GenerateDataKey*]": _DEPLOYMENT_REASON,
    "AwsSolutions-IAM5[Action::kms:ReEncrypt*]": _DEPLOYMENT_REASON,
    "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::cdk-{qualifier}-assets-{account}-{region}/*]": (
        "Reads the uploaded job-code asset from the CDK bootstrap asset bucket."
    ),
    "AwsSolutions-IAM5[Resource::<{artifacts}.Arn>/*]": "Writes (and prunes) the job code in the artifacts bucket.",
}
