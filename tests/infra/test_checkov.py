"""checkov (the ecosystem's independent IaC scanner, pinned in requirements-checkov.txt) on every
environment's synthesized templates, the two-stream stage and the stage with a cadence on EMR Serverless: each failed check carries a recorded reason
in infrastructure/checkov_suppressions.yaml, and each recorded reason still explains a finding.

checkov runs once per session, over both cloud assemblies (tests/support/checkov.py).
"""

from __future__ import annotations

import pytest

from tests.support.checkov import CheckovRun, Finding, Suppression, audit, load_suppressions, run_checkov
from tests.support.streaming_stage import StreamingStage
from tests.support.synth import SynthesizedApp


@pytest.fixture(scope="module")
def checkov_run(synthesized: SynthesizedApp, streaming_stage: StreamingStage, emr_stage: StreamingStage) -> CheckovRun:
    return run_checkov([synthesized.outdir, streaming_stage.outdir, emr_stage.outdir])


def test_checkov_read_every_template(checkov_run: CheckovRun, synthesized: SynthesizedApp) -> None:
    assert checkov_run.parsing_errors == 0
    assert checkov_run.resources > sum(len(t["Resources"]) for t in synthesized.data_lakes.values())
    assert checkov_run.passed > 1000


def test_every_finding_has_a_recorded_reason_and_every_reason_a_finding(checkov_run: CheckovRun) -> None:
    unexplained, stale = audit(checkov_run.findings, load_suppressions())
    assert unexplained == [], "checkov findings without a reason in infrastructure/checkov_suppressions.yaml:\n" + (
        "\n".join(sorted({str(f) for f in unexplained}))
    )
    assert stale == [], "suppressions that match no finding (remove them):\n" + "\n".join(
        f"{s.check} {s.resource}" for s in stale
    )


def test_the_audit_fails_an_unexplained_finding_and_a_stale_suppression() -> None:
    lambda_dlq = Finding("CKV_AWS_116", "DLQ", "AWS::Lambda::Function.FileManagerFunctionA89FB229", "t.json")
    bucket_logs = Finding("CKV_AWS_18", "logs", "AWS::S3::Bucket.PipelineArtifactsBucketAEA9A052", "t.json")
    explains = Suppression("CKV_AWS_116", "AWS::Lambda::Function.FileManagerFunction*", "synchronous invocations")
    stale = Suppression("CKV_AWS_21", "AWS::S3::Bucket.*", "versioned elsewhere")

    assert audit([lambda_dlq, bucket_logs], [explains, stale]) == ([bucket_logs], [stale])


def test_every_suppression_has_a_reason() -> None:
    suppressions = load_suppressions()
    assert suppressions
    assert all(len(s.reason) > 30 for s in suppressions), [s for s in suppressions if len(s.reason) <= 30]
