"""Glue: the File Processor job, one per cadence (worker type and count differ), its role, its
security configuration, and the job code shipped to the artifacts bucket.

pydantic and PyYAML reach the job offline in the form AWS documents for Glue 5: a zip of wheels
(``odp_dependencies.gluewheels.zip``: ``wheels/requirements.txt`` and the wheels it needs) named in
``--additional-python-modules`` with ``--python-modules-installer-option --no-index``, so pip installs
from those files in one call and never contacts PyPI (the job's VPC has no internet).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from aws_cdk import Annotations, DefaultStackSynthesizer, Stack
from aws_cdk import aws_glue as glue
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_deployment as s3deploy
from constructs import Construct

from infrastructure.assets import GlueArtifacts
from infrastructure.grants import grant_key, grant_objects, grant_table
from infrastructure.nag import acknowledge, acknowledge_many, logical_id
from infrastructure.network import Network
from infrastructure.tracking import Tracking
from odp.config.models import Cadence
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.contracts.metrics import GLUE_NAMESPACE, NAMESPACE
from odp.naming import file_processor_job_name, resource_prefix

GLUE_VERSION = "5.1"
CODE_PREFIX = "glue/file_processor/"
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


def glue_runtime_arguments(artifacts_bucket: str, artifacts: GlueArtifacts) -> dict[str, str]:
    """Glue's own switches every ODP job shares: Hudi, the catalog, the etl/odp zip, offline wheels, metrics."""
    code = f"s3://{artifacts_bucket}/{CODE_PREFIX}"
    return {
        "--job-language": "python",
        "--datalake-formats": "hudi",
        "--enable-glue-datacatalog": "true",
        "--conf": HUDI_SPARK_CONF,
        "--extra-py-files": code + artifacts.library,
        # The zip of wheels (wheels/requirements.txt + wheels/*.whl): one offline pip install.
        "--additional-python-modules": code + artifacts.wheels_zip,
        "--python-modules-installer-option": "--no-index",
        "--job-bookmark-option": "job-bookmark-disable",
        "--enable-metrics": "true",
        "--enable-observability-metrics": "true",
        "--enable-continuous-cloudwatch-log": "true",
        "--TempDir": f"s3://{artifacts_bucket}/glue/temp/",
    }


# Runs beyond the state machine's Map concurrency: the post-deploy canary or an operator's manual run
# must not take a slot the scheduled execution needs (the overlap guard keeps executions to one).
EXTRA_CONCURRENT_RUNS = 1


def max_concurrent_runs(cadence: Cadence) -> int:
    """The job's MaxConcurrentRuns: the cadence's Map concurrency plus EXTRA_CONCURRENT_RUNS."""
    return cadence.max_concurrency + EXTRA_CONCURRENT_RUNS


# Spark with the Glue Data Catalog reads the `default` database when its session starts.
DEFAULT_DATABASE = "default"


def catalog_database_arns(catalog: str, databases: Sequence[str]) -> list[str]:
    """The catalog ARNs the job may sync into: each configured database (and `default`) and its tables."""
    names = sorted(set(databases))
    return [
        *(f"{catalog}:database/{name}" for name in sorted({DEFAULT_DATABASE, *names})),
        *(f"{catalog}:table/{name}/*" for name in names),
    ]


def acknowledge_bucket_deployments(stack: Stack, artifacts_bucket: s3.IBucket) -> None:
    """The findings of CDK's BucketDeployment singleton (shared by every job that copies code), with reasons."""
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


def job_arguments(
    *,
    environment: str,
    cadence: str,
    raw_bucket: str,
    artifacts_bucket: str,
    artifacts: GlueArtifacts,
    tracking: Tracking,
    history_retention_days: int,
    cadence_config: Cadence,
) -> dict[str, str]:
    """The job's DefaultArguments: the ODP contract plus Glue's own switches."""
    arguments = FileProcessorJobArgs.static_arguments(
        environment=environment,
        cadence=cadence,
        raw_root=f"s3://{raw_bucket}",
        tracker_tables=tracking.names,
        catalog_sync=True,
        history_retention_days=history_retention_days,
        table_concurrency=cadence_config.table_concurrency,
        hudi_profile="glue",
        job_dpus=cadence_config.job_dpus,
    )
    arguments.update(glue_runtime_arguments(artifacts_bucket, artifacts))
    return arguments


