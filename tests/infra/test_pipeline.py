"""Pipelines: one per branch, from the configured connection, make test before synth, approval for prod."""

from __future__ import annotations

import json

from infrastructure.deploy_access import config_loader_role_name


def _pipeline(template: dict) -> dict:
    (pipeline,) = [r for r in template["Resources"].values() if r["Type"] == "AWS::CodePipeline::Pipeline"]
    return pipeline["Properties"]


def test_each_pipeline_reads_its_branch_through_the_connection(synthesized, config) -> None:
    for env, template in synthesized.pipelines.items():
        settings = config.environments.environments[env]
        source = _pipeline(template)["Stages"][0]["Actions"][0]
        assert source["ActionTypeId"]["Provider"] == "CodeStarSourceConnection"
        assert source["Configuration"]["BranchName"] == settings.branch
        assert source["Configuration"]["ConnectionArn"] == config.environments.source.connection_arn
        assert source["Configuration"]["FullRepositoryId"] == config.environments.source.repository


def test_synth_runs_make_test_then_synthesizes_only_its_branch(synthesized, config) -> None:
    for env, template in synthesized.pipelines.items():
        branch = config.environments.environments[env].branch
        projects = [r["Properties"] for r in template["Resources"].values() if r["Type"] == "AWS::CodeBuild::Project"]
        specs = [p["Source"]["BuildSpec"] for p in projects if "make test" in p["Source"].get("BuildSpec", "")]
        assert len(specs) == 1
        commands = json.loads(specs[0])["phases"]["build"]["commands"]
        assert commands == ["make test", f"npx cdk synth --quiet -c branch={branch}"]


def test_cross_account_keys_and_manual_approval_only_where_configured(synthesized, config) -> None:
    for env, template in synthesized.pipelines.items():
        properties = _pipeline(template)
        stores = (
            [properties["ArtifactStore"]]
            if "ArtifactStore" in properties
            else [store["ArtifactStore"] for store in properties["ArtifactStores"]]
        )
        assert stores
        assert all(store["EncryptionKey"]["Type"] == "KMS" for store in stores)  # cross-account keys
        approvals = [
            action
            for stage in properties["Stages"]
            for action in stage["Actions"]
            if action["ActionTypeId"]["Category"] == "Approval"
        ]
        assert bool(approvals) is config.environments.environments[env].manual_approval
    assert config.environments.environments["prod"].manual_approval


def test_post_deploy_step_loads_config_and_smoke_checks(synthesized, config) -> None:
    for env, template in synthesized.pipelines.items():
        account = config.environments.environments[env].account
        specs = [
            r["Properties"]["Source"].get("BuildSpec", "")
            for r in template["Resources"].values()
            if r["Type"] == "AWS::CodeBuild::Project"
        ]
        post = [json.loads(s) for s in specs if "odp.config load" in s]
        assert len(post) == 1
        commands = post[0]["phases"]["build"]["commands"]
        assert f"python -m odp.config load --env {env}" in " ".join(commands)
        assert f"python -m infrastructure.smoke --env {env}" in " ".join(commands)
        assert f"arn:aws:iam::{account}:role/{config_loader_role_name(env)}" in " ".join(commands)


def test_config_loader_role_trusts_only_the_deployment_account(synthesized, config) -> None:
    deployment = config.environments.deployment.account
    for env, template in synthesized.data_lakes.items():
        roles = [
            r["Properties"]
            for r in template["Resources"].values()
            if r["Type"] == "AWS::IAM::Role" and r["Properties"].get("RoleName") == config_loader_role_name(env)
        ]
        assert len(roles) == 1
        (statement,) = roles[0]["AssumeRolePolicyDocument"]["Statement"]
        assert deployment in json.dumps(statement["Principal"])
        assert statement["Action"] == "sts:AssumeRole"
