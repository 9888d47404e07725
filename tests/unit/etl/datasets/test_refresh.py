"""Datasets refreshed on real Spark + Hudi: incremental equals full over rounds of inserts, updates and
deletes, for a per-row dataset (partitioned, a row moves partition) and an aggregate over it (MERGE_ON_READ), the
configuration read as the dataset job reads it (loaded into DynamoDB by the Configuration Manager); a failing rule
writes nothing; a crash right after a dataset commit reruns as up to date (no double apply).

The raw table is written with the File Processor's own Hudi options. Writes are few (each costs
seconds): one raw commit and at most one commit per dataset per round.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from etl.datasets.job import run_datasets
from etl.datasets.refresh import AFTER_COMMIT_FAULT, DatasetRefresher, consumed_instants
from etl.hudi.options import HudiProfile, WriteOperation, WriteProfile, hudi_write_options
from etl.hudi.target import HudiTarget
from etl.hudi.timeline import completed_commits, latest_instant
from etl.jobs.dataset_job import read_config
from odp.config import load_config
from odp.config.datasets import ALL_TABLES, ExpressionRule, RowCountRule
from odp.config.loader import OdpConfig
from odp.config.manager import load_into_dynamodb
from odp.contracts.datasets import DatasetJobArgs, LakeRoots, config_tables
from odp.faults import on_fault
from odp.naming import DATASET_CONFIG, tracker_table_names
from odp.tracker.dataset_history import should_notify
from odp.tracker.schema import create_tables
from odp.tracker.statuses import RunStatus
from tests.support.config_files import valid_files, write_config

ORDERS = "shop.public.orders"
TABLES = config_tables("test")
CLEAN_SQL = """
SELECT id, upper(region) AS region, CAST(amount AS DECIMAL(12, 2)) AS amount
FROM orders
WHERE amount >= 0
"""
BY_REGION_SQL = """
SELECT region, COUNT(*) AS orders, CAST(SUM(amount) AS DECIMAL(18, 2)) AS revenue
FROM clean
GROUP BY region
"""
# Raw rows: id -> (region, amount). Each round: the raw table's state after it.
ROUNDS: list[dict[int, tuple[str, str]]] = [
    {1: ("eu", "10.00"), 2: ("eu", "20.00"), 3: ("us", "30.00"), 4: ("us", "-1.00")},
    # update (2 moves region), 3 deleted, 4 fixed (now passes the filter), 1 goes negative (filtered out), 5 new
    {1: ("eu", "-5.00"), 2: ("us", "25.00"), 4: ("us", "4.00"), 5: ("ap", "50.00")},
]
# The round after them, the one a crash interrupts (test_crash_after_commit_reruns_as_up_to_date): every ap row gone
# (its group must vanish), 1 back, 6 and 7 new.
LAST_ROUND = {1: ("eu", "11.00"), 2: ("us", "25.00"), 4: ("us", "4.00"), 6: ("eu", "60.00"), 7: ("us", "70.00")}


def model_clean(raw: dict[int, tuple[str, str]]) -> dict[int, tuple[str, Decimal]]:
    return {k: (region.upper(), Decimal(a)) for k, (region, a) in raw.items() if Decimal(a) >= 0}


def model_by_region(raw: dict[int, tuple[str, str]]) -> dict[str, tuple[int, Decimal]]:
    groups: dict[str, tuple[int, Decimal]] = {}
    for region, amount in model_clean(raw).values():
        count, total = groups.get(region, (0, Decimal(0)))
        groups[region] = (count + 1, total + amount)
    return groups


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> tuple[OdpConfig, LakeRoots]:
    return new_lake(tmp_path_factory.mktemp("datasets"))


def new_lake(root: Path) -> tuple[OdpConfig, LakeRoots]:
    """The configuration (raw orders, the datasets clean and by_region over it) and the lake's roots under ``root``."""
    files: dict[str, Any] = valid_files()
    files["datasets/clean.yaml"] = {
        "name": "clean",
        "zone": "conformed",
        "database": "shop_conformed",
        "sources": [{"name": "orders", "table": ORDERS}],
        "key": ["id"],
        "partition_by": ["region"],  # id 2 moves from EU to US in round 2: its row changes partition
        "refresh": "incremental",
        "quality": [{"type": "not_null", "columns": ["region"]}],
    }
    files["datasets/clean.sql"] = CLEAN_SQL
    files["datasets/by_region.yaml"] = {
        "name": "by_region",
        "zone": "purpose_built",
        "database": "shop_purpose_built",
        "sources": [{"name": "clean", "dataset": "clean"}],
        "key": ["region"],
        "table_type": "MERGE_ON_READ",
        "refresh": "full",
        "quality": [{"type": "row_count", "min": 1}],
    }
    files["datasets/by_region.sql"] = BY_REGION_SQL
    config = load_config(write_config(root / "config", files))
    lake_root = (root / "lake").as_uri()
    return config, LakeRoots(f"{lake_root}/raw", f"{lake_root}/conformed", f"{lake_root}/purpose_built")


