"""ODP's image for EMR Serverless, built by ``cdk deploy`` and copied into ODP's own ECR repository.

EMR 7.x's image runs Python 3.9 and has neither pydantic (a compiled core ``--py-files`` cannot load) nor PyYAML;
ODP's jobs need Python 3.11 with both, as on Glue 5. The image (``infrastructure/jobs/engines/emr_image/Dockerfile``)
is the
release's own (``public.ecr.aws/emr-serverless/spark/<release>:latest``) plus ``python3.11``, the **same
wheels** the Glue jobs install and the **same jar of Hudi extensions** the Glue jobs load with ``--extra-jars``
(at :data:`EXTENSIONS_JAR_IN_IMAGE`): the build context is the Dockerfile, the content of the Glue zip of wheels
(``wheels/requirements.txt``, written from :data:`infrastructure.assets.PYTHON_DEPENDENCIES`, and the wheels) and the
jar, so there is one pin list for those. boto3 and botocore, which Glue ships and the release's image has only for its
Python 3.9, are installed from PyPI at the pins of ``requirements.txt`` (the Dockerfile names them).

- **asset**: a ``DockerImageAsset`` (a synth needs no Docker; ``cdk deploy`` builds and pushes it into the CDK
  bootstrap repository, whose policy is the bootstrap's, not ODP's).
- **repository** ``odp-<env>-emr-spark``: KMS-encrypted with the given key, scan on push, immutable tags, a
  lifecycle rule keeping the newest ``keep_images``; the image is copied there under the asset's hash by
  ``cdk-ecr-deployment`` (a custom resource whose role reads the bootstrap repository and writes this one only), one
  copy per tag, and the tag deleted when its copy leaves the stack (``Custom::OdpImageTag``), so a rolled-back deploy
  can be retried (docs/decisions/028).
- **pull permission** (:meth:`EmrImage.allow_pulls`): the repository policy EMR Serverless needs (AWS's "Customizing
  an EMR Serverless image"): ``emr-serverless.amazonaws.com`` may ``ecr:BatchGetImage``, ``ecr:DescribeImages`` and
  ``ecr:GetDownloadUrlForLayer`` only from the application (``aws:SourceArn``). The policy names the application
  and the application names the image, so the policy is set after the application is created (an
  ``AwsCustomResource`` calling ``ecr:SetRepositoryPolicy``); the application pulls only when it starts, with the
  first job run after the deployment.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from aws_cdk import RemovalPolicy, Stack
from aws_cdk import aws_ecr as ecr
from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import custom_resources as cr
from cdk_ecr_deployment import DockerImageName, ECRDeployment
from constructs import Construct

from infrastructure.assets import GLUE_EXTENSIONS_JAR, GLUE_WHEELS_DIR, GlueArtifacts, inputs_hash
from infrastructure.nag import acknowledge_custom_resource_singleton, acknowledge_many
from odp.naming import EMR_IMAGE_REPOSITORY, environment_resource_name

DOCKERFILE = Path(__file__).resolve().parent / "emr_image" / "Dockerfile"
# Where the image holds ODP's jar of Hudi extensions (the Dockerfile's COPY; the job runs' class path names it).
EXTENSIONS_JAR_IN_IMAGE = f"/usr/lib/odp/{GLUE_EXTENSIONS_JAR}"
SERVICE = "emr-serverless.amazonaws.com"
# What EMR Serverless does with a custom image (AWS's "Customizing an EMR Serverless image": repository policy).
PULL_ACTIONS = ("ecr:BatchGetImage", "ecr:DescribeImages", "ecr:GetDownloadUrlForLayer")
_READ_ACTIONS = ("ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer")
# The copy function's memory. It streams each layer of a multi-GB image from the asset repository into ODP's, digesting
# it on the way, inside Lambda's 15-minute maximum (the construct's fixed timeout); Lambda gives CPU in proportion to
# memory (a whole vCPU from 1,769 MB), and the default 512 MB gets under a third of one (docs/decisions/028).
# Changing it replaces the function (one per memory size), which sends the current copy an Update that pushes its tag
# again and fails: change it together with the image.
COPY_MEMORY_MB = 2048
TAG_ID_CHARS = 16  # of the image tag (the asset hash) in the copy's construct id
_WRITE_ACTIONS = (
    "ecr:DescribeImages",
    "ecr:InitiateLayerUpload",
    "ecr:UploadLayerPart",
    "ecr:CompleteLayerUpload",
    "ecr:PutImage",
)


def image_context(dockerfile: Path, artifacts: GlueArtifacts) -> Path:
    """The Docker build context (built once per input): ``Dockerfile``, ``wheels/`` unpacked from the Glue zip
    of wheels and ODP's jar of Hudi extensions (the Glue jobs' ``--extra-jars``), in a folder beside the Glue asset
    folder named by the hash of the three."""
    wheels_zip = artifacts.directory / artifacts.wheels_zip
    jar = artifacts.directory / artifacts.extensions_jar
    cache = artifacts.directory.parent
    final = cache / f"emr-image-{inputs_hash(cache, [wheels_zip, jar], [dockerfile.read_text(encoding='utf-8')])}"
    if final.is_dir():
        return final
    build = Path(tempfile.mkdtemp(prefix="emr-image-build-", dir=cache))
    shutil.copyfile(dockerfile, build / "Dockerfile")
    shutil.copyfile(jar, build / GLUE_EXTENSIONS_JAR)
    with zipfile.ZipFile(wheels_zip) as archive:
        for name in archive.namelist():
            if name.startswith(f"{GLUE_WHEELS_DIR}/") and not name.endswith("/"):
                target = build / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(archive.read(name))
    try:
        os.replace(build, final)
    except OSError:  # a concurrent synth published the same folder first
        shutil.rmtree(build, ignore_errors=True)
    return final


@dataclass(frozen=True)
class EmrImageProps:
    """The image of one environment.

    Attributes:
        environment: the environment's name (the repository is ``odp-<env>-emr-spark``).
        artifacts: the Glue asset folder; its zip of wheels is what the image installs.
        release_label: the EMR release whose image is the base (``emr-7.12.0``).
        key: the KMS key encrypting the repository.
        keep_images: images the lifecycle rule keeps (the newest; default 5). The application's image is the
            newest copy; a tag is deleted when its copy leaves the stack, so the rule bounds what a failed cleanup left.
        removal_policy: of the repository (kept by default).
    """

    environment: str
    artifacts: GlueArtifacts
    release_label: str
    key: kms.IKey
    keep_images: int = 5
    removal_policy: RemovalPolicy = RemovalPolicy.RETAIN


class EmrImage(Construct):
    """The asset, ODP's repository, the copy into it, and (:meth:`allow_pulls`) the repository policy.

    Attributes:
        asset: the DockerImageAsset (built by ``cdk deploy``).
        repository: ODP's repository.
        copy: the ECRDeployment; whatever uses :attr:`image_uri` must depend on it.
        image_uri: the image in ODP's repository, tagged with the asset's hash.
    """

    def __init__(self, scope: Construct, construct_id: str, props: EmrImageProps) -> None:
        super().__init__(scope, construct_id)
        self.props = props
        self.asset = ecr_assets.DockerImageAsset(
            self,
            "Asset",
            directory=str(image_context(DOCKERFILE, props.artifacts)),
            build_args={"RELEASE_LABEL": props.release_label},
            platform=ecr_assets.Platform.LINUX_AMD64,  # the application's architecture (X86_64)
        )
        self.repository = ecr.Repository(
            self,
            "Repository",
            repository_name=environment_resource_name(props.environment, EMR_IMAGE_REPOSITORY),
            encryption=ecr.RepositoryEncryption.KMS,
            encryption_key=props.key,
            image_scan_on_push=True,
            image_tag_mutability=ecr.TagMutability.IMMUTABLE,
            lifecycle_rules=[ecr.LifecycleRule(max_image_count=props.keep_images, tag_status=ecr.TagStatus.ANY)],
            removal_policy=props.removal_policy,
            empty_on_delete=props.removal_policy == RemovalPolicy.DESTROY,  # dev's teardown deletes its images too
        )
        if props.removal_policy == RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE:
            # Deleted only by the rollback of the create that made it (its one image is that create's copy): emptied
            # first, or the rollback fails and blocks the retry (docs/decisions/028). CDK allows the prop with DESTROY.
            self.repository.node.default_child.empty_on_delete = True
        # No KMS permission for the copy or for EMR Serverless: ECR encrypts and decrypts through the grant it adds
        # to the key when it creates the repository (AWS's "Encryption at rest" for ECR).
        self.image_uri = self.repository.repository_uri_for_tag(self.asset.image_tag)
        role = iam.Role(
            self,
            "CopyRole",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description="Copies ODP's EMR Serverless image from the CDK asset repository into ODP's repository",
            managed_policies=[
                iam.ManagedPolicy.from_aws_managed_policy_name("service-role/AWSLambdaBasicExecutionRole")
            ],
        )
        role.add_to_policy(iam.PolicyStatement(actions=["ecr:GetAuthorizationToken"], resources=["*"]))
        role.add_to_policy(
            iam.PolicyStatement(actions=list(_READ_ACTIONS), resources=[self.asset.repository.repository_arn])
        )
        role.add_to_policy(
            iam.PolicyStatement(actions=[*_READ_ACTIONS, *_WRITE_ACTIONS], resources=[self.repository.repository_arn])
        )
        # The construct adds ecr:* and s3:GetObject on "*" to its role; an immutable view keeps only the above.
        # One copy per image tag (its id carries the tag), so CloudFormation never sends a copy an Update (a rollback
        # re-sends the old properties), and a tag lives only as long as its copy: ECR refuses to push an existing
        # immutable tag again, even the same image, and the copy function pushes without looking (docs/decisions/028).
        suffix = self.asset.image_tag[:TAG_ID_CHARS]
        self.copy = ECRDeployment(
            self,
            f"Copy{suffix}",
            src=DockerImageName(self.asset.image_uri),
            dest=DockerImageName(self.image_uri),
            role=role.without_policy_updates(),
            memory_limit=COPY_MEMORY_MB,
        )
        self._forget_with_its_copy(f"ForgetCopy{suffix}")
        acknowledge_many(
            role,
            {
                "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
                "AWSLambdaBasicExecutionRole]": "The copy function writes its own logs only.",
                "AwsSolutions-IAM5[Resource::*]": (
                    "ecr:GetAuthorizationToken supports no resource-level permission; the image reads and writes are "
                    "limited to the CDK asset repository and ODP's repository."
                ),
            },
        )

    def _on_repository(self, actions: list[str]) -> cr.AwsCustomResourcePolicy:
        """A custom resource's role: ``actions`` on ODP's repository only."""
        statement = iam.PolicyStatement(actions=actions, resources=[self.repository.repository_arn])
        return cr.AwsCustomResourcePolicy.from_statements([statement])

    def _forget_with_its_copy(self, construct_id: str) -> None:
        """Created after the copy, so deleted before it: when the copy leaves the stack (the rollback of the deploy
        that made it, or the cleanup after the next image) the tag is deleted, and a retry can push it again. Its
        create checks that the tag is there."""
        stack = Stack.of(self)
        name, tag = self.repository.repository_name, self.asset.image_tag
        image = {"repositoryName": name, "imageIds": [{"imageTag": tag}]}
        forget = cr.AwsCustomResource(
            self,
            construct_id,
            resource_type="Custom::OdpImageTag",
            on_create=cr.AwsSdkCall(
                service="ECR",
                action="describeImages",
                parameters=image,
                physical_resource_id=cr.PhysicalResourceId.of(f"{self.props.environment}-emr-spark:{tag}"),
                output_paths=["imageDetails.0.imageDigest"],
            ),
            on_delete=cr.AwsSdkCall(
                service="ECR",
                action="batchDeleteImage",  # an absent tag is a failure entry in the answer, not an error
                parameters=image,
                ignore_error_codes_matching="RepositoryNotFoundException",
            ),
            policy=self._on_repository(["ecr:DescribeImages", "ecr:BatchDeleteImage"]),
            install_latest_aws_sdk=False,
        )
        forget.node.add_dependency(self.copy)
        acknowledge_custom_resource_singleton(stack)

    def allow_pulls(self, application_arn: str) -> cr.AwsCustomResource:
        """Set the repository policy: EMR Serverless may pull the image for ``application_arn`` only."""
        document = iam.PolicyDocument(
            statements=[
                iam.PolicyStatement(
                    sid="EmrServerlessCustomImage",
                    principals=[iam.ServicePrincipal(SERVICE)],
                    actions=list(PULL_ACTIONS),
                    conditions={"StringEquals": {"aws:SourceArn": application_arn}},
                )
            ]
        )
        stack = Stack.of(self)
        name = self.repository.repository_name
        policy = cr.AwsCustomResource(
            self,
            "PullPolicy",
            on_update=cr.AwsSdkCall(
                service="ECR",
                action="setRepositoryPolicy",
                parameters={"repositoryName": name, "policyText": stack.to_json_string(document.to_json())},
                physical_resource_id=cr.PhysicalResourceId.of(f"{self.props.environment}-emr-spark-pull-policy"),
            ),
            on_delete=cr.AwsSdkCall(
                service="ECR",
                action="deleteRepositoryPolicy",
                parameters={"repositoryName": name},
                ignore_error_codes_matching="RepositoryNotFoundException|RepositoryPolicyNotFoundException",
            ),
            policy=self._on_repository(["ecr:SetRepositoryPolicy", "ecr:DeleteRepositoryPolicy"]),
            install_latest_aws_sdk=False,
        )
        acknowledge_custom_resource_singleton(stack)
        return policy
