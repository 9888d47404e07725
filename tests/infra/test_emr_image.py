"""ODP's EMR Serverless image (infrastructure/jobs/engines/emr_image.py): the Dockerfile installs exactly the Glue jobs' pins on
the release's image, boto3 at requirements.txt's pins, every package the EMR job entry points import, and ODP's
extensions jar; the build context carries the Glue zip of wheels' requirements.txt and the jar; the construct on a bare
stack (repository, copy, pull policy) with the cdk-nag audit. Docker is not run: the image build itself is not
exercised here (no Docker on the test machines)."""

from __future__ import annotations

import importlib.metadata
import json
import re
import shlex
import zipfile
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import RemovalPolicy
from aws_cdk import aws_kms as kms
from aws_cdk.assertions import Match, Template

from infrastructure.assets import GLUE_EXTENSIONS_JAR, GLUE_WHEELS_ZIP, PYTHON_DEPENDENCIES, GlueArtifacts
from infrastructure.jobs.engines.emr_image import (
    DOCKERFILE,
    EXTENSIONS_JAR_IN_IMAGE,
    EmrImage,
    EmrImageProps,
    image_context,
)
from infrastructure.jobs.engines.emr_serverless import PYTHON, RELEASE_LABEL
from odp.config.models import EngineName
from odp.contracts.job_kinds import kinds_on
from tests.support.bare_stack import ACCOUNT, REGION, assert_nag_clean, bare_stack
from tests.support.imports import third_party_imports
from tests.support.paths import REPO_ROOT

APPLICATION_ARN = f"arn:aws:emr-serverless:{REGION}:{ACCOUNT}:/applications/00abc"


