"""The demo's datasets: refreshed after each round, checked against a plain-Python model of the sources.

The models below restate config/datasets/trips_clean.sql and revenue_per_vendor_day.sql in Python
over the demo generator's model of raw table_1 (never over what the job wrote). After the last
round a stricter copy of trips_clean (a ``fail`` rule the data breaks) is refreshed: it must report
the rule with its rows and leave the dataset as it was.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

from etl.datasets.job import run_datasets
from etl.datasets.refresh import DatasetRefresher
from etl.hudi.timeline import latest_instant
from etl.jobs.dataset_job import read_config
from odp.config.datasets import ExpressionRule
from odp.config.loader import OdpConfig
from odp.contracts.datasets import DatasetJobArgs, LakeRoots, config_tables
from odp.tracker.dataset_run import DatasetRun
from odp.tracker.statuses import RunStatus
from sandbox.account import ENVIRONMENT, SandboxLayout
from sandbox.emr import EmrRunError, run_emr_entry_point
from sandbox.job_process import configured_aws
from sandbox.staging import hadoop_file_uri

LOG = logging.getLogger("sandbox")
EMR_CHECKED_DATASET = "trips_clean"
WRITER_COLUMNS = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_file_name")  # differ between writers
TRIPS = "taxi_trips_dms.taxi_trips.table_1"
CENT = Decimal("0.01")


def lake_roots(layout: SandboxLayout) -> LakeRoots:
    return LakeRoots(
        raw=layout.raw_root,
        conformed=hadoop_file_uri(layout.lake / "conformed"),
        purpose_built=hadoop_file_uri(layout.lake / "purpose_built"),
    )


def _cents(value: float) -> Decimal:
    return Decimal(str(value)).quantize(CENT, rounding=ROUND_HALF_UP)


def trips_clean_model(raw: Iterable[dict[str, Any]]) -> set[tuple[Any, ...]]:
    """(pk_id, vendor_id, pickup_date, total_amount) of every trip trips_clean keeps."""
    return {
        (row["pk_id"], int(row["vendorid"]), row["tpep_pickup_datetime"].astimezone(UTC).date(), _cents(total))
        for row in raw
        if row["tpep_pickup_datetime"] is not None and (total := row["total_amount"]) is not None and total >= 0
    }


def revenue_model(raw: Iterable[dict[str, Any]]) -> set[tuple[Any, ...]]:
    """(vendor_id, pickup_date, trips, revenue) per vendor and day."""
    groups: dict[tuple[Any, Any], tuple[int, Decimal]] = {}
    for _, vendor, day, total in trips_clean_model(raw):
        trips, revenue = groups.get((vendor, day), (0, Decimal(0)))
        groups[(vendor, day)] = (trips + 1, revenue + total)
    return {(vendor, day, trips, revenue) for (vendor, day), (trips, revenue) in groups.items()}


def _rows(spark: Any, path: str, columns: list[str]) -> set[tuple[Any, ...]]:
    return {tuple(row) for row in spark.read.format("hudi").load(path).select(*columns).collect()}


def refresh_and_check(
    spark: Any, config: OdpConfig, layout: SandboxLayout, changed: Iterable[str], raw_rows: list[dict[str, Any]]
) -> list[tuple[str, bool, str]]:
    """Refresh the datasets downstream of ``changed`` as the dataset job does, its configuration read from DynamoDB
    holding ``config`` (:func:`sandbox.job_process.configured_aws`); (description, ok, detail) per dataset and
    model check."""
    roots = lake_roots(layout)
    with configured_aws(config) as tables:
        args = DatasetJobArgs(roots, **tables, changed_tables=tuple(changed), hudi_profile="local")
        outcome = run_datasets(spark, read_config(args), args)
    checks = [
        (f"dataset {run.dataset}: refreshed", not run.status.failed,
         run.summary())
        for run in outcome.runs
    ]  # fmt: skip
    datasets = {d.name: d for d in config.datasets}
    models = {
        "trips_clean": (["pk_id", "vendor_id", "pickup_date", "total_amount"], trips_clean_model(raw_rows)),
        "revenue_per_vendor_day": (["vendor_id", "pickup_date", "trips", "revenue"], revenue_model(raw_rows)),
    }
    for name, (columns, expected) in models.items():
        if name not in datasets or latest_instant(spark, roots.dataset_path(datasets[name])) is None:
            continue
        actual = _rows(spark, roots.dataset_path(datasets[name]), columns)
        missing, extra = len(expected - actual), len(actual - expected)
        detail = f"{len(actual)} rows, model {len(expected)}; missing {missing}, extra {extra}"
        checks.append((f"dataset {name}: matches the model", actual == expected, detail))
        LOG.info("dataset %s: %s", name, "matches the model" if actual == expected else f"MISMATCH ({detail})")
    return checks


def failing_rule_check(spark: Any, config: OdpConfig, layout: SandboxLayout) -> tuple[str, bool, str]:
    """A fail rule the data breaks (every trip under 10 dollars): reported with rows, nothing written."""
    roots = lake_roots(layout)
    clean = next(d for d in config.datasets if d.name == "trips_clean")
    strict = clean.model_copy(
        update={
            "quality": (ExpressionRule(type="expression", name="cheap_trips_only", expression="total_amount < 10"),)
        }
    )
    path = roots.dataset_path(clean)
    before = latest_instant(spark, path)
    refresher = DatasetRefresher(spark, roots, {t.table_id: t for t in config.tables}, {"trips_clean": strict})
    run: DatasetRun = refresher.refresh(strict, force_full=True)
    failed = [rule for rule in run.failed_rules if rule.rule == "cheap_trips_only"]
    untouched = latest_instant(spark, path) == before
    ok = run.status is RunStatus.QUALITY_FAILED and bool(failed) and failed[0].failing_rows > 0 and untouched
    LOG.info("quality gate: %s; dataset %s", run.summary(), "untouched" if untouched else "CHANGED")
    return "dataset trips_clean: a failed rule leaves it untouched", ok, run.summary()


def emr_roots(layout: SandboxLayout) -> LakeRoots:
    """The zones the EMR entry point writes in the sandbox: the same raw tables, zones of its own."""
    return replace(
        lake_roots(layout),
        conformed=hadoop_file_uri(layout.lake / "emr" / "conformed"),
        purpose_built=hadoop_file_uri(layout.lake / "emr" / "purpose_built"),
    )


def data_rows(spark: Any, path: str) -> set[tuple[Any, ...]]:
    """A Hudi table's rows without the columns that name its commit or file (they differ between two writers)."""
    frame = spark.read.format("hudi").load(path)
    columns = [
        c for c in frame.columns if c not in ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_file_name")
    ]
    return {tuple(row) for row in frame.select(*sorted(columns)).collect()}


