"""IAM's limits on a role's policies, kept at synth: statements cut to fit a managed policy, and a refusal of a role
that would need more managed policies than IAM attaches.

IAM (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html) takes at most 10,240 characters of
inline policy a role, 6,144 characters a managed policy, and 10 managed policies a role (a quota that can be raised to
20). CDK moves the statements past the inline size into ``OverflowPolicy<n>`` managed policies, statement by
statement: a statement larger than a managed policy fails the deploy, and so does an eleventh managed policy. A role
whose resources grow with the configuration (the jobs' catalog grants: a database each) is granted in statements
cut by :func:`resource_chunks`, and :func:`enforce_managed_policy_limit` refuses the synth before the deploy would.
"""

from __future__ import annotations

from collections.abc import Sequence

import jsii
from aws_cdk import Token
from aws_cdk import aws_iam as iam
from constructs import IValidation

MANAGED_POLICIES_PER_ROLE = 10  # IAM's default quota (an account may raise it to 20)
# What one statement's resources may take: CDK fills each overflow policy (6,144 characters) with whole statements,
# so one statement of this size, its actions (the catalog sync's 16 take about 450 characters), its Sid and the
# document's wrapping fill one managed policy with room to spare.
STATEMENT_RESOURCE_CHARACTERS = 5_200
# How CDK counts an ARN that holds a token (a partition, region or account it does not know): 150 characters
# (``@aws-cdk/aws-iam.arnSizeEstimate``), whatever it resolves to.
CDK_TOKEN_ARN_ESTIMATE = 150


def arn_characters(arn: str) -> int:
    """An ARN's share of a statement as CDK sizes it: its length (a token's: CDK's estimate), its quotes and comma."""
    return (CDK_TOKEN_ARN_ESTIMATE if Token.is_unresolved(arn) else len(arn)) + 3


def resource_chunks(arns: Sequence[str], *, budget: int = STATEMENT_RESOURCE_CHARACTERS) -> list[list[str]]:
    """``arns`` in order, cut into runs of at most ``budget`` characters as CDK sizes them (:func:`arn_characters`):
    one statement each.

    Raises:
        ValueError: one ARN alone is over the budget (it names it).
    """
    chunks: list[list[str]] = []
    size = budget + 1
    for arn in arns:
        length = arn_characters(arn)
        if length > budget:
            raise ValueError(f"the ARN {arn} alone is longer than a statement's {budget} characters")
        if size + length > budget:
            chunks.append([])
            size = 0
        chunks[-1].append(arn)
        size += length
    return chunks


def managed_policy_refusal(role_path: str, count: int, advice: str) -> str | None:
    """Pure: the refusal of a role that CDK gave ``count`` managed policies, or None within IAM's quota."""
    if count <= MANAGED_POLICIES_PER_ROLE:
        return None
    return (
        f"role {role_path}: its statements need {count} managed policies, over IAM's {MANAGED_POLICIES_PER_ROLE} a "
        f"role (6,144 characters each, after 10,240 inline; the deploy would fail): {advice}"
    )


@jsii.implements(IValidation)
class _ManagedPolicyLimit:
    def __init__(self, role: iam.Role, advice: str) -> None:
        self.role, self.advice = role, advice

    def validate(self) -> list[str]:
        count = sum(1 for child in self.role.node.children if isinstance(child, iam.ManagedPolicy))
        refusal = managed_policy_refusal(self.role.node.path, count, self.advice)
        return [] if refusal is None else [refusal]


def enforce_managed_policy_limit(role: iam.Role, advice: str) -> None:
    """Refuse the synth when CDK's split of ``role``'s policy needs more managed policies than IAM attaches. A
    validation, so it counts after CDK's aspects split the policy."""
    role.node.add_validation(_ManagedPolicyLimit(role, advice))
