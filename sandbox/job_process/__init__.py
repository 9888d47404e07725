"""A job entry point in a process of its own, against the configuration a deployed job finds in DynamoDB.

    python -m sandbox.job_process CONFIG_DIR etl.jobs.dataset_job --odp_... (the job's arguments)
    spark-submit ... sandbox/job_process/__main__.py CONFIG_DIR etl/jobs/emr_serverless.py dataset_job --odp_...

moto runs in the process (:func:`configured_aws`): the configuration of ``CONFIG_DIR`` is loaded into its
table_config, batch_config and dataset_config by the Configuration Manager, as the pipeline's post-deploy step does
after a deploy; then the entry point runs unchanged with the rest of the command line, as ``python -m <module>`` or,
for a ``.py`` file, as spark-submit runs its primary resource. The dataset job reads its datasets and tables from
there, as on Glue and EMR Serverless. The tables live as long as the process: each process loads the configuration
again (the Configuration Manager is idempotent). A package of its own: a script's folder comes first on sys.path, and
sandbox/ holds an ``operator.py`` that would shadow the standard library's.
"""

from __future__ import annotations

import argparse
import runpy
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import boto3
from moto import mock_aws

from odp.config.loader import OdpConfig, load_config
from odp.config.manager import load_into_dynamodb
from odp.contracts.datasets import config_tables
from odp.naming import DATASET_CONFIG, tracker_table_names
from odp.tracker.schema import create_tables
from sandbox.account import ENVIRONMENT, REGION, environment_variables


@contextmanager
def configured_aws(config: OdpConfig) -> Iterator[dict[str, str]]:
    """moto for the block, holding ``config`` as the Configuration Manager loads it (every tracker and config
    table of the sandbox environment created, the configuration loaded); yields the tables the dataset job reads
    (:func:`odp.contracts.datasets.config_tables`: DatasetJobArgs fields)."""
    region = {"AWS_DEFAULT_REGION": REGION, "AWS_REGION": REGION}
    with environment_variables(region), mock_aws():
        names = tracker_table_names(ENVIRONMENT)
        create_tables(boto3.client("dynamodb", region_name=REGION), names)
        resource = boto3.resource("dynamodb", region_name=REGION)
        load_into_dynamodb(
            config,
            ENVIRONMENT,
            resource.Table(names["table_config"]),
            resource.Table(names["batch_config"]),
            dataset_config_table=resource.Table(names[DATASET_CONFIG]),
        )
        yield config_tables(ENVIRONMENT)


def main(argv: list[str] | None = None) -> None:
    """Load the configuration into moto, then run the entry point (its exit status is the process's).

    Raises:
        odp.config.ConfigError: the configuration is invalid.
    """
    parser = argparse.ArgumentParser(prog="python -m sandbox.job_process", description=__doc__.splitlines()[0])
    parser.add_argument("config_dir", type=Path, help="the configuration folder the Configuration Manager loads")
    parser.add_argument("entry_point", help="a module (run as python -m) or a .py file (as spark-submit runs it)")
    parser.add_argument("arguments", nargs=argparse.REMAINDER, help="the job's arguments")
    args = parser.parse_args(argv)
    with configured_aws(load_config(args.config_dir)):
        sys.argv = [args.entry_point, *args.arguments]
        if args.entry_point.endswith(".py"):
            runpy.run_path(args.entry_point, run_name="__main__")
        else:
            runpy.run_module(args.entry_point, run_name="__main__", alter_sys=True)
