"""The whole app, synthesized once per test session; every infra test reads this one assembly."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")


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
        return {k: v for k, v in template["Resources"].items() if v["Type"] == resource_type}

    def role_statements(self, template: dict[str, Any], role_logical: str) -> list[dict[str, Any]]:
        """Every statement of the policies attached to one role (by its logical id)."""
        return [
            statement
            for policy in self.resources(template, "AWS::IAM::Policy").values()
            if {"Ref": role_logical} in policy["Properties"]["Roles"]
            for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        ]


def _stacks(assembly: Any) -> Iterator[Any]:
    yield from assembly.stacks
    for nested in assembly.nested_assemblies:
        yield from _stacks(nested.nested_assembly)


@pytest.fixture(scope="session")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> SynthesizedApp:
    """Build and synthesize the app (all environments, all pipelines) with cdk-nag; fails on any finding."""
    from infrastructure.application import build_app

    outdir = tmp_path_factory.mktemp("cdk.out")
    app = build_app(outdir=str(outdir))
    assembly = app.synth()
    templates: dict[str, dict[str, Any]] = {}
    regions: dict[str, str] = {}
    files: dict[str, Path] = {}
    for stack in _stacks(assembly):
        templates[stack.hierarchical_id] = json.loads(Path(stack.template_full_path).read_text(encoding="utf-8"))
        regions[stack.hierarchical_id] = stack.environment.region
        files[stack.hierarchical_id] = Path(stack.template_full_path)
    data_lakes = {}
    pipelines = {}
    for path, template in templates.items():
        parts = path.split("/")
        if len(parts) == 1 and parts[0].endswith("-pipeline"):
            pipelines[parts[0].removeprefix("odp-").removesuffix("-pipeline")] = template
        if parts[-1] == "DataLake":
            data_lakes[parts[-2].lower()] = template
    return SynthesizedApp(
        outdir=outdir,
        templates=templates,
        data_lakes=data_lakes,
        pipelines=pipelines,
        regions=regions,
        files=files,
        nag_runs=app.odp_nag.runs,
    )


@pytest.fixture(scope="session")
def config(repo_root: Path):
    from odp.config.loader import load_config

    return load_config(repo_root / "config")


@pytest.fixture(scope="session")
def streaming_stage(tmp_path_factory: pytest.TempPathFactory):
    """A stage with two streams (tests/infra/streaming_stage.py), synthesized once per session."""
    from tests.infra.streaming_stage import build_streaming_stage

    return build_streaming_stage(
        tmp_path_factory.mktemp("streaming-config"), tmp_path_factory.mktemp("streaming-cdk.out")
    )
