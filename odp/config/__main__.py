"""Configuration Manager CLI.

python -m odp.config validate [--config-dir DIR]   (warns when a cadence cannot keep up with its tables)
python -m odp.config load --env ENV [--config-dir DIR] [--dry-run] [--endpoint-url URL]
python -m odp.config schema [--out DIR]
python -m odp.config assign-stacks SOURCE... [--config-dir DIR] [--per-stack N]   (catalog_stacks.yaml, append-only)

``load`` writes batch_config, table_config and dataset_config (each added, changed or deactivated item).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import boto3

from odp.config.catalog_stacks import (
    CATALOG_STACKS_FILE,
    SOURCES_PER_CATALOG_STACK,
    assign_sources,
    render_catalog_stacks,
)
from odp.config.loader import ConfigError, OdpConfig, load_config
from odp.config.manager import load_into_dynamodb
from odp.config.schema import write_schemas
from odp.naming import DATASET_CONFIG, TrackerTableNames, tracker_table_names
from odp.planning import capacity_warning

DEFAULT_CONFIG_DIR = Path("config")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m odp.config", description="ODP Configuration Manager")
    commands = parser.add_subparsers(dest="command", required=True)
    validate = commands.add_parser("validate", help="check every configuration file; exit 1 with all errors")
    validate.add_argument("--config-dir", type=Path, default=DEFAULT_CONFIG_DIR)
    load = commands.add_parser(
        "load", help="write batch_config, table_config and dataset_config items for one environment"
    )
    load.add_argument("--env", required=True, help="environment name from environments.yaml")
    load.add_argument("--config-dir", type=Path, default=DEFAULT_CONFIG_DIR)
    load.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")
    load.add_argument("--endpoint-url", default=None, help="DynamoDB endpoint (tests and local emulators)")
    schema = commands.add_parser("schema", help="write the JSON Schemas editors use")
    schema.add_argument("--out", type=Path, default=DEFAULT_CONFIG_DIR / "schema")
    assign = commands.add_parser(
        "assign-stacks",
        help=f"list new sources in catalog stacks ({CATALOG_STACKS_FILE}), moving none (docs/decisions/034)",
    )
    assign.add_argument("sources", nargs="+", help="sources not yet deployed (a deployed source never moves)")
    assign.add_argument("--config-dir", type=Path, default=DEFAULT_CONFIG_DIR)
    assign.add_argument(
        "--per-stack", type=int, default=SOURCES_PER_CATALOG_STACK, help="sources a catalog stack takes"
    )
    return parser


def assign_stacks(config: OdpConfig, config_dir: Path, sources: list[str], per_stack: int) -> int:
    """Append ``sources`` to catalog stacks in ``config_dir``'s catalog_stacks.yaml (each must have tables)."""
    unknown = sorted(set(sources) - {table.source for table in config.tables})
    if unknown:
        print(f"no tables for source(s) {', '.join(unknown)} (config/tables/<source>.yaml)", file=sys.stderr)
        return 1
    listed = config.catalog_stacks.stacks
    assigned = assign_sources(listed, sources, per_stack=per_stack)
    (config_dir / CATALOG_STACKS_FILE).write_text(render_catalog_stacks(assigned), encoding="utf-8")
    for stack, members in assigned.items():
        added = [source for source in members if source not in listed.get(stack, [])]
        if added:
            print(f"{stack}: + {', '.join(added)}")
    return 0


def capacity_warnings(config: OdpConfig) -> list[str]:
    """Each cadence that cannot keep up with its active tables, each with a change every interval
    (:func:`odp.planning.capacity_warning`): a warning, not an error (tables may change less often)."""
    warnings = []
    for name, cadence in config.cadences.cadences.items():
        tables = sum(1 for table in config.tables if table.is_active and table.cadence == name)
        warning = capacity_warning(
            name,
            tables=tables,
            interval_minutes=cadence.interval_minutes,
            targets=cadence.plan_targets,
            max_concurrency=cadence.max_concurrency,
        )
        if warning is not None:
            warnings.append(warning)
    return warnings


def validate(config: OdpConfig, config_dir: Path) -> int:
    """``validate`` after the files loaded: the views, then a summary and the capacity warnings."""
    from odp.config.views import check_views  # noqa: PLC0415 - sqlglot: not needed by the other commands

    views, issues = check_views(config_dir, config)
    if issues:
        print(ConfigError(issues), file=sys.stderr)
        return 1
    cadences = len(config.cadences.cadences)
    active = sum(1 for t in config.tables if t.is_active)
    print(
        f"{config_dir}: valid ({len(config.environments.environments)} environments, "
        f"{cadences} cadences, {len(config.tables)} tables, {active} active, {len(config.datasets)} datasets, "
        f"{len(views)} views, {len(config.access.consumers)} consumers)"
    )
    for warning in capacity_warnings(config):
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "schema":
        for path in write_schemas(args.out):
            print(f"wrote {path}")
        return 0
    try:
        config = load_config(args.config_dir)
    except ConfigError as error:
        print(error, file=sys.stderr)
        return 1
    if args.command == "assign-stacks":
        return assign_stacks(config, args.config_dir, args.sources, args.per_stack)
    if args.command == "validate":
        return validate(config, args.config_dir)
    environment = config.environments.environments.get(args.env)
    if environment is None:
        known = ", ".join(sorted(config.environments.environments))
        print(f"unknown environment {args.env!r} (known: {known})", file=sys.stderr)
        return 2
    dynamodb = boto3.resource("dynamodb", region_name=environment.region, endpoint_url=args.endpoint_url)
    names = TrackerTableNames.for_environment(args.env)
    plan = load_into_dynamodb(
        config,
        args.env,
        dynamodb.Table(names.table_config),
        dynamodb.Table(names.batch_config),
        dataset_config_table=dynamodb.Table(tracker_table_names(args.env)[DATASET_CONFIG]),
        dry_run=args.dry_run,
    )
    print(("dry run, nothing written: " if args.dry_run else "") + plan.render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
