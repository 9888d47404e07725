"""Post-deploy smoke check of one environment (boto3 only; no CDK import).

python -m odp smoke --env ENV [--config-dir DIR]

Checks that the six tracker tables are ACTIVE, that every cadence's state machine exists, and that
the configuration was loaded (one batch_config item per cadence, one table_config item per table).
Exit 0 when all hold, 1 with every failed check listed otherwise.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import boto3
from botocore.exceptions import ClientError

from odp.config.loader import ConfigError, OdpConfig, load_config
from odp.config.models import Environment
from odp.naming import TrackerTableNames, state_machine_name


def check_environment(config: OdpConfig, name: str, dynamodb: Any, stepfunctions: Any, account: str) -> list[str]:
    """Every failed check, as a sentence; an empty list means the environment is healthy."""
    failures: list[str] = []
    environment = config.environments.environments[name]
    names = TrackerTableNames.for_environment(name)
    for physical in names.as_dict().values():
        try:
            status = dynamodb.describe_table(TableName=physical)["Table"]["TableStatus"]
        except ClientError as error:
            failures.append(f"table {physical}: {error.response['Error']['Code']}")
            continue
        if status != "ACTIVE":
            failures.append(f"table {physical} is {status}, not ACTIVE")
    for cadence in config.cadences.cadences:
        arn = f"arn:aws:states:{environment.region}:{account}:stateMachine:{state_machine_name(name, cadence)}"
        try:
            stepfunctions.describe_state_machine(stateMachineArn=arn)
        except ClientError as error:
            failures.append(f"state machine {arn}: {error.response['Error']['Code']}")
        item = dynamodb.get_item(TableName=names.batch_config, Key={"cadence": {"S": cadence}}).get("Item")
        if item is None:
            failures.append(f"batch_config has no item for cadence {cadence}: was the configuration loaded?")
    for table in config.tables:
        item = dynamodb.get_item(TableName=names.table_config, Key={"table_id": {"S": table.table_id}}).get("Item")
        if item is None:
            failures.append(f"table_config has no item for {table.table_id}: was the configuration loaded?")
    return failures


def config_and_environment(config_dir: Path, name: str) -> tuple[OdpConfig, Environment] | int:
    """The configuration and one environment of it, or the exit status after printing why not
    (1: invalid configuration, 2: unknown environment). Shared by the post-deploy commands."""
    try:
        config = load_config(config_dir)
    except ConfigError as error:
        print(error, file=sys.stderr)
        return 1
    environment = config.environments.environments.get(name)
    if environment is None:
        print(f"unknown environment {name!r}", file=sys.stderr)
        return 2
    return config, environment


def environment_parser(prog: str, doc: str) -> argparse.ArgumentParser:
    """The arguments every post-deploy command takes: ``--env`` and ``--config-dir``."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.splitlines()[0])
    parser.add_argument("--env", required=True)
    parser.add_argument("--config-dir", type=Path, default=Path("config"))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = environment_parser("python -m odp smoke", __doc__).parse_args(argv)
    loaded = config_and_environment(args.config_dir, args.env)
    if isinstance(loaded, int):
        return loaded
    config, environment = loaded
    session = boto3.session.Session(region_name=environment.region)
    failures = check_environment(
        config,
        args.env,
        session.client("dynamodb"),
        session.client("stepfunctions"),
        environment.account,
    )
    return report(f"smoke check of {args.env}", failures)


def report(check: str, failures: list[str]) -> int:
    """Print each failure (``FAIL ...`` on stderr) and the summary line; the exit status (1 on any failure)."""
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    print(f"{check}: {'ok' if not failures else f'{len(failures)} failure(s)'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
