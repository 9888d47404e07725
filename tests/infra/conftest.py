"""The whole app, synthesized once per test run (shared by the pytest-xdist workers); every infra test reads this one
assembly."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.run_once import once_per_run
from tests.support.synth import SynthesizedApp

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")


def _stacks(assembly: Any) -> Iterator[Any]:
    yield from assembly.stacks
    for nested in assembly.nested_assemblies:
        yield from _stacks(nested.nested_assembly)


SYNTH_MANIFEST = "synth.json"  # what the synth reports beside the assembly: each stack's template and region, nag runs


def _synthesize(folder: Path) -> None:
    """Build and synthesize the app (all environments, all pipelines) with cdk-nag into ``folder``: the cloud assembly
    and :data:`SYNTH_MANIFEST`. Fails on any finding."""
    from infrastructure.application import build_app

    app = build_app(outdir=str(folder / "cdk.out"))
    assembly = app.synth()
    stacks = {
        stack.hierarchical_id: {"region": stack.environment.region, "template": stack.template_full_path}
        for stack in _stacks(assembly)
    }
    manifest = {"nag_runs": app.odp_nag.runs, "stacks": stacks}
    (folder / SYNTH_MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")


def _synthesized_app(folder: Path) -> SynthesizedApp:
    manifest = json.loads((folder / SYNTH_MANIFEST).read_text(encoding="utf-8"))
    files = {path: Path(stack["template"]) for path, stack in manifest["stacks"].items()}
    templates = {path: json.loads(file.read_text(encoding="utf-8")) for path, file in files.items()}
    data_lakes = {}
    pipelines = {}
    for path, template in templates.items():
        parts = path.split("/")
        if len(parts) == 1 and parts[0].endswith("-pipeline"):
            pipelines[parts[0].removeprefix("odp-").removesuffix("-pipeline")] = template
        if parts[-1] == "DataLake":
            data_lakes[parts[-2].lower()] = template
    return SynthesizedApp(
        outdir=folder / "cdk.out",
        templates=templates,
        data_lakes=data_lakes,
        pipelines=pipelines,
        regions={path: stack["region"] for path, stack in manifest["stacks"].items()},
        files=files,
        nag_runs=manifest["nag_runs"],
    )


@pytest.fixture(scope="session")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> SynthesizedApp:
    """The app (all environments, all pipelines) synthesized with cdk-nag once per test run, the pytest-xdist workers
    sharing it (tests/support/run_once.py); fails on any finding."""
    return once_per_run(tmp_path_factory, "app-synth", _synthesize, _synthesized_app)


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
