"""One self-mutating CDK pipeline per branch, in the deployment account.

The pipeline of ``main`` deploys dev, ``test`` deploys test, ``prod`` deploys prod (branches from
environments.yaml). Its synth step runs ``make test`` and then synthesizes only its own branch
(``-c branch=<branch>``). The stage deploys cross-account (the target account trusts the deployment
account through ``cdk bootstrap --trust``); prod waits for a manual approval; a pre-deploy step deletes a stack
that a failed first create left in ROLLBACK_COMPLETE (``odp.operations.stack_recovery``), so the run creates it
again; a post-deploy step loads the configuration into DynamoDB and smoke-checks the environment.
"""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import DefaultStackSynthesizer, Environment, Stack, Stage, pipelines
from aws_cdk import aws_codebuild as codebuild
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from constructs import Construct

from infrastructure.assets import BuiltAssets
from infrastructure.foundation.secure_bucket import SecureBucket
from infrastructure.nag import acknowledge, logical_id
from infrastructure.operations.deploy_access import config_loader_role_name, post_deploy_role_name
from infrastructure.stage import OdpStage
from odp.config.loader import OdpConfig
from odp.naming import resource_prefix
from odp.operations.stack_recovery import StackTarget

BRANCH_CONTEXT = "branch"
BUILD_IMAGE = codebuild.LinuxBuildImage.STANDARD_7_0
# The synth step runs the whole test suite (real Spark + Hudi) before synthesizing: 8 vCPU, 15 GB.
SYNTH_COMPUTE = codebuild.ComputeType.LARGE
# Pinned like package.json (npm's `latest` of aws-cdk is an old 3.0.0): the self-mutation step runs
# this CLI, the asset steps this cdk-assets. Raise CDK_CLI_VERSION first, alone, then aws-cdk-lib.
CDK_CLI_VERSION = "2.1148.1"
CDK_ASSETS_VERSION = "4.7.3"
TARGET_PROFILE = "odp-target"
LEGACY_USE_CONNECTION = "codestar-connections:UseConnection"


def synth_commands(branch: str) -> list[str]:
    return ["make test", f"npx cdk synth --quiet -c {BRANCH_CONTEXT}={branch}"]


def post_deploy_commands(name: str, role_arn: str) -> list[str]:
    """Assume the target account's config-loader role, load config/, apply the consumers' grants on tables that exist
    by now (docs/decisions/030), smoke-check, run the canary."""
    return [
        f"aws configure set profile.{TARGET_PROFILE}.role_arn {role_arn}",
        f"aws configure set profile.{TARGET_PROFILE}.credential_source EcsContainer",
        f"aws configure set profile.{TARGET_PROFILE}.region $ODP_REGION",
        f"AWS_PROFILE={TARGET_PROFILE} python -m odp.config load --env {name}",
        f"AWS_PROFILE={TARGET_PROFILE} python -m odp lake-grants --env {name} --yes",
        f"AWS_PROFILE={TARGET_PROFILE} python -m odp smoke --env {name}",
        f"AWS_PROFILE={TARGET_PROFILE} python -m odp canary --env {name}",
    ]


def deploy_role_arn(account: str, region: str, partition: str = "aws") -> str:
    """The target's CDK bootstrap deploy role (default qualifier), which ``cdk bootstrap --trust`` lets the deployment
    account assume: the pipeline's deploy actions use it; the recovery step uses it under a one-stack session policy."""
    qualifier = DefaultStackSynthesizer.DEFAULT_QUALIFIER
    return f"arn:{partition}:iam::{account}:role/cdk-{qualifier}-deploy-role-{account}-{region}"


def stage_stack_targets(stage: Stage) -> list[StackTarget]:
    """Every stack of a stage (prod: the DR region's ReplicaKey, then DataLake) with the role that may recover it."""
    return [
        StackTarget(stack.stack_name, stack.account, stack.region, deploy_role_arn(stack.account, stack.region))
        for stack in stage.node.children
        if isinstance(stack, Stack)
    ]


