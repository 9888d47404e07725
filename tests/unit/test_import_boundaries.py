"""Dependencies point one way (ARCHITECTURE.md): ``infrastructure``, ``lambdas``, ``etl``, ``sandbox`` -> ``odp``.

What a module imports is read from the code (every ``import`` of every module), and what importing loads is measured
in a fresh interpreter: the CDK app (``infrastructure/``), the Lambdas and the domain core never load pyspark, and a
job's entry point loads it when its ``main`` runs, not when it is imported (Glue imports the script to run it; the
canary, ``--help`` and the contract tests import it without a Spark session).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.imports import imported_modules
from tests.support.paths import REPO_ROOT

# The modules a fresh interpreter imports; the packages whose every module it imports.
PYSPARK_FREE_PACKAGES = ("odp", "infrastructure", "lambdas")
ENTRY_POINTS = ("etl.jobs.file_processor", "etl.jobs.dataset_job", "etl.jobs.streaming_job", "etl.jobs.emr_serverless")
# package -> top-level names of this repository it must never import
FORBIDDEN = {
    "odp": ("etl", "infrastructure", "lambdas", "sandbox", "bench", "pyspark", "aws_cdk"),
    "infrastructure": ("etl", "lambdas", "sandbox", "bench", "pyspark"),
    "lambdas": ("etl", "infrastructure", "sandbox", "bench", "pyspark", "aws_cdk"),
    "etl": ("infrastructure", "lambdas", "sandbox", "bench", "aws_cdk"),
}


def _modules(package: str) -> list[str]:
    root = REPO_ROOT / package
    names = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(REPO_ROOT).with_suffix("").parts
        if "emr_image" in parts or parts[-1] == "__main__":
            continue  # the EMR image's build context; a package's command line runs on import
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def _imported_top_levels(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_package_imports_a_layer_it_must_not(package: str) -> None:
    offending = {
        str(path.relative_to(REPO_ROOT)): sorted(_imported_top_levels(path) & set(FORBIDDEN[package]))
        for path in sorted((REPO_ROOT / package).rglob("*.py"))
        if "emr_image" not in path.parts
    }
    assert {file: names for file, names in offending.items() if names} == {}


# infrastructure's layers, lowest first: a module imports only its own layer's and the layers under it (and the
# shared modules at the package's top: grants, nag, assets), never a layer above.
INFRASTRUCTURE_LAYERS = ("foundation", "ingest", "jobs", "access", "operations")
TOP_LEVEL_COMPOSERS = ("infrastructure.stage", "infrastructure.application", "infrastructure.pipeline")


def _infrastructure_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("infrastructure."):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("infrastructure.")}
    return found


def test_each_infrastructure_layer_imports_only_the_layers_under_it() -> None:
    upward = {}
    for path in sorted((REPO_ROOT / "infrastructure").rglob("*.py")):
        parts = path.relative_to(REPO_ROOT / "infrastructure").parts
        if parts[0] not in INFRASTRUCTURE_LAYERS:
            continue  # the composers and the shared modules
        level = INFRASTRUCTURE_LAYERS.index(parts[0])
        above = {
            name
            for name in _infrastructure_imports(path)
            if name in TOP_LEVEL_COMPOSERS
            or (name.split(".")[1] in INFRASTRUCTURE_LAYERS and INFRASTRUCTURE_LAYERS.index(name.split(".")[1]) > level)
        }
        if above:
            upward[str(path.relative_to(REPO_ROOT))] = sorted(above)
    assert upward == {}


# etl's layers: the shared Hudi layer (etl/hudi) serves the three jobs and knows none of them; the raw tables' write
# (etl/raw_table) serves the File Processor and the streaming job and knows neither.
ETL_LAYER_FORBIDDEN = {
    "etl/hudi": ("etl.raw_table", "etl.file_processor", "etl.streaming", "etl.datasets", "etl.jobs", "odp.contracts"),
    "etl/raw_table": ("etl.file_processor", "etl.streaming", "etl.datasets", "etl.jobs", "odp.contracts"),
}


@pytest.mark.parametrize("folder", sorted(ETL_LAYER_FORBIDDEN))
def test_the_hudi_layer_and_the_raw_table_write_import_no_job(folder: str) -> None:
    forbidden = ETL_LAYER_FORBIDDEN[folder]
    offending = {
        str(path.relative_to(REPO_ROOT)): sorted(
            name for name in imported_modules(path) if any(name == f or name.startswith(f"{f}.") for f in forbidden)
        )
        for path in sorted((REPO_ROOT / folder).rglob("*.py"))
    }
    assert {file: names for file, names in offending.items() if names} == {}


def _loaded_after_importing(modules: list[str]) -> dict[str, bool]:
    """Each module imported in turn by one fresh interpreter: whether pyspark was loaded after it."""
    program = (
        "import importlib, json, sys\n"
        "loaded = {}\n"
        "for name in json.loads(sys.argv[1]):\n"
        "    importlib.import_module(name)\n"
        "    loaded[name] = 'pyspark' in sys.modules\n"
        "print(json.dumps(loaded))\n"
    )
    environment = {**os.environ, "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20", "PYTHONPATH": str(REPO_ROOT)}
    child = subprocess.run(
        [sys.executable, "-c", program, json.dumps(modules)],
        cwd=REPO_ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert child.returncode == 0, child.stderr[-3000:]
    return json.loads(child.stdout.strip().splitlines()[-1])


def test_the_cdk_app_the_lambdas_the_core_and_the_job_entry_points_load_no_pyspark_on_import() -> None:
    modules = [name for package in PYSPARK_FREE_PACKAGES for name in _modules(package)] + list(ENTRY_POINTS)
    loaded = _loaded_after_importing(modules)
    assert "infrastructure.application" in loaded  # what app.py imports to synthesize every stage
    assert {name: spark for name, spark in loaded.items() if spark} == {}