def _instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile: comments dropped, continuation lines joined."""
    joined = re.sub(r"\\\n", " ", "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")))
    found = []
    for line in joined.splitlines():
        if line.strip():
            instruction, _, arguments = line.strip().partition(" ")
            found.append((instruction.upper(), " ".join(arguments.split())))
    return found


def _pip_installs(instructions: list[tuple[str, str]]) -> list[list[str]]:
    """The arguments of every ``pip install`` in the RUN instructions (each command of a ``&&`` chain)."""
    installs = []
    for instruction, arguments in instructions:
        if instruction != "RUN":
            continue
        for command in arguments.split("&&"):
            words = shlex.split(command)
            if "pip" in words and "install" in words:
                installs.append(words[words.index("install") + 1 :])
    return installs


def _glue_artifacts(folder: Path, requirements: str) -> GlueArtifacts:
    folder.mkdir(parents=True)
    with zipfile.ZipFile(folder / GLUE_WHEELS_ZIP, "w") as archive:
        archive.writestr("wheels/requirements.txt", requirements)
        archive.writestr("wheels/PyYAML-6.0.3-cp311-cp311-manylinux2014_x86_64.whl", b"wheel")
    (folder / GLUE_EXTENSIONS_JAR).write_bytes(b"jar of " + folder.name.encode())
    return GlueArtifacts(directory=folder, script=None, library="odp_etl.zip", wheels_zip=GLUE_WHEELS_ZIP, wheels=())


def _named(install: list[str]) -> list[str]:
    """The requirements a pip install names on its command line (not options, not their values)."""
    valued = ("-r", "--find-links")
    return [word for i, word in enumerate(install) if not word.startswith("-") and install[i - 1] not in valued]


def _requirements_txt() -> dict[str, str]:
    """requirements.txt's pins: canonical distribution name -> ``name==version`` as written there."""
    pins = {}
    for line in (REPO_ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
        pin = line.split("#", 1)[0].strip()
        if "==" in pin:
            pins[_canonical(pin.split("==")[0].split("[")[0])] = pin
    return pins


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_the_dockerfile_builds_on_the_release_installs_the_glue_wheels_offline_and_pins_the_rest() -> None:
    instructions = _instructions(DOCKERFILE.read_text(encoding="utf-8"))
    assert instructions[0] == ("ARG", "RELEASE_LABEL")  # no default: the release is spelled in emr_serverless.py
    assert instructions[1] == ("FROM", "public.ecr.aws/emr-serverless/spark/${RELEASE_LABEL}:latest")
    users = [arguments for instruction, arguments in instructions if instruction == "USER"]
    assert users == ["root", "hadoop:hadoop"]
    assert instructions[-1] == ("USER", "hadoop:hadoop")
    copies = [arguments.split() for instruction, arguments in instructions if instruction == "COPY"]
    assert copies == [["wheels/", "/tmp/odp-wheels/"], [GLUE_EXTENSIONS_JAR, EXTENSIONS_JAR_IN_IMAGE]]
    offline, online = _pip_installs(instructions)
    # the Glue jobs' wheels: offline, from the copied wheels, exactly the requirements file and nothing besides it
    assert "--no-index" in offline
    assert offline[offline.index("--find-links") + 1] == copies[0][1].rstrip("/")
    assert offline[offline.index("-r") + 1] == f"{copies[0][1]}requirements.txt"
    assert _named(offline) == []
    # what Glue ships and the wheels do not: pinned exactly as requirements.txt pins it
    assert "--no-index" not in online
    pins = _requirements_txt()
    for requirement in _named(online):
        assert requirement == pins.get(_canonical(requirement.split("==")[0])), requirement
    assert ("ENV", f"PYSPARK_PYTHON={PYTHON}") in instructions
    assert any(instruction == "RUN" and "python3.11" in arguments.split() for instruction, arguments in instructions)


def test_the_image_python_has_every_package_the_emr_job_entry_points_import() -> None:
    """The image's install list (the Glue wheels' requirements file and the Dockerfile's named pins) against the
    third-party imports of the EMR entry point and of every job kind it runs, read from the code through etl/ and
    odp/ (functions' lazy imports included). Not counted: the standard library, pyspark and its py4j (the release's
    Spark provides both to the driver and the executors), awsglue (only ``etl.engine.glue`` imports it, when the job
    runs on Glue)."""
    roots = ["etl.jobs.emr_serverless", *(kind.entry_module for kind in kinds_on(EngineName.EMR_SERVERLESS))]
    imported = third_party_imports(roots, own=("etl", "odp"))
    provided = {"pyspark", "py4j"}
    glue_only = {"awsglue": {"etl.engine.glue"}}
    for name, modules in glue_only.items():
        assert imported.pop(name, set()) <= modules, f"{name} is imported outside {modules}"
    distributions = importlib.metadata.packages_distributions()
    needed = {_canonical(dist) for name in set(imported) - provided for dist in distributions.get(name, [name])}
    installs = _pip_installs(_instructions(DOCKERFILE.read_text(encoding="utf-8")))
    installed = {_canonical(pin.split("==")[0]) for pin in [*PYTHON_DEPENDENCIES, *_named(installs[-1])]}
    missing = sorted(needed - installed)
    assert not missing, f"the image's python3.11 lacks {missing}, imported by " + "; ".join(
        f"{name}: {sorted(imported[name])[:3]}"
        for name in imported
        if {_canonical(d) for d in distributions.get(name, [name])} & set(missing)
    )
    assert {"boto3", "botocore", "pydantic", "pyyaml"} <= needed  # the walk found what the jobs are known to use


def test_the_build_context_holds_the_dockerfile_the_glue_wheels_and_the_extensions_jar(tmp_path) -> None:
    artifacts = _glue_artifacts(tmp_path / "glue-1", "pydantic==2.14.3\nPyYAML==6.0.3\n")
    context = image_context(DOCKERFILE, artifacts)
    assert (context / "Dockerfile").read_bytes() == DOCKERFILE.read_bytes()
    assert (context / GLUE_EXTENSIONS_JAR).read_bytes() == b"jar of glue-1"
    assert (context / "wheels" / "requirements.txt").read_text() == "pydantic==2.14.3\nPyYAML==6.0.3\n"
    assert sorted(p.name for p in (context / "wheels").iterdir()) == [
        "PyYAML-6.0.3-cp311-cp311-manylinux2014_x86_64.whl",
        "requirements.txt",
    ]
    assert image_context(DOCKERFILE, artifacts) == context  # built once
    other = image_context(DOCKERFILE, _glue_artifacts(tmp_path / "glue-2", "pydantic==2.14.3\n"))
    assert other != context  # other wheels, another context
    jar = _glue_artifacts(tmp_path / "glue-3", "pydantic==2.14.3\nPyYAML==6.0.3\n")
    assert image_context(DOCKERFILE, jar) not in (context, other)  # another jar, another context


def test_the_staged_image_installs_the_pins_of_the_glue_jobs(emr_stage) -> None:
    """In the EMR stage's cloud assembly: the staged build context's requirements.txt is the Glue pins, the
    Dockerfile is ours, and the build argument is the application's release."""
    images = [
        (path.parent, image)
        for path in Path(emr_stage.outdir).rglob("*.assets.json")
        for image in json.loads(path.read_text()).get("dockerImages", {}).values()
    ]
    ((folder, image),) = images
    source = image["source"]
    assert source["dockerBuildArgs"] == {"RELEASE_LABEL": RELEASE_LABEL}
    assert source.get("platform") == "linux/amd64"
    staged = folder / source["directory"]
    assert (staged / "Dockerfile").read_bytes() == DOCKERFILE.read_bytes()
    assert (staged / "wheels" / "requirements.txt").read_text().split() == list(PYTHON_DEPENDENCIES)
    assert (staged / GLUE_EXTENSIONS_JAR).is_file()


def _image(tmp_path, removal_policy: RemovalPolicy = RemovalPolicy.RETAIN) -> tuple[Any, Template, EmrImage]:
    app, stack = bare_stack(tmp_path / "out")
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    image = EmrImage(
        stack,
        "Image",
        EmrImageProps(
            environment="x",
            artifacts=_glue_artifacts(tmp_path / "glue", "\n".join(PYTHON_DEPENDENCIES) + "\n"),
            release_label=RELEASE_LABEL,
            key=key,
            removal_policy=removal_policy,
        ),
    )
    image.allow_pulls(APPLICATION_ARN)
    return app, Template.from_stack(stack), image


def test_emr_image_on_a_bare_stack(tmp_path) -> None:
    app, template, _ = _image(tmp_path)
    template.has_resource(
        "AWS::ECR::Repository",
        {
            "Properties": {
                "RepositoryName": "odp-x-emr-spark",
                "EncryptionConfiguration": {
                    "EncryptionType": "KMS",
                    "KmsKey": {"Fn::GetAtt": [Match.any_value(), "Arn"]},
                },
                "ImageScanningConfiguration": {"ScanOnPush": True},
                "ImageTagMutability": "IMMUTABLE",
                "LifecyclePolicy": Match.object_like(
                    {"LifecyclePolicyText": Match.string_like_regexp("imageCountMoreThan")}
                ),
                "RepositoryPolicyText": Match.absent(),
            },
            "DeletionPolicy": "Retain",
        },
    )
    template.resource_count_is("Custom::CDKECRDeployment", 1)
    template.resource_count_is("Custom::AWS", 1)
    template.resource_count_is("Custom::OdpImageTag", 1)
    assert_nag_clean(app)


def test_the_copy_role_reads_the_asset_repository_and_writes_only_odps(tmp_path) -> None:
    _, template, _ = _image(tmp_path)
    (role,) = [
        logical
        for logical, role in template.find_resources("AWS::IAM::Role").items()
        if "Copies ODP's EMR Serverless image" in role["Properties"].get("Description", "")
    ]
    statements = [
        statement
        for policy in template.find_resources("AWS::IAM::Policy").values()
        if {"Ref": role} in policy["Properties"]["Roles"]
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]
    wildcard = [s for s in statements if s["Resource"] == "*"]
    assert [s["Action"] for s in wildcard] == ["ecr:GetAuthorizationToken"]  # none of the construct's own "*"
    writes = {"ecr:PutImage", "ecr:InitiateLayerUpload", "ecr:UploadLayerPart", "ecr:CompleteLayerUpload"}
    for statement in statements:
        actions = set(statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]])
        if actions & writes:
            assert statement["Resource"] == {"Fn::GetAtt": [_repository(template), "Arn"]}
    assert not any(s["Action"] == "s3:GetObject" for s in statements)


