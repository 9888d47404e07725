"""One demo run on the sandbox for three guarantees: every kind of table validated against the plain-Python model of
its source (sandbox.demo_data), the demo's datasets refreshed after every round and checked against the model of raw
table_1 (sandbox.datasets), and the EMR Serverless entry point writing what the Glue entry point writes.

The whole flow: real state machine (moto), real Lambda handlers, real jobs on Spark + Hudi; tables are read back with
Spark (sandbox.validation). The EMR entry point: spark-submit, its own JVM, the same contract arguments, refreshes the
last round's trips_clean as `make demo` runs it; then, with the datasets configured ``engine: emr_serverless``, the
datasets state machine's two runs (``--odp_engine glue``, then ``--odp_engine emr_serverless``, both with the changed
tables) leave the Glue run nothing to write and give the EMR run the whole chain in dependency order, with the same
rows. The engine selection is the dataset job's, so both runs of that part are the entry point's ``main`` in this
process. The sandbox's edge cases (a corrupt file, an empty run) are tests/e2e/test_sandbox_flow.py's."""

from __future__ import annotations

import logging
import shutil
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

import pytest

from etl.engine import LocalEngine
from etl.jobs import dataset_job
from odp.config.loader import OdpConfig, load_config
from odp.config.models import EngineName
from odp.contracts.datasets import DatasetJobArgs, config_tables
from sandbox.account import ENVIRONMENT, SandboxLayout
from sandbox.consumer_reader import QueryType
from sandbox.datasets import TRIPS, data_rows, emr_roots, lake_roots
from sandbox.demo import DemoResult, run_demo, written_tables
from sandbox.demo_data import DemoGenerator, DemoScenarios
from sandbox.job_process import configured_aws
from sandbox.staging import hadoop_file_uri

TABLE_1 = TRIPS
TABLE_5 = "taxi_trips_dms.taxi_trips.table_5"
TABLE_16 = "taxi_trips_dms.taxi_trips.table_16"
PRODUCTS = "inventory_debezium.inventory.products"
ORDERS = "orders_dynamodb.app.orders"
DEMO_TABLES = (TABLE_5, TABLE_16, PRODUCTS, ORDERS, TABLE_1)
DATASET = "trips_clean"


class Demo(NamedTuple):
    layout: SandboxLayout
    result: DemoResult


@pytest.fixture(scope="module")
def demo(config: OdpConfig, repo_root: Path, tmp_path_factory: pytest.TempPathFactory, spark: object) -> Demo:
    """One demo run for three guarantees (each a test below): five tables, one of each kind (DMS current with a late
    file, DMS historical, Debezium with a re-landed file and the envelope form, DynamoDB with a redelivered event) and
    the trips the datasets read, full load + 2 rounds, the datasets refreshed after every round and the last round's
    trips_clean refreshed through the EMR entry point too (spark-submit, as `make demo` runs it). The read back with
    Athena's Hudi reader is tests/unit/etl/test_consumer_readers.py's (every kind of table) and `make demo`'s."""
    work = tmp_path_factory.mktemp("demo")
    layout = SandboxLayout(lake=work / "lake", staging=work / "staging")
    layout.staging.mkdir()
    scenarios = DemoScenarios(
        late_file=(TABLE_5,), relanded_file=(PRODUCTS,), redelivered_event=(ORDERS,), late_round=1, relanded_round=2
    )
    result = run_demo(
        config,
        layout,
        spark,
        table_ids=DEMO_TABLES,
        rounds=2,
        scenarios=scenarios,
        rotate_cdc=False,
        config_dir=repo_root / "config",
        consumer_read=False,
    )
    return Demo(layout, result)


@pytest.mark.spark
@pytest.mark.slow
def test_small_demo_validates_every_table(config: OdpConfig, demo: Demo) -> None:
    layout, result = demo
    assert [c.table_id for c in result.checks] == [PRODUCTS, ORDERS, TABLE_1, TABLE_5, TABLE_16]
    for check in result.checks:
        assert check.ok, check
    assert all(check.ok for check in result.round_checks), [c for c in result.round_checks if not c.ok]
    assert all(report.ok for report in result.rounds)
    # The late file of round 1 landed in round 2: table_5 got one file in round 1 and three in round 2.
    assert result.rounds[1].table(TABLE_5).files == 1
    assert result.rounds[2].table(TABLE_5).files == 3
    # The redelivered event of round 1 registered and processed its file once.
    assert result.rounds[1].table(ORDERS).files == 2
    # what `make demo` reads back with Hudi 0.15.0: each table where its runs wrote it, and the read-optimized view of
    # the MERGE_ON_READ one (Debezium products), as Athena's _rt and _ro tables
    tables_written = DemoGenerator(config, layout.staging, table_ids=DEMO_TABLES).tables
    written = written_tables(config, layout, result.rounds, tables_written)
    reads = [(read.label, read.base_path, read.query) for read in written if read.label in DEMO_TABLES]
    # and every dataset, which the trips' rounds refreshed
    assert {read.label for read in written if read.label not in DEMO_TABLES} == {
        "dataset trips_clean",
        "dataset revenue_per_vendor_day",
    }
    raw = layout.raw_root
    assert sorted(reads) == sorted(
        [
            (PRODUCTS, f"{raw}/inventory_raw/products", QueryType.SNAPSHOT),
            (PRODUCTS, f"{raw}/inventory_raw/products", QueryType.READ_OPTIMIZED),
            (ORDERS, f"{raw}/orders_raw/orders", QueryType.SNAPSHOT),
            (TABLE_1, f"{raw}/taxi_trips_raw/table_1", QueryType.SNAPSHOT),
            (TABLE_5, f"{raw}/taxi_trips_raw/table_5", QueryType.SNAPSHOT),
            (TABLE_16, f"{raw}/taxi_trips_raw/table_16", QueryType.SNAPSHOT),
        ]
    )
    assert result.ok


