"""IAM's limits on a job role's policies (infrastructure/policy_limits.py): the catalog grants of many databases are
cut into statements that each fit a managed policy, every policy CDK makes of them is within IAM's size once its
tokens resolve to their longest values, and a role past IAM's managed policies a role is refused at synth."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Environment, Stack
from aws_cdk import aws_iam as iam

from infrastructure.jobs.job_role import grant_catalog_sync, job_role
from infrastructure.policy_limits import (
    CDK_TOKEN_ARN_ESTIMATE,
    MANAGED_POLICIES_PER_ROLE,
    arn_characters,
    resource_chunks,
)
from tests.support.bare_stack import ACCOUNT, REGION, assert_nag_clean, bare_stack

# IAM's sizes (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html), written here, not
# imported: the test checks the module against them.
MANAGED_POLICY_CHARACTERS = 6_144
INLINE_CHARACTERS = 10_240
LONGEST = {"AWS::Partition": "aws-us-gov", "AWS::Region": "ap-southeast-3", "AWS::AccountId": "123456789012"}


def resolved(value: Any) -> Any:
    """A policy document with its pseudo parameters at their longest and each Fn::Join joined."""
    if isinstance(value, dict):
        if set(value) == {"Ref"} and value["Ref"] in LONGEST:
            return LONGEST[value["Ref"]]
        if set(value) == {"Fn::Join"}:
            separator, parts = value["Fn::Join"]
            return separator.join(str(resolved(part)) for part in parts)
        return {key: resolved(item) for key, item in value.items()}
    if isinstance(value, list):
        return [resolved(item) for item in value]
    return value


def characters(document: Any) -> int:
    """IAM's count: the document's JSON without whitespace."""
    return len(re.sub(r"\s", "", json.dumps(resolved(document))))


def synthesized_role(databases: int) -> dict[str, Any]:
    app = App()
    stack = Stack(app, "Limits", env=Environment(account="123456789012", region="eu-west-1"))
    role = job_role(stack, "JobRole", iam.ServicePrincipal("glue.amazonaws.com"), description="test")
    grant_catalog_sync(role, [f"source_{number:04d}_raw" for number in range(databases)])
    return app.synth().get_stack_by_name("Limits").template


def test_resources_are_cut_into_statements_that_fit_the_budget_as_cdk_counts_them() -> None:
    arns = [f"arn:aws:glue:eu-west-1:123456789012:table/source_{n:04d}_raw/*" for n in range(500)]
    chunks = resource_chunks(arns, budget=1_000)
    assert [arn for chunk in chunks for arn in chunk] == arns
    assert all(sum(len(arn) + 3 for arn in chunk) <= 1_000 for chunk in chunks)
    assert len(chunks) == -(-500 // (1_000 // (len(arns[0]) + 3)))  # as full as the budget allows
    with_token = Stack(App(), "Agnostic").format_arn(service="glue", resource="catalog")  # an unknown partition
    assert arn_characters(with_token) == CDK_TOKEN_ARN_ESTIMATE + 3
    with pytest.raises(ValueError, match="alone is longer than a statement's 100 characters"):
        resource_chunks(["arn:aws:glue:eu-west-1:123456789012:table/" + "x" * 100 + "/*"], budget=100)


def test_the_catalog_grants_of_150_databases_fit_iams_sizes() -> None:
    template = synthesized_role(150)
    managed = [r for r in template["Resources"].values() if r["Type"] == "AWS::IAM::ManagedPolicy"]
    inline = [r for r in template["Resources"].values() if r["Type"] == "AWS::IAM::Policy"]
    assert 1 <= len(managed) <= MANAGED_POLICIES_PER_ROLE  # CDK moved statements out of the inline policy
    for policy in managed:
        assert characters(policy["Properties"]["PolicyDocument"]) <= MANAGED_POLICY_CHARACTERS
    assert sum(characters(p["Properties"]["PolicyDocument"]) for p in inline) <= INLINE_CHARACTERS
    granted = json.dumps(resolved([r["Properties"]["PolicyDocument"] for r in [*managed, *inline]]))
    assert all(f":table/source_{n:04d}_raw/*" in granted for n in range(150))  # every database, none lost


def test_a_role_past_iams_managed_policies_is_refused_at_synth() -> None:
    with pytest.raises(Exception, match=r"need \d+ managed policies, over IAM's 10 a role .* several sources"):
        synthesized_role(400)


def test_with_a_database_prefix_any_number_of_databases_is_one_statement_of_the_prefix(tmp_path: Path) -> None:
    """environments.yaml's database_prefix (every database starts with it, refused at load otherwise): 1,000
    databases, four times the refusal's count, are granted by ``source_*`` in the role's inline policy alone."""
    app, stack = bare_stack(tmp_path)
    role = job_role(stack, "JobRole", iam.ServicePrincipal("glue.amazonaws.com"), description="test")
    grant_catalog_sync(role, [f"source_{number:04d}_raw" for number in range(1_000)], prefix="source_")
    assert_nag_clean(app)  # the prefix's findings acknowledged, and no acknowledgment left over
    template = app.synth().get_stack_by_name("S").template
    policies = [
        r for r in template["Resources"].values() if r["Type"].startswith("AWS::IAM::") and "Policy" in r["Type"]
    ]
    assert [p["Type"] for p in policies] == ["AWS::IAM::Policy"]  # no overflow managed policy
    statements = {s["Sid"]: s for s in resolved(policies[0]["Properties"]["PolicyDocument"])["Statement"]}
    catalog = f"arn:aws:glue:{REGION}:{ACCOUNT}"
    assert statements["GlueCatalogSync"]["Resource"] == [
        f"{catalog}:catalog",
        f"{catalog}:database/default",
        f"{catalog}:database/source_*",
        f"{catalog}:table/source_*/*",
    ]
    assert statements["CanaryTableRemoval"]["Resource"] == [
        f"{catalog}:catalog",
        f"{catalog}:database/source_*",
        f"{catalog}:table/source_*/_odp_canary_*",
    ]
    assert "source_0000_raw" not in json.dumps(template)
