"""Time a full synth of every environment and pipeline (``make bench-synth``); target: under 60 s.

python -m bench.synth [--runs N] [--keep DIR]
python -m bench.synth --fleet 50x100   # one environment of 50 sources x 100 listed tables: seconds, resources per stack
python -m bench.synth --fleet 500x10 --sources-per-database 10   # 500 sources: 50 in the DataLake stack, 450 in
                                                                  # catalog stacks (decisions/034); 50 raw databases
python -m bench.synth --fleet 500x10 --database-prefix odp_      # a raw database per source, granted as odp_*

Runs the CDK CLI exactly as ``make synth`` does (``npx cdk synth --quiet``), into a temporary
output folder, and prints the wall-clock seconds of each run and the best. The asset folders under
.cache/assets are built on the first synth after a code change and reused after that, so the
first run after an edit can be slower than the ones that follow.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 60.0


def time_synth(outdir: Path) -> float:
    """Seconds of one ``npx cdk synth --quiet -o outdir``.

    Raises:
        subprocess.CalledProcessError: the synth failed (its output is printed first).
    """
    env = {**os.environ, "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"}
    started = time.perf_counter()
    result = subprocess.run(
        ["npx", "cdk", "synth", "--quiet", "-o", str(outdir)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        print(result.stdout + result.stderr, file=sys.stderr)
        result.check_returncode()
    return elapsed


# A fleet's stage must stay well below CloudFormation's 500 resources a stack (issue 47).
STACK_RESOURCE_TARGET = 400


# A generated fleet keeps its first sources in the DataLake stack, as an environment that grew would (every source
# before config/catalog_stacks.yaml), and lists the others in catalog stacks (odp.config.catalog_stacks).
FLEET_DATA_LAKE_SOURCES = 50


def fleet_config(
    sources: int,
    tables_per_source: int,
    *,
    in_data_lake: int = FLEET_DATA_LAKE_SOURCES,
    sources_per_database: int = 1,
    database_prefix: str | None = None,
) -> dict[str, Any]:
    """A configuration of one environment (the shipped ``dev``, without its pipeline) and ``sources`` DMS sources
    of ``tables_per_source`` explicitly listed tables each, all hourly: file name -> YAML content as data. The first
    ``in_data_lake`` sources stay in the DataLake stack, the others go to catalog stacks (``catalog_stacks.yaml``,
    by :func:`odp.config.catalog_stacks.assign_sources`). Each raw database holds the tables of
    ``sources_per_database`` consecutive sources (``src<n>_raw`` alone, ``db<n>_raw`` shared; a shared one's tables
    are named after their source): a job role's catalog grants name each database, and IAM's policy sizes bound how
    many (infrastructure/policy_limits.py), unless ``database_prefix`` is set: then it starts every raw database's name
    and the roles are granted ``<prefix>*`` (docs/decisions/034)."""
    from odp.config.catalog_stacks import CATALOG_STACKS_FILE, assign_sources

    environments = yaml.safe_load((REPO_ROOT / "config" / "environments.yaml").read_text())
    dev = {key: value for key, value in environments["environments"]["dev"].items() if key != "branch"}  # no pipeline
    environments = {**environments, "environments": {"dev": dev}}
    if database_prefix is not None:
        environments["database_prefix"] = database_prefix
    config: dict[str, Any] = {
        "environments.yaml": environments,
        "cadences.yaml": {"cadences": {"hourly": {"schedule": "rate(1 hour)", "batch_size": 100}}},
    }
    shared = sources_per_database > 1
    for source in range(sources):
        name = f"src{source:03d}"
        database = f"db{source // sources_per_database:03d}_raw" if shared else f"{name}_raw"
        database = f"{database_prefix or ''}{database}"
        prefix = f"{name}_" if shared else ""
        config[f"tables/{name}.yaml"] = {
            "source": name,
            "format": "dms",
            "defaults": {"cadence": "hourly", "database": database, "ordering_column": "seq"},
            "tables": [
                {"schema": "public", "table": f"{prefix}t{n:04d}", "primary_key": ["id"]}
                for n in range(tables_per_source)
            ],
        }
    names = [f"src{source:03d}" for source in range(sources)]
    if names[in_data_lake:]:
        config[CATALOG_STACKS_FILE] = {"stacks": assign_sources({}, names[in_data_lake:])}
    return config


def synth_fleet(config: dict[str, Any], workdir: Path) -> tuple[float, dict[str, int]]:
    """Write ``config`` under ``workdir``, build the app and synthesize it in this process (cdk-nag runs: a finding
    raises); the seconds it took and the resources of each stack's template."""
    from infrastructure.application import build_app, cdk_json_context, new_app

    config_dir, outdir = workdir / "config", workdir / "cdk.out"
    for name, content in config.items():
        (config_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (config_dir / name).write_text(yaml.safe_dump(content, sort_keys=False))
    started = time.perf_counter()
    build_app(new_app(context=cdk_json_context(), outdir=str(outdir)), config_dir=config_dir).synth()
    seconds = time.perf_counter() - started
    resources = {
        template.name.removesuffix(".template.json"): len(json.loads(template.read_text()).get("Resources", {}))
        for template in sorted(outdir.rglob("*.template.json"))
    }
    return seconds, resources


def fleet_main(fleet: str, sources_per_database: int = 1, database_prefix: str | None = None) -> int:
    sources, _, per_source = fleet.partition("x")
    config = fleet_config(
        int(sources), int(per_source), sources_per_database=sources_per_database, database_prefix=database_prefix
    )
    with tempfile.TemporaryDirectory(prefix="odp-bench-synth-fleet-") as scratch:
        seconds, resources = synth_fleet(config, Path(scratch))
    print(f"synth of {int(sources) * int(per_source):,} listed tables ({fleet}): {seconds:.1f} s")
    for stack, count in resources.items():
        print(f"  {stack}: {count} resources (target under {STACK_RESOURCE_TARGET})")
    return 0 if max(resources.values()) < STACK_RESOURCE_TARGET else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.synth", description="time a full cdk synth")
    parser.add_argument("--runs", type=int, default=1, help="number of synths (default 1)")
    parser.add_argument("--keep", type=Path, default=None, help="write the assembly here instead of a temp folder")
    parser.add_argument("--fleet", help="SOURCESxTABLES: one environment of generated listed tables, in-process")
    parser.add_argument(
        "--sources-per-database", type=int, default=1, help="--fleet: sources sharing one raw database (default 1)"
    )
    parser.add_argument("--database-prefix", help="--fleet: every raw database starts with it (environments.yaml)")
    args = parser.parse_args(argv)
    if args.fleet:
        return fleet_main(args.fleet, args.sources_per_database, args.database_prefix)
    timings = []
    for run in range(1, args.runs + 1):
        with tempfile.TemporaryDirectory(prefix="odp-bench-synth-") as scratch:
            outdir = args.keep or Path(scratch) / "cdk.out"
            seconds = time_synth(outdir)
        timings.append(seconds)
        print(f"synth run {run}: {seconds:.1f} s")
    best = min(timings)
    verdict = "within" if best < TARGET_SECONDS else "OVER"
    print(f"full synth (all environments and pipelines): {best:.1f} s, {verdict} the {TARGET_SECONDS:.0f} s target")
    return 0 if best < TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
