"""``sandbox run`` refreshes the datasets downstream of the tables it processed, through the datasets
state machine started with each File Processor execution's event (as the deployed EventBridge rule does),
with the user's own configuration."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml

from odp.config.loader import load_config
from odp.tracker.statuses import RunStatus
from sandbox.account import SandboxLayout
from sandbox.datasets import lake_roots
from sandbox.demo_data import DemoGenerator
from sandbox.runner import run_sandbox

TABLE_2 = "taxi_trips_dms.taxi_trips.table_2"
OWN_DATASET = {
    "name": "vendor_trips",
    "zone": "purpose_built",
    "database": "taxi_trips_dms_purpose_built",
    "sources": [{"name": "trips", "table": TABLE_2}],
    "key": ["vendor_id"],
    "refresh": "full",
}
OWN_SQL = "SELECT CAST(vendorid AS INT) AS vendor_id, COUNT(*) AS trips FROM trips GROUP BY vendorid"


@pytest.mark.spark
@pytest.mark.slow
def test_run_refreshes_the_datasets_downstream_of_what_it_processed(
    repo_root: Path, tmp_path: Path, spark: object
) -> None:
    config_dir = tmp_path / "config"
    shutil.copytree(repo_root / "config", config_dir)
    (config_dir / "datasets" / "vendor_trips.yaml").write_text(yaml.safe_dump(OWN_DATASET, sort_keys=False))
    (config_dir / "datasets" / "vendor_trips.sql").write_text(OWN_SQL)
    config = load_config(config_dir)
    layout = SandboxLayout(lake=tmp_path / "lake", staging=tmp_path / "staging")
    layout.staging.mkdir()
    generator = DemoGenerator(config, layout.staging, table_ids=(TABLE_2,))
    generator.generate_round(0)

    report = run_sandbox(config, layout, spark, refresh_datasets=True)

    assert report.ok, report.to_json()
    assert report.table(TABLE_2).status is RunStatus.COMPLETED
    # One datasets execution per File Processor execution that ran a batch: table_2's cadence.
    assert [(e.cadence, e.status) for e in report.dataset_executions] == [("every_10_minutes", "SUCCEEDED")]
    # Only the user's dataset reads table_2: trips_clean and revenue_per_vendor_day (table_1) are not run.
    assert [(d.dataset, d.status) for d in report.datasets] == [("vendor_trips", RunStatus.WRITTEN)]
    dataset = next(d for d in config.datasets if d.name == "vendor_trips")
    rows = spark.read.format("hudi").load(lake_roots(layout).dataset_path(dataset)).select("vendor_id", "trips")
    expected = Counter(int(row["vendorid"]) for row in generator.tables[TABLE_2].expected_rows(0))
    assert {(r.vendor_id, r.trips) for r in rows.collect()} == set(expected.items())
    assert "dataset vendor_trips: written" in "\n".join(f"dataset {d.summary()}" for d in report.datasets)

    # Nothing new in staging: no batch ran, so no dataset is refreshed.
    again = run_sandbox(config, layout, spark, refresh_datasets=True)
    assert again.ok
    assert again.dataset_executions == []
    assert again.datasets == []
