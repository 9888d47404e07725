"""cdk-nag: the plugin that runs over the app, acknowledgment helpers, and the audit of acknowledgments.

Each acknowledgment names the rule (and finding), the one resource or the construct that owns it, and
why. With the context key ``AUDIT_CONTEXT`` set, :func:`acknowledge` records the acknowledgment in the
construct's metadata instead of making it, so :func:`audit_acknowledgments` can run cdk-nag over an app
whose findings are all visible and compare both lists: an acknowledgment that matches no finding would
hide a future one, and a finding without an acknowledgment would fail the synth.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jsii
from aws_cdk import Acknowledgment, IPolicyValidationPlugin, Stack, Validations
from cdk_nag import AwsSolutionsChecks
from constructs import IConstruct

AUDIT_CONTEXT = "odp:nag-audit"
AUDIT_METADATA = "odp:nag-acknowledgment"


@jsii.implements(IPolicyValidationPlugin)
class CountingNagPlugin:
    """cdk-nag's AwsSolutions pack as the app's validation plugin, counting its runs (a test checks that
    the synth really ran it: a plugin that never runs reports no finding either)."""

    def __init__(self, pack: AwsSolutionsChecks) -> None:
        self._pack = pack
        self.runs = 0

    @property
    def name(self) -> str:
        return self._pack.name

    @property
    def version(self) -> str | None:
        return self._pack.version

    @property
    def rule_ids(self) -> list[str] | None:
        return self._pack.rule_ids

    def validate(self, context: Any) -> Any:
        self.runs += 1
        return self._pack.validate(context)


def acknowledge(scope: IConstruct, rule: str, reason: str) -> None:
    """Acknowledge one cdk-nag finding on ``scope`` (a resource, or the construct that owns it)."""
    if scope.node.try_get_context(AUDIT_CONTEXT):
        scope.node.add_metadata(AUDIT_METADATA, {"rule": rule, "reason": reason})
        return
    Validations.of(scope).acknowledge(Acknowledgment(id=rule, reason=reason))


def logical_id(construct: IConstruct) -> str:
    """The CloudFormation logical id of a resource (or of an L2's default child), as cdk-nag prints it."""
    resource = construct.node.default_child or construct
    return Stack.of(construct).get_logical_id(resource)


def acknowledge_many(scope: IConstruct, findings: dict[str, str], **values: str) -> None:
    """Acknowledge each ``finding -> reason`` on ``scope``; ``{name}`` in a finding is filled from ``values``."""
    for finding, reason in findings.items():
        acknowledge(scope, finding.format(**values), reason)


CUSTOM_RESOURCE_SINGLETON = "AWS679f53fac002430cb0da5b7982bd2287"  # CDK's fixed id of AwsCustomResource's Lambda
_CUSTOM_RESOURCE_FINDINGS = {
    # (no AwsSolutions-L1: this CDK's singleton runs the latest Node.js runtime; the bare-stack audit would flag it)
    "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]": (
        "CDK's AwsCustomResource singleton uses the basic execution role for its logs."
    ),
}


def acknowledge_custom_resource_singleton(stack: Stack) -> None:
    """The findings of CDK's AwsCustomResource Lambda (one per stack, shared by every AwsCustomResource), with
    reasons; call it after creating an AwsCustomResource."""
    singleton = stack.node.try_find_child(CUSTOM_RESOURCE_SINGLETON)
    if singleton is not None:
        acknowledge_many(singleton, _CUSTOM_RESOURCE_FINDINGS)


@dataclass(frozen=True)
class NagAudit:
    """``unmatched``: acknowledgments no finding needs; ``unacknowledged``: findings no acknowledgment covers.
    Each entry is ``<construct path>: <rule[finding]>``."""

    findings: int
    acknowledgments: int
    unmatched: list[str]
    unacknowledged: list[str]


def _covers(ack_path: str, finding_path: str) -> bool:
    return finding_path == ack_path or finding_path.startswith(ack_path + "/")


def audit_acknowledgments(app: IConstruct) -> NagAudit:
    """Run cdk-nag over an app built with ``AUDIT_CONTEXT`` (and synthesized) and compare its findings with
    the recorded acknowledgments."""
    report = AwsSolutionsChecks().validate_scope(app)
    findings = [
        (violation.rule_name, resource.construct_path)
        for violation in report.violations
        for resource in violation.violating_resources
    ]
    acknowledgments = [
        (construct.node.path, entry.data["rule"])
        for construct in app.node.find_all()
        for entry in construct.node.metadata
        if entry.type == AUDIT_METADATA
    ]
    unmatched = sorted(
        {
            f"{path}: {rule}"
            for path, rule in acknowledgments
            if not any(rule == found and _covers(path, where) for found, where in findings)
        }
    )
    unacknowledged = sorted(
        {
            f"{where}: {found}"
            for found, where in findings
            if not any(rule == found and _covers(path, where) for path, rule in acknowledgments)
        }
    )
    return NagAudit(len(findings), len(acknowledgments), unmatched, unacknowledged)