def _repository(template: Template) -> str:
    (logical,) = template.find_resources("AWS::ECR::Repository")
    return logical


@pytest.mark.parametrize(
    ("removal_policy", "deletion_policy"),
    [(RemovalPolicy.DESTROY, "Delete"), (RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE, "RetainExceptOnCreate")],
)
def test_a_repository_that_can_be_deleted_is_emptied_first(tmp_path, removal_policy, deletion_policy) -> None:
    """dev (destroy): a teardown deletes the repository with its images (ECR refuses to delete a repository that
    holds images). retain: only the rollback of the create that made it deletes it, and it holds that create's copy."""
    _, template, _ = _image(tmp_path, removal_policy)
    template.has_resource(
        "AWS::ECR::Repository",
        {"Properties": Match.object_like({"EmptyOnDelete": True}), "DeletionPolicy": deletion_policy},
    )


def test_the_copy_function_is_sized_for_a_multi_gigabyte_image(tmp_path) -> None:
    _, template, _ = _image(tmp_path)
    functions = template.find_resources("AWS::Lambda::Function", {"Properties": {"Handler": "bootstrap"}})
    assert [f["Properties"]["MemorySize"] for f in functions.values()] == [
        2048
    ]  # a whole vCPU from 1,769 MB; the construct gives 512
    assert [f["Properties"]["Timeout"] for f in functions.values()] == [900]  # Lambda's maximum