def emr_engine_check(
    spark: Any, config: OdpConfig, layout: SandboxLayout, config_dir: Path, dataset: str = EMR_CHECKED_DATASET
) -> tuple[str, bool, str]:
    """``dataset`` refreshed in full by the EMR Serverless entry point (spark-submit, its own JVM) into the
    EMR zones holds the same rows as the one the in-process dataset job wrote; the process reads ``config_dir`` as
    loaded into its DynamoDB (sandbox/job_process/)."""
    by_name = {d.name: d for d in config.datasets}
    tables = config_tables(ENVIRONMENT)
    args = DatasetJobArgs(emr_roots(layout), **tables, datasets=(dataset,), full_refresh=True)
    try:
        run_emr_entry_point("dataset_job", args.to_arguments(), workdir=layout.lake / "emr", config_dir=config_dir)
    except EmrRunError as error:
        return f"dataset {dataset}: EMR entry point (spark-submit)", False, str(error)
    theirs = data_rows(spark, emr_roots(layout).dataset_path(by_name[dataset]))
    ours = data_rows(spark, lake_roots(layout).dataset_path(by_name[dataset]))
    detail = f"{len(theirs)} rows through spark-submit, {len(ours)} in-process; differ in {len(theirs ^ ours)}"
    LOG.info("dataset %s through the EMR entry point: %s", dataset, "same rows" if theirs == ours else detail)
    return f"dataset {dataset}: EMR entry point (spark-submit) writes the same rows", theirs == ours, detail