@pytest.mark.spark
@pytest.mark.slow
def test_demo_datasets_follow_the_model_every_round(demo: Demo) -> None:
    """The demo's datasets, refreshed after every round through the real flow, each checked against the plain-Python
    model of raw table_1 (sandbox.datasets), and a failed rule leaves trips_clean as it was."""
    dataset_checks = [c for c in demo.result.round_checks if "dataset" in c.description and "EMR" not in c.description]
    assert [c.description for c in dataset_checks] == [
        f"round {n}: dataset {check}"
        for n in range(3)
        for check in (
            "trips_clean: refreshed",
            "revenue_per_vendor_day: refreshed",
            "trips_clean: matches the model",
            "revenue_per_vendor_day: matches the model",
        )
    ] + ["dataset trips_clean: a failed rule leaves it untouched"]
    assert all(c.ok for c in dataset_checks), [c for c in dataset_checks if not c.ok]


@pytest.mark.spark
@pytest.mark.slow
def test_the_emr_entry_point_writes_what_the_glue_entry_point_writes(
    repo_root: Path, demo: Demo, tmp_path: Path, spark: object, caplog: pytest.LogCaptureFixture
) -> None:
    config_dir = repo_root / "config"
    config = load_config(config_dir)
    layout = demo.layout
    descriptions = [c.description for c in demo.result.round_checks]
    # The in-process trips_clean matches the plain-Python model of the raw rows; the EMR one matches it.
    assert "round 2: dataset trips_clean: matches the model" in descriptions
    assert descriptions[-1] == "dataset trips_clean: EMR entry point (spark-submit) writes the same rows"
    assert all(c.ok for c in demo.result.round_checks), [c for c in demo.result.round_checks if not c.ok]
    assert (layout.lake / "emr" / "dataset_job.log").is_file()
    dataset = next(d for d in config.datasets if d.name == DATASET)

    glue_roots = replace(
        lake_roots(layout),
        conformed=hadoop_file_uri(tmp_path / "glue" / "conformed"),
        purpose_built=hadoop_file_uri(tmp_path / "glue" / "purpose_built"),
    )
    tables = config_tables(ENVIRONMENT)
    glue_args = DatasetJobArgs(glue_roots, **tables, datasets=(DATASET,), full_refresh=True)
    argv = ["dataset_job.py", *[item for pair in glue_args.to_arguments().items() for item in pair]]
    with configured_aws(config):  # the configuration as deployed: the job reads table_config and dataset_config
        assert dataset_job.main(argv, engine=LocalEngine()) == 0

    glue_rows = data_rows(spark, glue_roots.dataset_path(dataset))
    emr_rows = data_rows(spark, emr_roots(layout).dataset_path(dataset))
    assert len(glue_rows) > 0
    assert emr_rows == glue_rows
    assert glue_rows == data_rows(spark, lake_roots(layout).dataset_path(dataset))

    # Every dataset moved to EMR Serverless (config/datasets/*.yaml engine:), run as the datasets state machine runs.
    moved = tmp_path / "config-on-emr"
    shutil.copytree(config_dir, moved)
    for dataset_file in (moved / "datasets").glob("*.yaml"):
        dataset_file.write_text(dataset_file.read_text(encoding="utf-8") + "engine: emr_serverless\n", encoding="utf-8")
    on_emr = load_config(moved).datasets
    assert {d.engine for d in on_emr} == {EngineName.EMR_SERVERLESS}
    glue_only = replace(
        lake_roots(layout),
        conformed=hadoop_file_uri(tmp_path / "engine-glue" / "conformed"),
        purpose_built=hadoop_file_uri(tmp_path / "engine-glue" / "purpose_built"),
    )
    glue_run = DatasetJobArgs(glue_only, **tables, changed_tables=(TRIPS,), engine="glue")
    argv = ["dataset_job.py", *[item for pair in glue_run.to_arguments().items() for item in pair]]
    with configured_aws(load_config(moved)):
        assert dataset_job.main(argv, engine=LocalEngine()) == 0
    assert not (tmp_path / "engine-glue").exists()  # the Glue run had no dataset to refresh
    emr_only = replace(
        lake_roots(layout),
        conformed=hadoop_file_uri(tmp_path / "engine-emr" / "conformed"),
        purpose_built=hadoop_file_uri(tmp_path / "engine-emr" / "purpose_built"),
    )
    emr_run = DatasetJobArgs(emr_only, **tables, changed_tables=(TRIPS,), engine="emr_serverless")
    caplog.set_level(logging.INFO)
    caplog.clear()
    argv = ["dataset_job.py", *[item for pair in emr_run.to_arguments().items() for item in pair]]
    with configured_aws(load_config(moved)):
        assert dataset_job.main(argv, engine=LocalEngine()) == 0
    assert data_rows(spark, emr_only.dataset_path(dataset)) == glue_rows
    # the whole chain, in dependency order (revenue_per_vendor_day reads trips_clean), each written
    written = [message.split(":")[0] for message in caplog.messages if ": written (" in message]
    assert written == [DATASET, "revenue_per_vendor_day"], caplog.messages
    for downstream in on_emr:
        assert data_rows(spark, emr_only.dataset_path(downstream))