def write_raw(spark, config: OdpConfig, roots: LakeRoots, before: dict, after: dict, *, seq: int) -> None:
    """One File Processor-like commit taking the raw table from ``before`` to ``after``."""
    table = config.table(ORDERS)
    rows = [
        (k, f"{seq:010d}", r, Decimal(a), f"{seq:010d}", False)
        for k, (r, a) in after.items()
        if before.get(k) != (r, a)
    ]
    rows += [
        (k, f"{seq:010d}", *before[k][:1], Decimal(before[k][1]), f"{seq:010d}", True) for k in before if k not in after
    ]
    frame = spark.createDataFrame(
        rows, "id bigint, seq string, region string, amount decimal(10,2), _odp_seq string, _hoodie_is_deleted boolean"
    )
    options = hudi_write_options(
        HudiTarget.from_table(table),
        operation=WriteOperation.UPSERT,
        catalog_sync=False,
        profile=WriteProfile(HudiProfile.LOCAL),
    )
    frame.write.format("hudi").options(**options).mode("append").save(roots.table_path(table))


def table_rows(spark, path: str, columns: list[str]) -> set[tuple]:
    return {tuple(row) for row in spark.read.format("hudi").load(path).select(*columns).collect()}


def sql_over_source(spark, roots: LakeRoots, config: OdpConfig) -> set[tuple]:
    """What a full refresh of clean computes: the SQL over the whole current raw table."""
    spark.read.format("hudi").load(roots.table_path(config.table(ORDERS))).createOrReplaceTempView("orders")
    return {tuple(row) for row in spark.sql(CLEAN_SQL).collect()}


def deployed(config: OdpConfig, dynamodb: Any) -> dict[str, str]:
    """``config`` loaded into moto by the Configuration Manager, as the pipeline does after a deploy; the job's
    arguments naming its tables (DatasetJobArgs fields)."""
    names = tracker_table_names("test")
    create_tables(dynamodb.meta.client, names)
    load_into_dynamodb(
        config,
        "test",
        dynamodb.Table(names["table_config"]),
        dynamodb.Table(names["batch_config"]),
        dataset_config_table=dynamodb.Table(names[DATASET_CONFIG]),
    )
    return TABLES


def test_rounds_incremental_equals_full_and_models(spark, lake, dynamodb) -> None:
    """Every round refreshes from the configuration the job reads from DynamoDB (table_config, dataset_config)."""
    config, roots = lake
    job_config = read_config(DatasetJobArgs(roots, **deployed(config, dynamodb)), dynamodb=dynamodb)
    assert job_config.datasets == config.datasets
    assert job_config.tables == (config.table(ORDERS),)
    clean, by_region = job_config.datasets  # dependency order
    assert [clean.name, by_region.name] == ["clean", "by_region"]
    clean_path, by_region_path = roots.dataset_path(clean), roots.dataset_path(by_region)
    before: dict = {}
    refreshes = []
    for number, raw in enumerate(ROUNDS, start=1):
        write_raw(spark, config, roots, before, raw, seq=number)
        before = raw
        outcome = run_datasets(spark, job_config, DatasetJobArgs(roots, **TABLES, changed_tables=(ORDERS,)))
        assert [(r.dataset, r.status) for r in outcome.runs] == [
            ("clean", RunStatus.WRITTEN),
            ("by_region", RunStatus.WRITTEN),
        ], [r.summary() for r in outcome.runs]
        refreshes.append([r.refresh for r in outcome.runs])
        expected_clean = {(k, r, a) for k, (r, a) in model_clean(raw).items()}
        assert table_rows(spark, clean_path, ["id", "region", "amount"]) == expected_clean
        assert sql_over_source(spark, roots, config) == expected_clean
        expected_groups = {(g, n, t) for g, (n, t) in model_by_region(raw).items()}
        assert table_rows(spark, by_region_path, ["region", "orders", "revenue"]) == expected_groups
        assert consumed_instants(spark, clean_path) == {
            ORDERS: latest_instant(spark, roots.table_path(config.table(ORDERS)))
        }
    # The first run recomputes; the next round of clean reads only the changed raw rows.
    assert refreshes == [["full", "full"], ["incremental", "full"]]
    # Round 2: id 3 deleted and id 1 filtered out reached the dataset as deletes.
    # Nothing changed since: every dataset is up to date, no commit is made.
    commits = len(completed_commits(spark, clean_path))
    again = run_datasets(spark, job_config, DatasetJobArgs(roots, **TABLES))
    assert [r.status for r in again.runs] == [RunStatus.UP_TO_DATE] * 2
    assert len(completed_commits(spark, clean_path)) == commits


