"""One ODP Lambda function: locally bundled code, Powertools from its public layer, X-Ray, an
encrypted log group, and the environment variables of odp/contracts/lambda_env.py."""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_ssm as ssm
from constructs import Construct

from infrastructure.nag import acknowledge
from odp.contracts.lambda_env import lambda_environment
from odp.naming import TrackerTableNames, resource_prefix

# AWS publishes the Powertools layer ARN per region under this public SSM parameter; CloudFormation
# resolves it at deploy time, so no account id appears in the code.
# The layer of the Powertools version the tests run (requirements.txt pins it; a test compares the two),
# never `latest`: a new release would change the deployed code without a commit.
POWERTOOLS_VERSION = "3.37.0"
POWERTOOLS_LAYER_PARAMETER = f"/aws/service/powertools/python/x86_64/python3.11/{POWERTOOLS_VERSION}"
RUNTIME = lambda_.Runtime.PYTHON_3_11


class OdpFunction(Construct):
    """A Python 3.11 function whose handler lives in the shared code asset.

    Args:
        code_dir: the asset folder from :func:`infrastructure.assets.lambda_code`.
        handler: dotted handler path, e.g. ``lambdas.file_manager.handler.handler``.
        service: Powertools service name (also the ``service`` metric dimension).
        key: the state key (log group and environment variable encryption).
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        environment: str,
        names: TrackerTableNames,
        code_dir: Path,
        handler: str,
        service: str,
        description: str,
        key: kms.IKey,
        timeout: Duration,
        removal_policy: RemovalPolicy,
        log_retention: logs.RetentionDays,
        memory_size: int = 512,
    ) -> None:
        super().__init__(scope, construct_id)
        name = f"{resource_prefix(environment)}-{service.replace('_', '-')}"
        self.log_group = logs.LogGroup(
            self,
            "Logs",
            log_group_name=f"/aws/lambda/{name}",
            encryption_key=key,
            retention=log_retention,
            removal_policy=removal_policy,
        )
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"ODP {environment} {service} function",
        )
        # Only its own log group: no AWSLambdaBasicExecutionRole (logs:* on every group).
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                resources=[self.log_group.log_group_arn],  # the ARN attribute ends in ":*" (its streams)
            )
        )
        layer_arn = ssm.StringParameter.value_for_string_parameter(self, POWERTOOLS_LAYER_PARAMETER)
        self.function = lambda_.Function(
            self,
            "Function",
            function_name=name,
            description=description,
            runtime=RUNTIME,
            architecture=lambda_.Architecture.X86_64,
            handler=handler,
            code=lambda_.Code.from_asset(str(code_dir)),
            layers=[lambda_.LayerVersion.from_layer_version_arn(self, "Powertools", layer_arn)],
            environment=lambda_environment(environment, names, service=service),
            environment_encryption=key,  # the callers grant the role kms:Decrypt on it (grant_key)
            role=self.role,
            timeout=timeout,
            memory_size=memory_size,
            tracing=lambda_.Tracing.ACTIVE,
            log_group=self.log_group,
        )
        acknowledge(
            self.function,
            "AwsSolutions-L1",
            "Python 3.11 on purpose: the same interpreter as AWS Glue 5.1, which runs the same odp package.",
        )
        acknowledge(
            self.role.node.find_child("DefaultPolicy"),
            "AwsSolutions-IAM5[Resource::*]",
            "X-Ray PutTraceSegments/PutTelemetryRecords support no resource-level permissions.",
        )