def recovery_commands(targets: Sequence[StackTarget]) -> list[str]:
    """Delete each stack a failed first create left in ROLLBACK_COMPLETE (and nothing else): the stage can then
    create it again. One command per stack, in its region, under a session policy that may delete only that stack."""
    return [
        f"python -m odp.operations.stack_recovery --stack {t.stack_name} --region {t.region} --role-arn {t.role_arn}"
        for t in targets
    ]


# What every ODP pipeline sets: KMS keys for the cross-account targets (rotated), self-mutation, and no
# Docker during synth (assets are built locally, infrastructure/assets.py).
PIPELINE_SETTINGS = {
    "cross_account_keys": True,
    "enable_key_rotation": True,
    "self_mutation": True,
    "docker_enabled_for_synth": False,
}


class PipelineStack(Stack):
    """The pipeline of one environment's branch."""

    def __init__(self, scope: Construct, construct_id: str, *, name: str, config: OdpConfig, assets: BuiltAssets):
        deployment = config.environments.deployment
        super().__init__(
            scope,
            construct_id,
            env=Environment(account=deployment.account, region=deployment.region),
            description=f"ODP pipeline of environment {name}",
        )
        environment = config.environments.environments[name]
        if environment.branch is None:
            raise ValueError(f"environment {name!r} has no branch: it has no pipeline")
        source = pipelines.CodePipelineSource.connection(
            config.environments.source.repository,
            environment.branch,
            connection_arn=config.environments.source.connection_arn,
        )
        build_spec = codebuild.BuildSpec.from_object(
            {"phases": {"install": {"runtime-versions": {"python": "3.11", "java": "corretto17", "nodejs": "20"}}}}
        )
        self.pipeline = pipelines.CodePipeline(
            self,
            "Pipeline",
            pipeline_name=f"{resource_prefix(name)}-pipeline",
            **PIPELINE_SETTINGS,
            cli_version=CDK_CLI_VERSION,
            cdk_assets_cli_version=CDK_ASSETS_VERSION,
            code_build_defaults=pipelines.CodeBuildOptions(
                build_environment=codebuild.BuildEnvironment(build_image=BUILD_IMAGE),
                partial_build_spec=build_spec,
            ),
            synth_code_build_defaults=pipelines.CodeBuildOptions(
                build_environment=codebuild.BuildEnvironment(build_image=BUILD_IMAGE, compute_type=SYNTH_COMPUTE),
            ),
            synth=pipelines.ShellStep("Synth", input=source, commands=synth_commands(environment.branch)),
        )
        stage = OdpStage(self, name.title(), name=name, config=config, assets=assets)
        role_arn = f"arn:aws:iam::{environment.account}:role/{config_loader_role_name(name)}"
        # Named, so the target account's config-loader role can trust exactly this role.
        post_role = iam.Role(
            self.pipeline,  # under the pipeline: its generated-policy acknowledgments apply to this role too
            "PostDeployRole",
            role_name=post_deploy_role_name(name),
            assumed_by=iam.ServicePrincipal("codebuild.amazonaws.com"),
            description=f"ODP {name} pipeline: post-deploy configuration load and smoke check",
        )
        post = pipelines.CodeBuildStep(
            "LoadConfigAndSmokeCheck",
            input=source,
            role=post_role,
            install_commands=["pip install --quiet -r requirements.txt"],
            commands=post_deploy_commands(name, role_arn),
            env={"ODP_REGION": environment.region},
            role_policy_statements=[iam.PolicyStatement(actions=["sts:AssumeRole"], resources=[role_arn])],
        )
        targets = stage_stack_targets(stage)
        recovery = pipelines.CodeBuildStep(
            "RecoverFailedCreate",
            input=source,
            install_commands=["pip install --quiet -r requirements.txt"],
            commands=recovery_commands(targets),
            role_policy_statements=[
                iam.PolicyStatement(actions=["sts:AssumeRole"], resources=sorted({t.role_arn for t in targets}))
            ],
        )
        pre: list[pipelines.Step] = [recovery]
        if environment.manual_approval:  # nothing is deleted before the release is approved
            approval = pipelines.ManualApprovalStep(f"Approve-{name}")
            recovery.add_step_dependency(approval)
            pre = [approval, recovery]
        self.pipeline.add_stage(stage, pre=pre, post=[post])
        self.pipeline.build_pipeline()
        self.stage = stage
        self._version_and_log_the_artifact_bucket()
        self._use_connection_with_its_own_prefix()
        self._acknowledge_generated_findings()

    def _version_and_log_the_artifact_bucket(self) -> None:
        """CDK Pipelines' artifact bucket, versioned (an overwritten artifact can be recovered; old versions
        expire after 30 days) and with server access logs in a bucket of this stack (SSE-S3: S3 delivers no
        access logs to a KMS bucket)."""
        logs = SecureBucket(self, "ArtifactAccessLogs").bucket
        artifacts: s3.CfnBucket = self.pipeline.pipeline.artifact_bucket.node.default_child
        # On the L1 properties themselves (not overrides): cdk-nag and checkov read what the template says.
        artifacts.versioning_configuration = s3.CfnBucket.VersioningConfigurationProperty(status="Enabled")
        artifacts.lifecycle_configuration = s3.CfnBucket.LifecycleConfigurationProperty(
            rules=[
                s3.CfnBucket.RuleProperty(
                    id="expire-noncurrent-versions",
                    status="Enabled",
                    noncurrent_version_expiration=s3.CfnBucket.NoncurrentVersionExpirationProperty(noncurrent_days=30),
                )
            ]
        )
        artifacts.logging_configuration = s3.CfnBucket.LoggingConfigurationProperty(
            destination_bucket_name=logs.bucket_name, log_file_prefix="pipeline-artifacts/"
        )
        logs.add_to_resource_policy(
            iam.PolicyStatement(
                sid="S3ServerAccessLogs",
                principals=[iam.ServicePrincipal("logging.s3.amazonaws.com")],
                actions=["s3:PutObject"],
                resources=[logs.arn_for_objects("pipeline-artifacts/*")],
                conditions={"StringEquals": {"aws:SourceAccount": self.account}},
            )
        )

    def _use_connection_with_its_own_prefix(self) -> None:
        """CDK grants ``codestar-connections:UseConnection``; an ``arn:aws:codeconnections:`` connection needs
        the action with the same service prefix (IAM matches the prefix against the ARN's)."""
        for policy in (c for c in self.pipeline.node.find_all() if isinstance(c, iam.CfnPolicy)):
            statements = self.resolve(policy.policy_document)["Statement"]
            for index, statement in enumerate(statements):
                if statement.get("Action") == LEGACY_USE_CONNECTION:
                    arn = statement["Resource"]
                    prefix = arn.split(":")[2] if isinstance(arn, str) else "codestar-connections"
                    policy.add_property_override(f"PolicyDocument.Statement.{index}.Action", f"{prefix}:UseConnection")

    def _acknowledge_generated_findings(self) -> None:
        """CDK Pipelines generates its roles and artifact store; acknowledge what cdk-nag says of them.

        Each policy gets exactly the IAM5 findings its own document has (read from the resolved document),
        each with the reason of its kind: the same CDK-made statements recur in most, not in all.
        """
        pipeline = self.pipeline.pipeline
        values = {"region": self.region, "account": self.account, "artifacts": logical_id(pipeline.artifact_bucket)}
        reasons = {finding.format(**values): reason for finding, reason in _PIPELINE_FINDINGS.items()}
        for resource in self.pipeline.node.find_all():
            if isinstance(resource, codebuild.CfnProject):
                project = self.get_logical_id(resource)
                reasons.update(
                    {finding.format(project=project, **values): reason for finding, reason in _PROJECT_FINDINGS.items()}
                )
        for region, support in pipeline.cross_region_support.items():
            bucket = self.resolve(support.replication_bucket.bucket_name)
            reasons[f"AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::{bucket}/*]"] = (
                f"The pipeline replicates its artifacts to {region} (the DR stack) through this bucket's objects."
            )
            acknowledge(support.stack, "AwsSolutions-S1", _REPLICATION_BUCKET_REASON)
        for policy in (c for c in self.pipeline.node.find_all() if isinstance(c, iam.CfnPolicy)):
            for finding in wildcard_findings(self.resolve(policy.policy_document)):
                if finding in reasons:  # anything else stays a finding and fails the synth
                    acknowledge(policy, finding, reasons[finding])


