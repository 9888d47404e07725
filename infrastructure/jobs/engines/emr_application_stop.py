"""A custom resource ordered before ODP's EMR Serverless application: it stops the application, and waits until it is
stopped, whenever a setting that EMR Serverless changes only on a stopped application is about to change.

EMR Serverless updates an application only while it is CREATED or STOPPED; of what ODP sets, only the maximum capacity
changes on a started one, and a new custom image does not when the application has pre-initialized capacity (AWS's
"Updating running applications"). ODP's application has pre-initialized capacity and an image tag that changes with
every change of the wheels, the extensions jar or the Dockerfile, and a cadence of 15 minutes or less (or the
post-deploy canary) keeps it started: without this step, such a deploy fails and rolls back.

- **the custom resource** ``Custom::EmrApplicationStop``: its properties are the application's logical id and
  :class:`StopTriggers` (every application setting that needs a stopped application), so CloudFormation updates it,
  and runs its handler, exactly when one of them changes; the application ``DependsOn`` it, so the handler runs
  first, in a deploy and in its rollback alike (``emr_application_stop_handler/handler.py``: find the application in
  the stack, stop it, wait until STOPPED, never cancel a job run).
- **the function** ``odp-<env>-emr-application-stop``: Python 3.11, that folder alone as its code, 15 minutes
  (Lambda's maximum: job runs still running keep the application started), its own encrypted log group.
- **its role**: ``logs:CreateLogStream`` / ``PutLogEvents`` on its log group, ``cloudformation:DescribeStackResource``
  on its stack, and (``stop_policy``, a policy created after the application, whose ARN it names)
  ``emr-serverless:GetApplication`` / ``StopApplication`` on that application only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from aws_cdk import CustomResource, Duration, RemovalPolicy, Stack
from aws_cdk import aws_emrserverless as emr
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from infrastructure.foundation.observability import encrypted_log_group, function_role
from infrastructure.nag import acknowledge
from odp.naming import EMR_APPLICATION_STOP, resource_prefix

HANDLER_DIR = Path(__file__).resolve().parent / "emr_application_stop_handler"
RESOURCE_TYPE = "Custom::EmrApplicationStop"
TIMEOUT = Duration.minutes(15)  # Lambda's maximum: job runs still running keep the application started
STOP_ACTIONS = ("emr-serverless:GetApplication", "emr-serverless:StopApplication")


@dataclass(frozen=True)
class StopTriggers:
    """Every setting of the application that EMR Serverless changes only while it is stopped (all but the maximum
    capacity): a change of one of them changes the custom resource, which stops the application first."""

    release_label: str
    image_uri: str
    architecture: str
    initial_capacity: Mapping[str, int]
    worker: Sequence[str]  # cpu, memory, disk of a pre-initialized worker
    idle_timeout_minutes: int
    subnet_ids: Sequence[str]
    security_group_ids: Sequence[str]
    log_group_name: str

    def properties(self) -> dict[str, object]:
        return {"".join(part.title() for part in name.split("_")): value for name, value in asdict(self).items()}


@dataclass(frozen=True)
class EmrApplicationStopProps:
    """The stop step of one environment's application.

    Attributes:
        environment: names the function ``odp-<env>-emr-application-stop``.
        key: encrypts its log group (the state key).
        application: the application to stop; it is made to depend on the custom resource.
        triggers: the application's settings whose change needs a stopped application.
        removal_policy / log_retention: of its log group.
    """

    environment: str
    key: kms.IKey
    application: emr.CfnApplication
    triggers: StopTriggers
    removal_policy: RemovalPolicy = RemovalPolicy.RETAIN
    log_retention: logs.RetentionDays = logs.RetentionDays.ONE_YEAR


class EmrApplicationStop(Construct):
    """The function, its role, the custom resource the application depends on, and the policy that lets the function
    read and stop that application (created after it: it names its ARN; the function does not depend on it).

    Attributes:
        function: the handler's function.
        role: its role.
        resource: the custom resource.
        stop_policy: GetApplication / StopApplication on the application.
    """

    def __init__(self, scope: Construct, construct_id: str, props: EmrApplicationStopProps) -> None:
        super().__init__(scope, construct_id)
        self.props = props
        name = f"{resource_prefix(props.environment)}-{EMR_APPLICATION_STOP}"
        log_group = encrypted_log_group(
            self,
            f"/aws/lambda/{name}",
            key=props.key,
            retention=props.log_retention,
            removal_policy=props.removal_policy,
        )
        purpose = "stops the EMR Serverless application before its update"
        self.role = function_role(self, log_group, description=f"ODP {props.environment}: {purpose}")
        self.role.add_to_policy(
            iam.PolicyStatement(actions=["cloudformation:DescribeStackResource"], resources=[Stack.of(self).stack_id])
        )
        self.function = lambda_.Function(
            self,
            "Function",
            function_name=name,
            description="Stops ODP's EMR Serverless application and waits until it is stopped, before its update",
            runtime=lambda_.Runtime.PYTHON_3_11,
            architecture=lambda_.Architecture.X86_64,
            handler="handler.handler",
            code=lambda_.Code.from_asset(str(HANDLER_DIR), exclude=["__pycache__", "*.pyc"]),
            role=self.role,
            timeout=TIMEOUT,
            log_group=log_group,
        )
        acknowledge(
            self.function,
            "AwsSolutions-L1",
            "Python 3.11 on purpose: the interpreter of every ODP function and of AWS Glue 5.1.",
        )
        self.resource = CustomResource(
            self,
            "Resource",
            service_token=self.function.function_arn,
            resource_type=RESOURCE_TYPE,
            properties={
                # a literal, not a Ref: the application comes after this resource
                "ApplicationLogicalId": Stack.of(self).get_logical_id(props.application),
                **props.triggers.properties(),
            },
        )
        props.application.node.add_dependency(self.resource)
        self.stop_policy = iam.Policy(
            self,
            "StopApplication",
            roles=[self.role],
            statements=[iam.PolicyStatement(actions=list(STOP_ACTIONS), resources=[props.application.attr_arn])],
        )