def test_each_tag_has_its_own_copy_and_is_deleted_with_it(tmp_path) -> None:
    """A rollback re-sends an updated resource its old properties, and ECR refuses to push an existing immutable tag
    again: the copy is one resource per tag (never updated), and the tag is deleted before its copy leaves the stack
    (the rollback of the deploy that made it, or the cleanup after the next one), so a retry can push it again."""
    _, template, image = _image(tmp_path)
    tag = image.asset.image_tag
    ((copy_id, copy),) = template.find_resources("Custom::CDKECRDeployment").items()
    assert copy_id.startswith(f"ImageCopy{tag[:16]}")
    assert copy["Properties"]["DestImage"]["Fn::Join"][1][-1].endswith(f":{tag}")
    ((_, forget),) = template.find_resources("Custom::OdpImageTag").items()
    assert copy_id in forget["DependsOn"]  # created after the copy, deleted before it
    image_ids = [{"imageTag": tag}]
    delete = json.loads(_joined(forget["Properties"]["Delete"]))
    assert (delete["service"], delete["action"]) == ("ECR", "batchDeleteImage")
    assert delete["parameters"]["imageIds"] == image_ids
    create = json.loads(_joined(forget["Properties"]["Create"]))
    assert (create["action"], create["parameters"]["imageIds"]) == ("describeImages", image_ids)


def _joined(value: Any) -> str:
    """A Create/Delete property: a string, or an Fn::Join with the repository's Ref rendered as ${Ref}."""
    if isinstance(value, str):
        return value
    separator, parts = value["Fn::Join"]
    return separator.join(p if isinstance(p, str) else "${" + str(p.get("Ref")) + "}" for p in parts)
