"""checkov on synthesized cloud assemblies, and the audit of its findings against the one suppression file.

:func:`run_checkov` runs the pinned program (``ODP_CHECKOV``, which the Makefile points at
``.cache/checkov/bin/checkov``) once over the given cdk.out folders, CloudFormation checks only, and
returns every failed check. :func:`audit` splits them: findings no suppression explains, and suppressions
that explain no finding (stale: the resource was fixed or renamed, so the reason no longer applies),
both of which fail the test, as the cdk-nag audit (infrastructure/nag.py) does.
"""

from __future__ import annotations

import fnmatch
import json
import os
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.support.paths import REPO_ROOT

SUPPRESSIONS = REPO_ROOT / "infrastructure" / "checkov_suppressions.yaml"
DEFAULT_CHECKOV = REPO_ROOT / ".cache" / "checkov" / "bin" / "checkov"


@dataclass(frozen=True)
class Finding:
    """One failed check: its id and name, the resource (``<Type>.<logical id>``) and the template file."""

    check: str
    name: str
    resource: str
    file: str

    def __str__(self) -> str:
        return f"{self.check} ({self.name}) on {self.resource} in {self.file}"


@dataclass(frozen=True)
class Suppression:
    """A recorded reason for every finding of ``check`` on a resource matching ``resource`` (fnmatch)."""

    check: str
    resource: str
    reason: str

    def explains(self, finding: Finding) -> bool:
        return finding.check == self.check and fnmatch.fnmatchcase(finding.resource, self.resource)


@dataclass(frozen=True)
class CheckovRun:
    findings: list[Finding]
    passed: int
    resources: int
    parsing_errors: int


def checkov_program() -> Path:
    """The checkov program.

    Raises:
        FileNotFoundError: not installed (``make setup`` installs it).
    """
    program = Path(os.environ.get("ODP_CHECKOV", DEFAULT_CHECKOV))
    if not program.is_file():
        raise FileNotFoundError(f"checkov not found at {program}: run `make setup` (requirements-checkov.txt)")
    return program


def run_checkov(folders: Iterable[Path]) -> CheckovRun:
    """checkov over the CloudFormation templates of ``folders`` (one process, quiet, JSON).

    Raises:
        RuntimeError: checkov itself failed (not: it found something).
    """
    command = [str(checkov_program())]
    for folder in folders:
        command += ["-d", str(folder)]
    command += ["--framework", "cloudformation", "--quiet", "--compact", "--soft-fail", "-o", "json"]
    command += ["--skip-download"]  # no platform, no download of external checks: the pinned version's checks
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"checkov exited {done.returncode}: {done.stderr[-2000:]}")
    reports: list[Any] = []
    decoder, text, at = json.JSONDecoder(), done.stdout, 0
    while text[at:].strip():  # one JSON document per folder, one after the other (a list when several checks)
        document, at = decoder.raw_decode(text, len(text) - len(text[at:].lstrip()))
        reports += document if isinstance(document, list) else [document]
    findings: list[Finding] = []
    passed = resources = parsing_errors = 0
    for report in reports:
        summary = report["summary"]
        passed += summary["passed"]
        resources += summary["resource_count"]
        parsing_errors += summary["parsing_errors"]
        findings += [
            Finding(f["check_id"], f["check_name"], f["resource"], Path(f["file_path"]).name)
            for f in report["results"]["failed_checks"]
        ]
    return CheckovRun(findings, passed, resources, parsing_errors)


def load_suppressions(path: Path = SUPPRESSIONS) -> list[Suppression]:
    """The suppression file: a list of {check, resource, reason}; a reason is required."""
    entries = yaml.safe_load(path.read_text(encoding="utf-8"))
    suppressions = [Suppression(e["check"], e["resource"], e["reason"].strip()) for e in entries]
    for suppression in suppressions:
        if not suppression.reason:
            raise ValueError(f"{path.name}: {suppression.check} on {suppression.resource} has no reason")
    return suppressions


def audit(findings: Iterable[Finding], suppressions: Iterable[Suppression]) -> tuple[list[Finding], list[Suppression]]:
    """(findings no suppression explains, suppressions that explain no finding)."""
    findings, suppressions = list(findings), list(suppressions)
    unexplained = [f for f in findings if not any(s.explains(f) for s in suppressions)]
    stale = [s for s in suppressions if not any(s.explains(f) for f in findings)]
    return unexplained, stale
