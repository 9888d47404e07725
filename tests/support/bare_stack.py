"""A bare stack for one construct's own synth test, and the cdk-nag audit over it."""

from __future__ import annotations

from pathlib import Path

from aws_cdk import App, Environment, Stack

from infrastructure.application import cdk_json_context
from infrastructure.nag import AUDIT_CONTEXT, audit_acknowledgments

ACCOUNT = "111111111111"
REGION = "eu-west-1"


def bare_stack(outdir: Path) -> tuple[App, Stack]:
    """An app in audit mode (acknowledgments recorded, not applied) with one environment-bound stack."""
    app = App(context={**cdk_json_context(), AUDIT_CONTEXT: True}, outdir=str(outdir))
    return app, Stack(app, "S", env=Environment(account=ACCOUNT, region=REGION))


def assert_nag_clean(app: App) -> None:
    """Synthesize; every cdk-nag finding acknowledged, every acknowledgment used."""
    app.synth()
    audit = audit_acknowledgments(app)
    assert audit.unacknowledged == [], audit.unacknowledged
    assert audit.unmatched == [], audit.unmatched
