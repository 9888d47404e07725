"""Pipelines: one per branch, from the configured connection, make test before synth, approval for prod."""

from __future__ import annotations

import json

from infrastructure.operations.deploy_access import config_loader_role_name, post_deploy_role_name
from infrastructure.pipeline import CDK_ASSETS_VERSION, CDK_CLI_VERSION


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
        assert f"python -m odp smoke --env {env}" in " ".join(commands)
        assert commands[-1].endswith(f"python -m odp canary --env {env}")  # after load and smoke
        # the consumers' grants on tables that exist by now, right after the configuration (docs/decisions/030)
        (load,) = [i for i, c in enumerate(commands) if "python -m odp.config load" in c]
        assert commands[load + 1].endswith(f"python -m odp lake-grants --env {env} --yes")
        assert f"arn:aws:iam::{account}:role/{config_loader_role_name(env)}" in " ".join(commands)


def test_config_loader_role_trusts_only_the_post_deploy_role(synthesized, config) -> None:
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
        assert statement["Condition"] == {
            "ArnEquals": {
                "aws:PrincipalArn": {
                    "Fn::Join": [
                        "",
                        ["arn:", {"Ref": "AWS::Partition"}, f":iam::{deployment}:role/{post_deploy_role_name(env)}"],
                    ]
                }
            }
        }
        if env in synthesized.pipelines:
            roles = [
                r["Properties"]
                for r in synthesized.pipelines[env]["Resources"].values()
                if r["Type"] == "AWS::IAM::Role" and r["Properties"].get("RoleName") == post_deploy_role_name(env)
            ]
            assert len(roles) == 1, env


def test_config_loader_may_scan_the_three_config_tables(synthesized) -> None:
    # odp.config.manager scans table_config, batch_config and dataset_config before it writes (item 2 of issue 10).
    for env, template in synthesized.data_lakes.items():
        (role_logical,) = [
            logical
            for logical, r in template["Resources"].items()
            if r["Type"] == "AWS::IAM::Role" and r["Properties"].get("RoleName") == config_loader_role_name(env)
        ]
        tables = {
            r["Properties"]["TableName"]: logical
            for logical, r in template["Resources"].items()
            if r["Type"] == "AWS::DynamoDB::GlobalTable"
        }
        statements = synthesized.role_statements(template, role_logical)
        for table in (f"odp-{env}-table-config", f"odp-{env}-batch-config", f"odp-{env}-dataset-config"):
            arn = {"Fn::GetAtt": [tables[table], "Arn"]}
            assert any(
                "dynamodb:Scan" in s["Action"] and (s["Resource"] == arn or arn in s["Resource"]) for s in statements
            ), (env, table)


def test_source_role_uses_the_connection_with_the_arns_service_prefix(synthesized, config) -> None:
    connection = config.environments.source.connection_arn
    prefix = connection.split(":")[2]
    for template in synthesized.pipelines.values():
        actions = [
            statement["Action"]
            for resource in template["Resources"].values()
            if resource["Type"] == "AWS::IAM::Policy"
            for statement in resource["Properties"]["PolicyDocument"]["Statement"]
            if statement.get("Resource") == connection
        ]
        assert actions == [f"{prefix}:UseConnection"]


def test_pipeline_pins_the_cdk_tools_and_gives_synth_a_large_machine(synthesized) -> None:
    for template in synthesized.pipelines.values():
        projects = [r["Properties"] for r in template["Resources"].values() if r["Type"] == "AWS::CodeBuild::Project"]
        text = "\n".join(p["Source"].get("BuildSpec", "") for p in projects)
        assert f"aws-cdk@{CDK_CLI_VERSION}" in text  # self-mutation
        assert f"cdk-assets@{CDK_ASSETS_VERSION}" in text  # asset publishing
        assert "@latest" not in text
        synth = [p for p in projects if "make test" in p["Source"].get("BuildSpec", "")]
        assert [p["Environment"]["ComputeType"] for p in synth] == ["BUILD_GENERAL1_LARGE"]


def test_config_loader_may_run_the_canary_on_exactly_the_canarys_jobs(synthesized, config) -> None:
    """Every job kind the canary starts (issue 24, item 7), and nothing else."""
    for env, template in synthesized.data_lakes.items():
        (role_logical,) = [
            logical
            for logical, r in template["Resources"].items()
            if r["Type"] == "AWS::IAM::Role" and r["Properties"].get("RoleName") == config_loader_role_name(env)
        ]
        glue = [s for s in synthesized.role_statements(template, role_logical) if "glue:StartJobRun" in s["Action"]]
        assert len(glue) == 1
        assert sorted(glue[0]["Action"]) == ["glue:GetJobRun", "glue:GetJobRuns", "glue:StartJobRun"]
        resources = json.dumps(glue[0]["Resource"])
        for cadence in config.cadences.cadences:
            assert f":job/odp-{env}-file-processor-{cadence}" in resources
        assert f":job/odp-{env}-dataset-job" in resources
        assert len(glue[0]["Resource"]) == len(config.cadences.cadences) + 1


def _deploy_role(account: str, region: str) -> str:
    return f"arn:aws:iam::{account}:role/cdk-hnb659fds-deploy-role-{account}-{region}"


def test_each_stage_first_deletes_a_stack_a_failed_create_left(synthesized, config) -> None:
    """RecoverFailedCreate (docs/decisions/028): before the stage's stacks (after prod's approval), one command per
    stack of the stage in its region, as the target's CDK deploy role; its own role may only assume those roles."""
    for env, template in synthesized.pipelines.items():
        settings = config.environments.environments[env]
        stacks = [(f"{env.title()}-ReplicaKey", settings.dr_region)] if settings.dr_region else []
        stacks.append((f"{env.title()}-DataLake", settings.region))
        roles = sorted({_deploy_role(settings.account, region) for _, region in stacks})
        resources = template["Resources"]
        (stage,) = [s for s in _pipeline(template)["Stages"] if s["Name"] == env.title()]
        actions = {a["Name"]: a for a in stage["Actions"]}
        recovery = actions["RecoverFailedCreate"]
        deploys = [a["RunOrder"] for a in stage["Actions"] if a["ActionTypeId"]["Provider"] == "CloudFormation"]
        assert recovery["RunOrder"] < min(deploys)
        if settings.manual_approval:
            assert actions[f"Approve-{env}"]["RunOrder"] < recovery["RunOrder"]
        project = resources[recovery["Configuration"]["ProjectName"]["Ref"]]["Properties"]
        commands = json.loads(project["Source"]["BuildSpec"])["phases"]["build"]["commands"]
        assert commands == [
            f"python -m odp.operations.stack_recovery --stack {stack} --region {region} "
            f"--role-arn {_deploy_role(settings.account, region)}"
            for stack, region in stacks
        ]
        role = project["ServiceRole"]["Fn::GetAtt"][0]
        statements = [
            s
            for policy in resources.values()
            if policy["Type"] == "AWS::IAM::Policy" and {"Ref": role} in policy["Properties"]["Roles"]
            for s in policy["Properties"]["PolicyDocument"]["Statement"]
        ]
        assumed = [s for s in statements if s["Action"] == "sts:AssumeRole"]
        assert [s["Resource"] if isinstance(s["Resource"], list) else [s["Resource"]] for s in assumed] == [roles]
        acts = {a for s in statements for a in (s["Action"] if isinstance(s["Action"], list) else [s["Action"]])}
        assert not {a for a in acts if a.startswith(("cloudformation:", "iam:"))}  # only through the session policy
