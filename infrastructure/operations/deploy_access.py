"""Deploy access: the role the pipeline's post-deploy step assumes from the deployment account to
load the configuration into DynamoDB, smoke-check the environment and run the canary (each File
Processor job once, in its harmless mode)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aws_cdk import Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infrastructure.grants import grant_key, grant_table
from infrastructure.ingest.tracking import Tracking
from infrastructure.jobs.engines.emr_serverless import EmrServerless
from odp.naming import DATASET_CONFIG, resource_prefix


def config_loader_role_name(environment: str) -> str:
    """Physical name, so the pipeline (another account) can build the role's ARN."""
    return f"{resource_prefix(environment)}-config-loader"


def post_deploy_role_name(environment: str) -> str:
    """The pipeline's post-deploy CodeBuild role (deployment account): the one principal the config loader trusts."""
    return f"{resource_prefix(environment)}-post-deploy"


@dataclass(frozen=True)
class DeployAccessProps:
    """What the config-loader role of one environment may reach.

    Attributes:
        environment: environment name (role ``odp-<env>-config-loader``, trusted post-deploy role).
        deployment_account: the account of the pipelines.
        tracking: the tracker tables (write table_config / batch_config / dataset_config, describe them all).
        key: the state key the tables are encrypted with.
        state_machines: what the smoke check describes (and the canary, for an EMR Serverless run); default none.
        glue_job_arns: the jobs the canary runs (File Processor, dataset, streaming); default none (no Glue
            statement).
        emr_serverless: the EMR Serverless application a cadence runs on: the canary starts the File Processor
            there too and watches the run; default none.
    """

    environment: str
    deployment_account: str
    tracking: Tracking
    key: kms.IKey
    state_machines: Sequence[sfn.IStateMachine] = ()
    glue_job_arns: Sequence[str] = ()
    emr_serverless: EmrServerless | None = None


class DeployAccess(Construct):
    """A role trusted by the pipeline's post-deploy role: write table_config/batch_config/dataset_config, describe the
    rest."""

    def __init__(self, scope: Construct, construct_id: str, props: DeployAccessProps) -> None:
        environment, deployment_account = props.environment, props.deployment_account
        tracking, key, state_machines = props.tracking, props.key, props.state_machines
        super().__init__(scope, construct_id)
        self.role = iam.Role(
            self,
            "ConfigLoaderRole",
            role_name=config_loader_role_name(environment),
            # The deployment account, and in it only the post-deploy role (by ARN condition: a role principal
            # must exist when the trust is written, and `cdk deploy` without the pipeline has none).
            assumed_by=iam.AccountPrincipal(deployment_account).with_conditions(
                {
                    "ArnEquals": {
                        "aws:PrincipalArn": f"arn:{Stack.of(self).partition}:iam::{deployment_account}:role/"
                        f"{post_deploy_role_name(environment)}"
                    }
                }
            ),
            description="Assumed by the ODP pipeline's post-deploy step: load config/, smoke-check the environment",
        )
        # odp.config.manager scans the three tables: retiring an item needs every item, not only the configured ones.
        for logical in ("table_config", "batch_config", DATASET_CONFIG):
            grant_table(self.role, logical, tracking.table(logical), write=True, scan=True)
        self.role.add_to_policy(
            iam.PolicyStatement(
                sid="SmokeCheckTables",
                actions=["dynamodb:DescribeTable"],
                resources=[table.table_arn for table in tracking.tables.values()],
            )
        )
        grant_key(self.role, key, encrypt=True)
        if state_machines:
            self.role.add_to_policy(
                iam.PolicyStatement(
                    sid="SmokeCheckStateMachines",
                    actions=["states:DescribeStateMachine"],
                    resources=[machine.state_machine_arn for machine in state_machines],
                )
            )
        jobs = list(props.glue_job_arns)
        if jobs:
            self.role.add_to_policy(
                iam.PolicyStatement(
                    # odp.operations.canary: start, then poll each run; GetJobRuns: is a streaming job running?
                    sid="CanaryRunsEveryJob",
                    actions=["glue:StartJobRun", "glue:GetJobRun", "glue:GetJobRuns"],
                    resources=jobs,
                )
            )
        if props.emr_serverless is not None:  # odp.operations.canary: start the run as the state machine does, poll it
            props.emr_serverless.grant_start_job_runs(self.role)
            props.emr_serverless.grant_read_job_runs(self.role)
        self.role_arn = f"arn:{Stack.of(self).partition}:iam::{Stack.of(self).account}:role/{self.role.role_name}"
