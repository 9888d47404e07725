"""cdk-nag: it runs at every synth, every finding is acknowledged, and every acknowledgment matches a finding.

The audit builds the app a second time with ``AUDIT_CONTEXT`` (acknowledgments recorded, not made), runs
cdk-nag over it and compares: an acknowledgment that matches no finding would hide a future one.
"""

from __future__ import annotations

import json

import pytest
from aws_cdk import Stack
from aws_cdk import aws_s3 as s3

from infrastructure.application import build_app, cdk_json_context, new_app
from infrastructure.nag import AUDIT_CONTEXT, NagAudit, acknowledge, audit_acknowledgments


def test_the_nag_plugin_ran_during_the_synth(synthesized) -> None:
    assert synthesized.nag_runs == 1


def test_cdk_nag_reports_no_unacknowledged_finding(synthesized) -> None:
    # The synth would have raised ValidationFailed; the report on disk must agree.
    report = json.loads((synthesized.outdir / "validation-report.json").read_text(encoding="utf-8"))
    violations = [v for p in report["pluginReports"] for v in p["violations"]]
    assert violations == []


@pytest.fixture(scope="module")
def audit(tmp_path_factory: pytest.TempPathFactory) -> NagAudit:
    app = new_app(context={**cdk_json_context(), AUDIT_CONTEXT: True}, outdir=str(tmp_path_factory.mktemp("audit")))
    build_app(app)
    app.synth()
    return audit_acknowledgments(app)


def test_every_acknowledgment_matches_a_finding_and_every_finding_is_acknowledged(audit) -> None:
    assert audit.findings > 0  # cdk-nag ran over the whole app and found what we acknowledge
    assert audit.unmatched == []
    assert audit.unacknowledged == []


def test_the_audit_reports_both_kinds(tmp_path) -> None:
    app = new_app(context={AUDIT_CONTEXT: True}, outdir=str(tmp_path))
    stack = Stack(app, "S")
    bucket = s3.Bucket(stack, "Bucket", enforce_ssl=True)
    acknowledge(bucket, "AwsSolutions-S1", "access logs: a reason")
    acknowledge(bucket, "AwsSolutions-SQS3", "matches nothing")
    app.synth()
    result = audit_acknowledgments(app)
    assert result.unmatched == ["S/Bucket: AwsSolutions-SQS3"]
    assert result.unacknowledged == []  # S1 acknowledged; nothing else found on an SSL-only bucket
    acknowledged_nothing = new_app(context={AUDIT_CONTEXT: True}, outdir=str(tmp_path / "2"))
    s3.Bucket(Stack(acknowledged_nothing, "S"), "Bucket", enforce_ssl=True)
    acknowledged_nothing.synth()
    assert audit_acknowledgments(acknowledged_nothing).unacknowledged == ["S/Bucket/Resource: AwsSolutions-S1"]
