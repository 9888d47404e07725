"""The synthesized app on disk: templates by stack, environments, assets."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class SynthesizedApp:
    """The cloud assembly on disk: every template by stack path, and the environment stacks by name."""

    outdir: Path
    templates: dict[str, dict[str, Any]]  # stack path (e.g. odp-dev-pipeline/Dev/DataLake) -> template
    data_lakes: dict[str, dict[str, Any]]  # environment name -> its DataLake template
    pipelines: dict[str, dict[str, Any]]  # environment name -> its pipeline template
    regions: dict[str, str]  # stack path -> region
    files: dict[str, Path]  # stack path -> template file
    nag_runs: int  # how often cdk-nag's plugin validated the app during the synth

    def asset_text(self, file_name: str) -> str:
        """A file asset of the assembly (e.g. a state machine definition), by its staged file name."""
        matches = list(self.outdir.rglob(f"asset.{file_name}"))
        if not matches:
            raise FileNotFoundError(f"asset {file_name} not in {self.outdir}")
        return matches[0].read_text(encoding="utf-8")

    def resources(self, template: dict[str, Any], resource_type: str) -> dict[str, dict[str, Any]]:
        return resources_of(template, resource_type)

    def role_statements(self, template: dict[str, Any], role_logical: str) -> list[dict[str, Any]]:
        """Every statement of the policies attached to one role (by its logical id)."""
        return role_statements_of(template, role_logical)


def resources_of(template: dict[str, Any], resource_type: str) -> dict[str, dict[str, Any]]:
    """The template's resources of one type, by logical id."""
    return {k: v for k, v in template["Resources"].items() if v["Type"] == resource_type}


def role_statements_of(template: dict[str, Any], role_logical: str) -> list[dict[str, Any]]:
    """Every statement of the policies attached to one role (by its logical id): its inline DefaultPolicy and the
    OverflowPolicy<n> managed policies CDK moves statements into when the inline one grows too large."""
    return [
        statement
        for kind in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy")
        for policy in resources_of(template, kind).values()
        if {"Ref": role_logical} in policy["Properties"].get("Roles", [])
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]


# cfn-lint rules ignored, and why:
#   W3005 (DependsOn already enforced by a reference): CDK adds explicit DependsOn on roles and
#   policies it also references; harmless, and not ours to change. (Only warnings are ignored:
#   every error and informational finding fails the test.) W3010 (hard-coded AZ) no longer occurs:
#   each Glue connection takes its subnet's AZ by GetAtt.
CFN_LINT_IGNORED = ("W3005",)


def cfn_lint_problems(template: dict[str, Any], folder: Path, region: str = "eu-west-1") -> list[str]:
    """cfn-lint (the pinned one of .venv) over one template: every error, and every warning not ignored."""
    import json
    import subprocess
    import sys

    file = folder / "template.json"
    file.write_text(json.dumps(template), encoding="utf-8")
    cfn_lint = Path(sys.executable).parent / "cfn-lint"
    result = subprocess.run(
        [str(cfn_lint), "--format", "json", str(file), "--regions", region], capture_output=True, text=True, check=False
    )
    if not result.stdout.strip():
        raise RuntimeError(f"cfn-lint gave no report: {result.stderr}")
    return [
        f"{match['Rule']['Id']} {match['Message']}"
        for match in json.loads(result.stdout)
        if match["Level"] == "Error" or (match["Level"] == "Warning" and match["Rule"]["Id"] not in CFN_LINT_IGNORED)
    ]