class GlueJobs(Construct):
    """One ``glueetl`` job per cadence, all sharing one role and one security configuration.

    Attributes:
        jobs: cadence -> CfnJob; ``job_names``: cadence -> physical name.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        environment: str,
        cadences: Mapping[str, Cadence],
        network: Network,
        tracking: Tracking,
        buckets: Mapping[str, s3.IBucket],
        zone_keys: Mapping[str, kms.IKey],
        state_key: kms.IKey,
        artifacts: GlueArtifacts,
        history_retention_days: int,
        databases: Sequence[str],
    ) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        prefix = resource_prefix(environment)
        artifacts_bucket = buckets["artifacts"]
        if artifacts.script is None:
            Annotations.of(self).add_warning_v2(
                "odp:glue-script-missing", "etl/jobs/file_processor.py does not exist yet: the job has no script"
            )
        self.code = s3deploy.BucketDeployment(
            self,
            "Code",
            sources=[s3deploy.Source.asset(str(artifacts.directory))],
            destination_bucket=artifacts_bucket,
            destination_key_prefix=CODE_PREFIX,
            prune=True,
            retain_on_delete=False,
        )
        acknowledge_bucket_deployments(stack, artifacts_bucket)

        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("glue.amazonaws.com"),
            description=f"ODP {environment} File Processor Glue jobs",
        )
        grant_objects(self.role, buckets["staging"], reason="The job reads any landed file of its tables.")
        grant_objects(
            self.role,
            buckets["raw"],
            write=True,
            delete=True,  # Hudi cleans old file versions and rewrites file groups
            reason="The job owns the Hudi tables under s3://raw/<database>/<table>/, any of them.",
        )
        grant_objects(
            self.role,
            artifacts_bucket,
            prefix="glue/",
            write=True,
            reason="Job code, wheels and --TempDir live under glue/ in the artifacts bucket.",
        )
        for logical in ("file_tracker", "file_tracker_history", "processing_tracker", "processing_tracker_history"):
            grant_table(self.role, logical, tracking.table(logical), write=True)
        for logical in ("table_config", "batch_config"):
            grant_table(self.role, logical, tracking.table(logical), write=False)
        grant_key(self.role, zone_keys["staging"], encrypt=False)
        grant_key(self.role, zone_keys["raw"], encrypt=True)
        grant_key(self.role, state_key, encrypt=True)
        catalog = f"arn:{stack.partition}:glue:{stack.region}:{stack.account}"
        self.role.add_to_policy(
            iam.PolicyStatement(
                sid="GlueCatalogSync",
                actions=[
                    "glue:GetDatabase",
                    "glue:GetDatabases",
                    "glue:GetTable",
                    "glue:GetTables",
                    "glue:CreateTable",
                    "glue:UpdateTable",
                    "glue:GetPartition",
                    "glue:GetPartitions",
                    "glue:BatchGetPartition",
                    "glue:CreatePartition",
                    "glue:BatchCreatePartition",
                    "glue:UpdatePartition",
                    "glue:BatchUpdatePartition",
                    "glue:DeletePartition",
                    "glue:BatchDeletePartition",
                    "glue:GetConnection",
                    "glue:GetSecurityConfiguration",
                ],
                resources=[
                    f"{catalog}:catalog",
                    *catalog_database_arns(catalog, databases),
                    *(f"{catalog}:connection/{connection}" for connection in network.glue_connection_names),
                ],
            )
        )
        logs_arn = f"arn:{stack.partition}:logs:{stack.region}:{stack.account}:log-group:/aws-glue/*"
        self.role.add_to_policy(
            iam.PolicyStatement(
                sid="GlueLogs",
                actions=["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents", "logs:AssociateKmsKey"],
                resources=[logs_arn],
            )
        )
        self.role.add_to_policy(
            iam.PolicyStatement(
                sid="GlueMetrics",
                actions=["cloudwatch:PutMetricData"],
                resources=["*"],
                # Glue: the job's metrics; ODP: each table run's seconds and DPU-seconds (etl/file_processor/cost.py)
                conditions={"StringEquals": {"cloudwatch:namespace": [GLUE_NAMESPACE, NAMESPACE]}},
            )
        )
        self.role.add_to_policy(
            iam.PolicyStatement(
                sid="GlueVpcNetworkInterfaces",
                actions=list(GLUE_VPC_ACTIONS),
                resources=["*"],
            )
        )
        policy = self.role.node.find_child("DefaultPolicy")
        for finding, reason in _ROLE_FINDINGS.items():
            acknowledge(policy, finding.format(region=stack.region, account=stack.account), reason)
        for database in sorted(set(databases)):
            acknowledge(
                policy,
                f"AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:glue:{stack.region}:{stack.account}:table/{database}/*]",
                f"Hudi's catalog sync creates and updates the tables of database {database}, which change with config.",
            )

        self.security_configuration_name = f"{prefix}-file-processor"
        self.security_configuration = glue.CfnSecurityConfiguration(
            self,
            "SecurityConfiguration",
            name=self.security_configuration_name,
            encryption_configuration=glue.CfnSecurityConfiguration.EncryptionConfigurationProperty(
                s3_encryptions=[
                    glue.CfnSecurityConfiguration.S3EncryptionProperty(
                        s3_encryption_mode="SSE-KMS", kms_key_arn=zone_keys["raw"].key_arn
                    )
                ],
                cloud_watch_encryption=glue.CfnSecurityConfiguration.CloudWatchEncryptionProperty(
                    cloud_watch_encryption_mode="SSE-KMS", kms_key_arn=state_key.key_arn
                ),
                job_bookmarks_encryption=glue.CfnSecurityConfiguration.JobBookmarksEncryptionProperty(
                    job_bookmarks_encryption_mode="CSE-KMS", kms_key_arn=state_key.key_arn
                ),
            ),
        )

        self.jobs: dict[str, glue.CfnJob] = {}
        self.job_names: dict[str, str] = {}
        script = f"s3://{artifacts_bucket.bucket_name}/{CODE_PREFIX}{artifacts.script or 'file_processor.py'}"
        for name, cadence in cadences.items():
            job_name = file_processor_job_name(environment, name)
            job = glue.CfnJob(
                self,
                f"Job-{name}",
                name=job_name,
                description=f"ODP File Processor, cadence {name}: landed CDC files -> Hudi tables",
                role=self.role.role_arn,
                command=glue.CfnJob.JobCommandProperty(name="glueetl", python_version="3", script_location=script),
                glue_version=GLUE_VERSION,
                worker_type=cadence.worker_type.value,
                number_of_workers=cadence.number_of_workers,
                timeout=cadence.job_timeout_minutes,
                max_retries=0,  # the state machine retries; a blind Glue retry would double the work
                execution_property=glue.CfnJob.ExecutionPropertyProperty(
                    max_concurrent_runs=max_concurrent_runs(cadence)
                ),
                connections=glue.CfnJob.ConnectionsListProperty(connections=network.glue_connection_names),
                security_configuration=self.security_configuration_name,
                default_arguments=job_arguments(
                    environment=environment,
                    cadence=name,
                    raw_bucket=buckets["raw"].bucket_name,
                    artifacts_bucket=artifacts_bucket.bucket_name,
                    artifacts=artifacts,
                    tracking=tracking,
                    history_retention_days=history_retention_days,
                    cadence_config=cadence,
                ),
            )
            job.node.add_dependency(self.security_configuration, *network.glue_connections, self.code)
            self.jobs[name] = job
            self.job_names[name] = job_name

    def grant_read_job_runs(self, grantee: iam.IGrantable) -> None:
        """glue:GetJobRun on every File Processor job: a lease names the job run holding it, and a run
        that finds the lease of an ended run (FAILED, TIMEOUT, STOPPED) takes it over (odp/tracker/job_runs.py)."""
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(
                sid="LeaseHolderJobRuns",
                actions=["glue:GetJobRun"],
                resources=[self.job_arn(cadence) for cadence in sorted(self.job_names)],
            )
        )

    def job_arn(self, cadence: str) -> str:
        stack = Stack.of(self)
        return f"arn:{stack.partition}:glue:{stack.region}:{stack.account}:job/{self.job_names[cadence]}"


_ROLE_FINDINGS = {
    "AwsSolutions-IAM5[Resource::*]": (
        "EC2 network-interface actions Glue needs to run in the VPC, and cloudwatch:PutMetricData (limited to the "
        f"{GLUE_NAMESPACE} and {NAMESPACE} namespaces by condition), support no resource-level permissions."
    ),
    "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:{region}:{account}:log-group:/aws-glue/*]": (
        "Glue writes job logs to its own /aws-glue/* log groups (names fixed by the service)."
    ),
}

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
