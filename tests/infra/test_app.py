"""The app as a whole: what it synthesizes, cdk-nag, cfn-lint, IAM wildcards, ASL placeholders."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from infrastructure.application import selected_environments
from odp.contracts.state_machines import placeholders_in
from tests.support.synth import CFN_LINT_IGNORED

DATA_SERVICES = ("s3:", "kms:", "dynamodb:")


def test_every_environment_has_a_data_lake_and_a_pipeline(synthesized, config) -> None:
    names = set(config.environments.environments)
    assert set(synthesized.data_lakes) == names
    assert set(synthesized.pipelines) == {n for n, e in config.environments.environments.items() if e.branch}


def test_cfn_lint_finds_no_error_nor_informational_finding_in_any_template(synthesized, repo_root: Path) -> None:
    by_region: dict[str, list[str]] = {}
    for path, file in synthesized.files.items():
        by_region.setdefault(synthesized.regions[path], []).append(str(file))
    problems = []
    for region, files in by_region.items():
        result = subprocess.run(
            [
                str(repo_root / ".venv" / "bin" / "cfn-lint"),
                "--format",
                "json",
                *files,  # before the options that take several values
                "--include-checks",
                "I",  # informational findings too (I3510: an action whose prefix does not match the ARN's)
                "--regions",
                region,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.stdout.strip(), result.stderr
        for match in json.loads(result.stdout):
            rule = match["Rule"]["Id"]
            if match["Level"] in ("Error", "Informational") or (
                match["Level"] == "Warning" and rule not in CFN_LINT_IGNORED
            ):
                problems.append(f"{Path(match['Filename']).name}: {rule} {match['Message']}")
    assert problems == []


def _iam_statements(template: dict):
    for logical, resource in template["Resources"].items():
        kind = resource["Type"]
        props = resource.get("Properties", {})
        documents = []
        if kind in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
            documents.append(props["PolicyDocument"])
        elif kind == "AWS::IAM::Role":
            documents.extend(policy["PolicyDocument"] for policy in props.get("Policies", []))
        for document in documents:
            statements = document["Statement"]
            for statement in statements if isinstance(statements, list) else [statements]:
                yield logical, statement


def _as_list(value) -> list:
    return value if isinstance(value, list) else [value]


def iam_wildcard_violations(templates: dict[str, dict], data_stacks: set[str] | None = None) -> list[str]:
    """Allow statements with Action "*" (any stack), or with Resource "*" on S3, KMS or DynamoDB
    actions (in ``data_stacks``, default all)."""
    found = []
    for path, template in templates.items():
        check_data = data_stacks is None or path in data_stacks
        for logical, statement in _iam_statements(template):
            if statement.get("Effect") != "Allow":
                continue
            actions = _as_list(statement.get("Action", []))
            resources = _as_list(statement.get("Resource", []))
            if "*" in actions:
                found.append(f"{path}/{logical}: Action *")
            data_actions = [a for a in actions if isinstance(a, str) and a.startswith(DATA_SERVICES)]
            if check_data and "*" in resources and data_actions:
                found.append(f"{path}/{logical}: Resource * for {data_actions}")
    return found


def test_no_iam_statement_allows_everything_or_every_data_resource(synthesized) -> None:
    # Data buckets, keys and tables live in the environment accounts: every stack of a stage. The
    # pipeline stacks (deployment account, no data) keep CDK Pipelines' own s3:ListBucket / kms on
    # "*" for bootstrap buckets and cross-region replication keys; Action "*" is checked everywhere.
    stage_stacks = {path for path in synthesized.templates if "/" in path}
    assert stage_stacks
    assert iam_wildcard_violations(synthesized.templates, stage_stacks) == []


def test_the_wildcard_check_catches_both_kinds() -> None:
    template = {
        "Resources": {
            "P": {
                "Type": "AWS::IAM::Policy",
                "Properties": {
                    "PolicyDocument": {
                        "Statement": [
                            {"Effect": "Allow", "Action": "*", "Resource": "arn:aws:s3:::b"},
                            {"Effect": "Allow", "Action": ["kms:Decrypt"], "Resource": "*"},
                            {"Effect": "Allow", "Action": ["xray:PutTraceSegments"], "Resource": "*"},
                        ]
                    }
                },
            }
        }
    }
    assert iam_wildcard_violations({"s": template}) == ["s/P: Action *", "s/P: Resource * for ['kms:Decrypt']"]


def test_every_placeholder_of_every_asl_file_is_substituted(synthesized, emr_stage, repo_root: Path) -> None:
    """Each (job kind, engine) file is deployed as written, every placeholder filled: the shipped app's on Glue, the
    EMR Serverless stage's (tests/support/emr_stage.py) on both engines."""
    files = {path: path.read_text(encoding="utf-8") for path in (repo_root / "stepfunctions").glob("*.asl.json")}
    assert files
    machines = [
        (machine["Properties"], synthesized.asset_text)
        for template in synthesized.data_lakes.values()
        for machine in synthesized.resources(template, "AWS::StepFunctions::StateMachine").values()
    ] + [
        (machine["Properties"], emr_stage.asset_text)
        for machine in emr_stage.template["Resources"].values()
        if machine["Type"] == "AWS::StepFunctions::StateMachine"
    ]
    used = set()
    for props, asset_text in machines:
        definition = asset_text(props["DefinitionS3Location"]["Key"])
        source = next((p for p, text in files.items() if text == definition), None)
        assert source is not None, "a state machine definition is not one of the ASL files as written"
        used.add(source)
        assert placeholders_in(definition) == set(props["DefinitionSubstitutions"]), source.name
    assert used == set(files), f"ASL files no state machine loads: {sorted(set(files) - used)}"


@pytest.mark.parametrize(
    ("branch", "expected"), [(None, ["dev", "test", "prod"]), ("main", ["dev"]), ("prod", ["prod"])]
)
def test_branch_context_selects_one_pipeline(config, branch, expected) -> None:
    assert selected_environments(config, branch) == expected


def test_unknown_branch_is_a_clear_error(config) -> None:
    with pytest.raises(ValueError, match="no environment deploys from branch 'feature/x'"):
        selected_environments(config, "feature/x")


def test_templates_hold_no_account_id_but_their_own(synthesized, config) -> None:
    accounts = {e.account for e in config.environments.environments.values()} | {config.environments.deployment.account}
    for path, template in synthesized.templates.items():
        text = json.dumps(template)
        found = set(re.findall(r"\b\d{12}\b", text))
        assert found <= accounts, f"{path} mentions unknown account ids {found - accounts}"