def _nag_text(value: object) -> str:
    """A resolved IAM value as cdk-nag prints it in a finding (``<Logical.Arn>``, ``<AWS::Partition>``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return separator.join(_nag_text(part) for part in parts)
    if isinstance(value, dict) and "Ref" in value:
        return f"<{value['Ref']}>"
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        return "<" + ".".join(value["Fn::GetAtt"]) + ">"
    return str(value)


def wildcard_findings(document: dict) -> list[str]:
    """The AwsSolutions-IAM5 findings of a resolved policy document: each wildcard action and resource."""
    found: list[str] = []
    for statement in document.get("Statement", []):
        if statement.get("Effect") != "Allow":
            continue
        for key, kind in (("Action", "Action"), ("Resource", "Resource")):
            values = statement.get(key, [])
            for value in values if isinstance(values, list) else [values]:
                text = _nag_text(value)
                finding = f"AwsSolutions-IAM5[{kind}::{text}]"
                if "*" in text and finding not in found:
                    found.append(finding)
    return found


_ARTIFACTS = "CDK Pipelines grants its roles read/write on the pipeline's own artifact bucket and key."
_PIPELINE_FINDINGS: dict[str, str] = {
    **{
        f"AwsSolutions-IAM5[Action::{action}]": _ARTIFACTS
        for action in (
            "s3:Abort*",
            "s3:DeleteObject*",
            "s3:GetBucket*",
            "s3:GetObject*",
            "s3:List*",
            "kms:GenerateDataKey*",
            "kms:ReEncrypt*",
        )
    },
    "AwsSolutions-IAM5[Resource::<{artifacts}.Arn>/*]": _ARTIFACTS,
    "AwsSolutions-IAM5[Resource::*]": (
        "CDK Pipelines' asset-publishing and self-mutation roles call CloudFormation describe APIs and "
        "sts:AssumeRole on the bootstrap roles; these actions support no narrower resource."
    ),
    "AwsSolutions-IAM5[Resource::arn:*:iam::{account}:role/*]": (
        "Self-mutation assumes the CDK bootstrap deploy roles of this account (cdk-*-deploy-role-*)."
    ),
    "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:{region}:{account}:log-group:/aws/codebuild/*]": (
        "The asset-publishing CodeBuild projects write logs to their own /aws/codebuild/* groups."
    ),
    "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:codebuild:{region}:{account}:report-group/*]": (
        "The asset-publishing CodeBuild projects may publish reports to their own report groups."
    ),
}

_CODEBUILD_LOGS = "arn:<AWS::Partition>:logs:{region}:{account}:log-group:/aws/codebuild"
_PROJECT_FINDINGS: dict[str, str] = {
    "AwsSolutions-IAM5[Resource::" + _CODEBUILD_LOGS + "/<{project}>:*]": (
        "A CodeBuild project writes its log streams in its own log group."
    ),
    "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:codebuild:{region}:{account}:report-group/<{project}>-*]": (
        "A CodeBuild project publishes test reports to its own report groups."
    ),
}
_REPLICATION_BUCKET_REASON = "CodePipeline's cross-region replication bucket holds only transient pipeline artifacts."
