"""cdk-nag acknowledgments: each one names the rule (and finding), the one resource, and why."""

from __future__ import annotations

from aws_cdk import Acknowledgment, Stack, Validations
from constructs import IConstruct


def acknowledge(scope: IConstruct, rule: str, reason: str) -> None:
    """Acknowledge one cdk-nag finding on ``scope`` (a resource, or the construct that owns it)."""
    Validations.of(scope).acknowledge(Acknowledgment(id=rule, reason=reason))


def logical_id(construct: IConstruct) -> str:
    """The CloudFormation logical id of a resource (or of an L2's default child), as cdk-nag prints it."""
    resource = construct.node.default_child or construct
    return Stack.of(construct).get_logical_id(resource)


def acknowledge_many(scope: IConstruct, findings: dict[str, str], **values: str) -> None:
    """Acknowledge each ``finding -> reason`` on ``scope``; ``{name}`` in a finding is filled from ``values``."""
    for finding, reason in findings.items():
        acknowledge(scope, finding.format(**values), reason)
