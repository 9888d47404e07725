"""Which datasets a dataset job run refreshes: by name, downstream of changed tables, and of one engine."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from etl.datasets.job import select_datasets
from odp.config.loader import load_config
from odp.config.models import EngineName
from odp.contracts.arguments import JobArgumentError
from odp.contracts.base import LedgerTables
from odp.contracts.datasets import DatasetJobArgs, LakeRoots, config_tables

ROOTS = LakeRoots("s3://raw", "s3://conformed", "s3://purpose")
TABLES = config_tables("dev")
TRIPS = "taxi_trips_dms.taxi_trips.table_1"


def test_a_run_of_one_engine_refreshes_only_that_engines_datasets_in_dependency_order(repo_root: Path) -> None:
    shipped = load_config(repo_root / "config")
    # the shipped chain trips_clean -> revenue_per_vendor_day, its second dataset moved to EMR Serverless
    datasets = tuple(
        d.model_copy(update={"engine": EngineName.EMR_SERVERLESS}) if d.name == "revenue_per_vendor_day" else d
        for d in shipped.datasets
    )
    config = dataclasses.replace(shipped, datasets=datasets)

    def names(**arguments: object) -> list[str]:
        return [d.name for d in select_datasets(config, DatasetJobArgs(ROOTS, **TABLES, **arguments))]

    assert names(changed_tables=(TRIPS,)) == ["trips_clean", "revenue_per_vendor_day"]
    assert names(changed_tables=(TRIPS,), engine="glue") == ["trips_clean"]
    assert names(changed_tables=(TRIPS,), engine="emr_serverless") == ["revenue_per_vendor_day"]
    assert names(changed_tables=("shop.public.other",), engine="emr_serverless") == []
    assert names(datasets=("trips_clean",), engine="emr_serverless") == []
    assert names(engine="glue") == ["trips_clean"]


def test_the_engine_argument_round_trips_and_is_refused_when_unknown() -> None:
    args = DatasetJobArgs(
        ROOTS,
        **TABLES,
        engine="emr_serverless",
        ledger=LedgerTables("odp-dev-processing-tracker", "odp-dev-processing-tracker-history"),
    )
    assert DatasetJobArgs.from_arguments(args.to_arguments()) == args
    assert DatasetJobArgs.from_arguments({**args.to_arguments(), "--odp_engine": ""}).engine == "any"
    with pytest.raises(JobArgumentError, match="--odp_engine"):
        DatasetJobArgs.from_arguments({**args.to_arguments(), "--odp_engine": "dataproc"})
