"""One ODP Lambda function: locally bundled code, Powertools from its public layer, X-Ray, an
encrypted log group, and the environment variables of odp/contracts/lambda_env.py."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_ssm as ssm
from constructs import Construct

from infrastructure.foundation.observability import encrypted_log_group, function_role
from infrastructure.nag import acknowledge
from odp.contracts.lambda_env import lambda_environment
from odp.naming import resource_prefix

if TYPE_CHECKING:
    from infrastructure.ingest.tracking import Tracking

# AWS publishes the Powertools layer ARN per region under this public SSM parameter; CloudFormation
# resolves it at deploy time, so no account id appears in the code.
# The layer of the Powertools version the tests run (requirements.txt pins it; a test compares the two),
# never `latest`: a new release would change the deployed code without a commit.
POWERTOOLS_VERSION = "3.37.0"
POWERTOOLS_LAYER_PARAMETER = f"/aws/service/powertools/python/x86_64/python3.11/{POWERTOOLS_VERSION}"
RUNTIME = lambda_.Runtime.PYTHON_3_11


@dataclass(frozen=True)
class FunctionSpec:
    """What one function runs: handler, Powertools service name, timeout, description."""

    handler: str  # dotted handler path, e.g. ``lambdas.file_manager.handler.handler``
    service: str  # Powertools service name (also the ``service`` metric dimension)
    timeout: Duration
    description: str


@dataclass(frozen=True)
class FunctionOwnerProps:
    """What a construct owning one ODP function gives it.

    Attributes:
        environment: names every resource ``odp-<env>-...``.
        tracking: the tracker tables (their names are the function's environment).
        key: the state key (encrypts the log group).
        code_dir: the Lambda asset folder (``infrastructure.assets.lambda_code``).
        removal_policy: of the log group; RETAIN (default) keeps it when the stack goes.
        log_retention: of the log group (default one year).
    """

    environment: str
    tracking: Tracking
    key: kms.IKey
    code_dir: Path
    removal_policy: RemovalPolicy = RemovalPolicy.RETAIN
    log_retention: logs.RetentionDays = logs.RetentionDays.ONE_YEAR


@dataclass(frozen=True)
class OdpFunctionProps:
    """One ODP Lambda function: what its owner gives it, what it runs, its memory (default 512 MB)."""

    owner: FunctionOwnerProps
    function: FunctionSpec
    memory_size: int = 512


class OdpFunction(Construct):
    """A Python 3.11 function whose handler lives in the shared code asset.

    Its log group, role and environment come from its owner (:class:`FunctionOwnerProps`), its handler,
    service and timeout from :class:`FunctionSpec`.
    """

    def __init__(self, scope: Construct, construct_id: str, props: OdpFunctionProps) -> None:
        super().__init__(scope, construct_id)
        owner, function = props.owner, props.function
        environment, key, code_dir = owner.environment, owner.key, owner.code_dir
        names = owner.tracking.names
        handler, service, description = function.handler, function.service, function.description
        timeout, memory_size = function.timeout, props.memory_size
        removal_policy, log_retention = owner.removal_policy, owner.log_retention
        name = f"{resource_prefix(environment)}-{service.replace('_', '-')}"
        self.log_group = encrypted_log_group(
            self, f"/aws/lambda/{name}", key=key, retention=log_retention, removal_policy=removal_policy
        )
        self.role = function_role(self, self.log_group, description=f"ODP {environment} {service} function")
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
