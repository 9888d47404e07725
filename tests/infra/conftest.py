"""The whole app, synthesized once per test session; every infra test reads this one assembly."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.synth import SynthesizedApp

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")


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
    """A stage with two streams (tests/support/streaming_stage.py), synthesized once per session."""
    from tests.support.streaming_stage import build_streaming_stage

    return build_streaming_stage(
        tmp_path_factory.mktemp("streaming-config"), tmp_path_factory.mktemp("streaming-cdk.out")
    )


@pytest.fixture(scope="session")
def lake_formation_template(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The DataLake template of a configuration with consumers and views (tests/support/lake_formation_stage.py)."""
    from tests.support.lake_formation_stage import build_lake_formation_template

    return build_lake_formation_template(tmp_path_factory.mktemp("lf-config"), tmp_path_factory.mktemp("lf-cdk.out"))


@pytest.fixture(scope="session")
def emr_stage(tmp_path_factory: pytest.TempPathFactory):
    """A stage with one cadence on EMR Serverless (tests/support/emr_stage.py), synthesized once per session."""
    from tests.support.emr_stage import build_emr_stage

    return build_emr_stage(tmp_path_factory.mktemp("emr-config"), tmp_path_factory.mktemp("emr-cdk.out"))
