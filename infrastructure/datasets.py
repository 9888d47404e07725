"""Datasets: the dataset Glue job and its role (writing the run history table, which Tracking
declares with the other tracker tables), the datasets state machine
started when a File Processor execution succeeds, an Athena named query per dataset, alarms and
dashboard widgets. The conformed and purpose-built buckets, their zone keys and the ``<source>_<zone>``
Glue databases are Storage's and Catalog's.

The job reads the configuration (tables/ and datasets/ with their SQL) from the artifacts bucket,
where this construct deploys config/ beside the job script.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_athena as athena
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_glue as glue
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_deployment as s3deploy
from aws_cdk import aws_sns as sns
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infrastructure.glue_jobs import (
    GLUE_VERSION,
    HUDI_SPARK_CONF,
    acknowledge_bucket_deployments,
    catalog_database_arns,
)
from infrastructure.grants import grant_key, grant_objects
from infrastructure.nag import acknowledge
from odp.config.datasets import DatasetConfig
from odp.contracts.datasets import DatasetJobArgs, LakeRoots
from odp.contracts.state_machines import DatasetsSubstitutions
from odp.naming import resource_prefix
from odp.tracker.dataset_history import dataset_job_name

REPO_ROOT = Path(__file__).resolve().parents[1]
CODE_PREFIX = "glue/datasets/"
PERIOD = Duration.minutes(5)


def dataset_query(dataset: DatasetConfig) -> str:
    """Rows and distinct keys of a dataset (equal when the dataset is sound)."""
    # Names are validated identifiers ([a-z0-9_]) from config, never user input.
    target = f'"{dataset.database}"."{dataset.name}"'
    keys = "COUNT(DISTINCT _hoodie_record_key)"
    return f"SELECT COUNT(*) AS row_count, {keys} AS distinct_keys, COUNT(*) = {keys} AS valid FROM {target}"  # noqa: S608


class Datasets(Construct):
    """Everything that refreshes datasets; ``job_name``, ``state_machine`` and ``history_table`` (Tracking's
    ``dataset_run_history`` table, passed in) are public."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        environment: str,
        datasets: Sequence[DatasetConfig],
        buckets: Mapping[str, s3.IBucket],
        zone_keys: Mapping[str, kms.IKey],
        state_key: kms.IKey,
        history_table: dynamodb.ITableV2,
        alerts_topic: sns.ITopic,
        dashboard: cloudwatch.Dashboard,
        file_processors: Sequence[sfn.IStateMachine],
        workgroup_name: str,
        library: str,
        wheels_zip: str,
        connection_names: Sequence[str],
        removal_policy: RemovalPolicy,
        log_retention: logs.RetentionDays,
    ) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        prefix = resource_prefix(environment)
        artifacts = buckets["artifacts"]
        self.job_name = dataset_job_name(environment)
        job_arn = f"arn:{stack.partition}:glue:{stack.region}:{stack.account}:job/{self.job_name}"

        self.history_table = history_table
        self.code = s3deploy.BucketDeployment(
            self,
            "Code",
            sources=[
                s3deploy.Source.asset(str(REPO_ROOT / "etl" / "jobs"), exclude=["__pycache__", "*.pyc"]),
                s3deploy.Source.asset(str(REPO_ROOT / "config"), exclude=["schema/*"]),
            ],
            destination_bucket=artifacts,
            destination_key_prefix=CODE_PREFIX,
            prune=False,
            retain_on_delete=False,
        )
        acknowledge_bucket_deployments(stack, artifacts)

        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("glue.amazonaws.com"),
            description=f"ODP {environment} datasets",
        )
        grant_objects(self.role, buckets["raw"], reason="Datasets read any raw table.")
        for zone in ("conformed", "purpose_built"):
            grant_objects(
                self.role, buckets[zone], write=True, delete=True, reason=f"The job owns every Hudi dataset of {zone}."
            )
            grant_key(self.role, zone_keys[zone], encrypt=True)
        grant_objects(
            self.role, artifacts, prefix="glue/", write=True, reason="Code, config and --TempDir under glue/."
        )
        grant_key(self.role, zone_keys["raw"], encrypt=False)
        grant_key(self.role, state_key, encrypt=True)  # history table, alerts topic, logs
        self.history_table.grant_write_data(self.role)
        alerts_topic.grant_publish(self.role)
        catalog = f"arn:{stack.partition}:glue:{stack.region}:{stack.account}"
        databases = sorted({dataset.database for dataset in datasets})  # the zones' databases it syncs into
        self.role.add_to_policy(
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
                    *catalog_database_arns(catalog, databases),
                    *(f"{catalog}:connection/{name}" for name in connection_names),
                ],
            )
        )
        self.role.add_to_policy(
            iam.PolicyStatement(
                sid="GlueLogs",
                actions=["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents", "logs:AssociateKmsKey"],
                resources=[f"arn:{stack.partition}:logs:{stack.region}:{stack.account}:log-group:/aws-glue/*"],
            )
        )
        self.role.add_to_policy(
            iam.PolicyStatement(
                sid="GlueMetricsAndVpc",
                actions=[
                    "cloudwatch:PutMetricData",
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
                ],
                resources=["*"],
            )
        )
        policy = self.role.node.find_child("DefaultPolicy")
        for finding, reason in _ROLE_FINDINGS.items():
            acknowledge(policy, finding.format(region=stack.region, account=stack.account), reason)
        for database in databases:
            acknowledge(
                policy,
                f"AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:glue:{stack.region}:{stack.account}:table/{database}/*]",
                f"Hudi's catalog sync creates and updates the dataset tables of {database}, which change with config.",
            )

        security_name = f"{prefix}-datasets"
        security = glue.CfnSecurityConfiguration(
            self,
            "SecurityConfiguration",
            name=security_name,
            encryption_configuration=glue.CfnSecurityConfiguration.EncryptionConfigurationProperty(
                # Objects take their bucket's zone key (SSE-KMS by default): one job writes two zones.
                s3_encryptions=[glue.CfnSecurityConfiguration.S3EncryptionProperty(s3_encryption_mode="DISABLED")],
                cloud_watch_encryption=glue.CfnSecurityConfiguration.CloudWatchEncryptionProperty(
                    cloud_watch_encryption_mode="SSE-KMS", kms_key_arn=state_key.key_arn
                ),
                job_bookmarks_encryption=glue.CfnSecurityConfiguration.JobBookmarksEncryptionProperty(
                    job_bookmarks_encryption_mode="CSE-KMS", kms_key_arn=state_key.key_arn
                ),
            ),
        )
        code = f"s3://{artifacts.bucket_name}/"
        contract = DatasetJobArgs(
            LakeRoots(
                raw=f"s3://{buckets['raw'].bucket_name}",
                conformed=f"s3://{buckets['conformed'].bucket_name}",
                purpose_built=f"s3://{buckets['purpose_built'].bucket_name}",
            ),
            config_dir=f"{code}{CODE_PREFIX}",
            catalog_sync=True,
            history_table=self.history_table.table_name,
            topic_arn=alerts_topic.topic_arn,
        )
        arguments = {
            **contract.to_arguments(),
            "--job-language": "python",
            "--datalake-formats": "hudi",
            "--enable-glue-datacatalog": "true",
            "--conf": HUDI_SPARK_CONF,
            "--extra-py-files": f"{code}glue/file_processor/{library}",
            # The zip of wheels GlueJobs ships (wheels/requirements.txt + wheels/*.whl): one offline pip install.
            "--additional-python-modules": f"{code}glue/file_processor/{wheels_zip}",
            "--python-modules-installer-option": "--no-index",
            "--job-bookmark-option": "job-bookmark-disable",
            "--enable-metrics": "true",
            "--enable-continuous-cloudwatch-log": "true",
            "--TempDir": f"{code}glue/temp/",
        }
        self.job = glue.CfnJob(
            self,
            "Job",
            name=self.job_name,
            description="ODP datasets: SQL over the raw tables -> conformed and purpose-built Hudi tables",
            role=self.role.role_arn,
            command=glue.CfnJob.JobCommandProperty(
                name="glueetl", python_version="3", script_location=f"{code}{CODE_PREFIX}dataset_job.py"
            ),
            glue_version=GLUE_VERSION,
            worker_type="G.1X",
            number_of_workers=2,
            timeout=120,
            max_retries=0,
            # Two runs writing one Hudi dataset would conflict: the state machine waits by retrying.
            execution_property=glue.CfnJob.ExecutionPropertyProperty(max_concurrent_runs=1),
            connections=(
                glue.CfnJob.ConnectionsListProperty(connections=list(connection_names)) if connection_names else None
            ),
            security_configuration=security_name,
            default_arguments=arguments,
        )
        self.job.node.add_dependency(security, self.code)

        log_group = logs.LogGroup(
            self,
            "Logs",
            log_group_name=f"/aws/vendedlogs/states/{prefix}-datasets",
            encryption_key=state_key,
            retention=log_retention,
            removal_policy=removal_policy,
        )
        self.state_machine = sfn.StateMachine(
            self,
            "StateMachine",
            state_machine_name=f"{prefix}-datasets",
            definition_body=sfn.DefinitionBody.from_file(str(DatasetsSubstitutions.DEFINITION)),
            definition_substitutions=DatasetsSubstitutions(
                dataset_job_name=self.job_name, alerts_topic_arn=alerts_topic.topic_arn
            ).values(),
            logs=sfn.LogOptions(destination=log_group, level=sfn.LogLevel.ALL, include_execution_data=True),
            tracing_enabled=True,
        )
        sm_role = self.state_machine.role
        sm_role.add_to_principal_policy(
            iam.PolicyStatement(
                sid="RunDatasetJob",
                actions=["glue:StartJobRun", "glue:GetJobRun", "glue:GetJobRuns", "glue:BatchStopJobRun"],
                resources=[job_arn],
            )
        )
        sm_role.add_to_principal_policy(
            iam.PolicyStatement(sid="PublishAlerts", actions=["sns:Publish"], resources=[alerts_topic.topic_arn])
        )
        state_key.grant(sm_role, "kms:Decrypt", "kms:GenerateDataKey")
        acknowledge(
            sm_role.node.find_child("DefaultPolicy"),
            "AwsSolutions-IAM5[Resource::*]",
            "Log delivery and X-Ray actions support no resource-level permissions; CDK adds them for logs and tracing.",
        )
        self.trigger = events.Rule(
            self,
            "AfterFileProcessor",
            rule_name=f"{prefix}-datasets-after-file-processor",
            description="A File Processor execution succeeded: refresh the datasets downstream of its tables",
            event_pattern=events.EventPattern(
                source=["aws.states"],
                detail_type=["Step Functions Execution Status Change"],
                detail={"status": ["SUCCEEDED"], "stateMachineArn": [sm.state_machine_arn for sm in file_processors]},
            ),
            targets=[targets.SfnStateMachine(self.state_machine)],
        )

        failed = self.state_machine.metric_failed(period=PERIOD)
        self.alarm = failed.create_alarm(
            self,
            "Failed",
            alarm_name=f"{prefix}-datasets-failed",
            alarm_description="A dataset refresh failed or a fail quality rule did not hold",
            threshold=0,
            evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        self.alarm.add_alarm_action(actions.SnsAction(alerts_topic))
        dashboard.add_widgets(
            cloudwatch.GraphWidget(title="Datasets", left=[self.state_machine.metric_succeeded(period=PERIOD), failed])
        )
        self.queries = {
            dataset.name: athena.CfnNamedQuery(
                self,
                f"Query-{dataset.name}",
                name=f"dataset {dataset.name}",
                description=f"Rows and distinct keys of {dataset.zone.value} dataset {dataset.database}.{dataset.name}",
                database=dataset.database,
                work_group=workgroup_name,
                query_string=dataset_query(dataset),
            )
            for dataset in datasets
        }


_ROLE_FINDINGS = {
    "AwsSolutions-IAM5[Action::kms:GenerateDataKey*]": "CDK's grants on the history table and topic (state key).",
    "AwsSolutions-IAM5[Action::kms:ReEncrypt*]": "CDK's grants on the history table and topic (state key).",
    "AwsSolutions-IAM5[Resource::*]": (
        "EC2 network-interface actions Glue needs in the VPC and cloudwatch:PutMetricData support no "
        "resource-level permissions."
    ),
    "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:{region}:{account}:log-group:/aws-glue/*]": (
        "Glue writes job logs to its own /aws-glue/* log groups."
    ),
}
