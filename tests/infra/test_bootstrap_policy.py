"""The scoped CloudFormation execution policy offered for `cdk bootstrap` of the target accounts
(infrastructure/bootstrap/execution-policy.json) names the service of every resource type the stages create: the
environments of config/, and the stages with Lake Formation consumers and with EMR Serverless."""

from __future__ import annotations

import json
from typing import Any

from tests.support.paths import REPO_ROOT

POLICY = REPO_ROOT / "infrastructure" / "bootstrap" / "execution-policy.json"
# A resource type's IAM service prefix where it is not the type's service name in lower case.
PREFIXES = {"StepFunctions": "states", "EMRServerless": "emr-serverless"}
# CloudFormation invokes a custom resource's function as the execution role.
CUSTOM = "lambda"
NOT_A_RESOURCE = {"AWS::CDK::Metadata"}  # CDK's analytics: written into the template, created by no service


def _service(resource_type: str) -> str:
    if resource_type.startswith("Custom::") or resource_type == "AWS::CloudFormation::CustomResource":
        return CUSTOM
    service = resource_type.split("::")[1]
    return PREFIXES.get(service, service.lower())


def _allowed_services() -> set[str]:
    document = json.loads(POLICY.read_text(encoding="utf-8"))
    services = set()
    for statement in document["Statement"]:
        assert statement["Effect"] == "Allow"
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        services |= {action.split(":")[0] for action in actions}
    return services


def _types(*templates: dict[str, Any]) -> set[str]:
    return {r["Type"] for t in templates for r in t["Resources"].values()} - NOT_A_RESOURCE


def test_the_policy_covers_every_service_the_stages_create(synthesized, lake_formation_template, emr_stage) -> None:
    stages = [t for path, t in synthesized.templates.items() if "/" in path]  # not the pipeline stacks themselves
    types = _types(*stages, lake_formation_template, emr_stage.template)
    assert "AWS::EMRServerless::Application" in types  # the fixtures are in
    assert any(t.startswith("AWS::LakeFormation::") for t in types)
    missing = sorted(f"{kind} ({_service(kind)})" for kind in types if _service(kind) not in _allowed_services())
    assert missing == []


def test_the_policy_is_not_administrator_access() -> None:
    document = json.loads(POLICY.read_text(encoding="utf-8"))
    actions = [
        a for s in document["Statement"] for a in (s["Action"] if isinstance(s["Action"], list) else [s["Action"]])
    ]
    assert "*" not in actions
    assert not [a for a in actions if a.startswith("iam:") and ("*" in a or "User" in a or "Group" in a)]
    # IAM managed policies hold at most 6,144 characters, whitespace excluded.
    assert len("".join(POLICY.read_text(encoding="utf-8").split())) <= 6144