def test_failed_rule_writes_nothing_and_reports_rows(spark, lake) -> None:
    config, roots = lake
    clean = config.datasets[0]
    strict = clean.model_copy(
        update={
            "quality": (
                ExpressionRule(type="expression", name="small_orders", expression="amount < 20"),
                RowCountRule(type="row_count", max=2, severity="warn"),
            )
        }
    )
    refresher = DatasetRefresher(spark, roots, {t.table_id: t for t in config.tables}, {"clean": strict})
    path = roots.dataset_path(clean)
    stored = {(k, r, a) for k, (r, a) in model_clean(ROUNDS[-1]).items()}  # as test_rounds left it
    commits = len(completed_commits(spark, path))
    run = refresher.refresh(strict, force_full=True)
    assert run.status is RunStatus.QUALITY_FAILED
    failed = {rule.rule: rule for rule in run.rules if not rule.passed}
    assert failed["small_orders"].failing_rows == 2
    assert failed["small_orders"].severity == "fail"
    assert {row["id"] for row in failed["small_orders"].examples} == {2, 5}
    assert failed["row_count"].severity == "warn"
    assert failed["row_count"].detail == "(3 rows, bounds None..2)"
    assert "fail rule small_orders: 2 row(s) not amount < 20" in run.summary()
    assert len(completed_commits(spark, path)) == commits
    assert table_rows(spark, path, ["id", "region", "amount"]) == stored


def test_crash_after_commit_reruns_as_up_to_date(spark, lake) -> None:
    """A crash between the dataset's commit and any bookkeeping: the rerun applies nothing twice. The round it
    interrupts is the last of test_rounds's: incremental still equals full, an aggregate's group vanishes and a row
    filtered out comes back."""
    config, roots = lake
    after = LAST_ROUND
    write_raw(spark, config, roots, ROUNDS[-1], after, seq=len(ROUNDS) + 1)

    def crash(*, table_id: str, instant: str) -> None:  # at datasets.after_commit: table_id is the dataset
        raise RuntimeError(f"killed after the commit of {table_id}")

    with on_fault(AFTER_COMMIT_FAULT, crash):
        crashed = run_datasets(spark, config, DatasetJobArgs(roots, **TABLES, datasets=("clean",)))
    assert crashed.runs[0].status is RunStatus.FAILED
    assert crashed.runs[0].error == "RuntimeError: killed after the commit of clean"
    path = roots.dataset_path(config.datasets[0])
    commits = len(completed_commits(spark, path))
    rerun = run_datasets(spark, config, DatasetJobArgs(roots, **TABLES, changed_tables=(ORDERS,)))
    assert [(r.dataset, r.status) for r in rerun.runs] == [
        ("clean", RunStatus.UP_TO_DATE),
        ("by_region", RunStatus.WRITTEN),
    ]
    assert len(completed_commits(spark, path)) == commits
    expected_clean = {(k, r, a) for k, (r, a) in model_clean(after).items()}
    assert table_rows(spark, path, ["id", "region", "amount"]) == expected_clean
    assert sql_over_source(spark, roots, config) == expected_clean
    expected_groups = {(g, n, t) for g, (n, t) in model_by_region(after).items()}
    assert table_rows(spark, roots.dataset_path(config.datasets[1]), ["region", "orders", "revenue"]) == expected_groups


def test_a_source_without_a_commit_waits_not_fails(spark, tmp_path: Path) -> None:
    """Every dataset refreshed (a summary past its bound of table ids hands the job ALL_TABLES) before its raw
    table's first commit: each dataset waits, naming its missing source, writes nothing and alerts no one."""
    config, roots = new_lake(tmp_path)
    outcome = run_datasets(spark, config, DatasetJobArgs(roots, **TABLES, changed_tables=(ALL_TABLES,)))
    assert [(r.dataset, r.status, r.waiting_for) for r in outcome.runs] == [
        ("clean", RunStatus.WAITING, (ORDERS,)),
        ("by_region", RunStatus.WAITING, ("dataset:clean",)),
    ]
    assert outcome.failed == []
    assert not any(should_notify(run) for run in outcome.runs)
    assert (
        outcome.runs[0].summary()
        == f"clean: waiting_for_sources (incremental) +0 -0; waiting for a first commit of {ORDERS}"
    )
    assert not Path(roots.dataset_path(config.datasets[0]).removeprefix("file://")).exists()


def test_an_input_that_does_not_read_fails_its_dataset_naming_the_input(spark, tmp_path: Path) -> None:
    """A base file of the raw table damaged: the refresh fails (nothing written) naming the input it read, not
    with Spark's error alone."""
    config, roots = new_lake(tmp_path)
    clean = config.datasets[0]
    write_raw(spark, config, roots, {}, ROUNDS[0], seq=1)
    raw_path = roots.table_path(config.table(ORDERS))
    for path in Path(raw_path.removeprefix("file://")).rglob("*.parquet"):
        if ".hoodie" not in path.parts:
            path.write_bytes(b"PAR1 truncated upload")
    run = DatasetRefresher(spark, roots, {t.table_id: t for t in config.tables}, {"clean": clean}).refresh(clean)
    assert run.status is RunStatus.FAILED
    assert run.error.startswith(f"DatasetInputError: input orders ({ORDERS} at {raw_path}) does not read: "), run.error
    assert ".parquet" in run.error  # the cause names the base file (locally: Hadoop's checksum of it fails)
    assert completed_commits(spark, roots.dataset_path(clean)) == []
