"""The whole flow on the sandbox: real state machine (moto), real Lambda handlers, real job on Spark + Hudi.

Expectations come from sandbox.demo_data's model of the source tables (plain Python), never from
the job; tables are read back with Spark (sandbox.validation).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from odp.config.loader import OdpConfig
from odp.tracker import RunStatus
from sandbox.account import SandboxLayout
from sandbox.demo_data import DemoGenerator
from sandbox.report import render_report
from sandbox.runner import RunHooks, run_sandbox
from sandbox.validation import check_table

TABLE_1 = "taxi_trips_dms.taxi_trips.table_1"
TABLE_2 = "taxi_trips_dms.taxi_trips.table_2"
PRODUCTS = "inventory_debezium.inventory.products"


@pytest.fixture
def layout(tmp_path: Path) -> SandboxLayout:
    layout = SandboxLayout(lake=tmp_path / "lake", staging=tmp_path / "staging")
    layout.staging.mkdir()
    return layout


@pytest.mark.spark
@pytest.mark.slow
def test_a_corrupt_file_is_quarantined_its_table_goes_on_and_the_alert_names_it(
    config: OdpConfig, layout: SandboxLayout, spark: object
) -> None:
    generator = DemoGenerator(config, layout.staging, table_ids=(TABLE_1, TABLE_2))
    generator.generate_round(0)
    key = "taxi_trips_dms/taxi_trips/table_2/2026/01/01/20260101-000000999.parquet"
    corrupt = layout.staging / key
    corrupt.parent.mkdir(parents=True)
    corrupt.write_bytes(b"PAR1 this is not a parquet file")

    first = run_sandbox(config, layout, spark, cadence="every_10_minutes")

    assert first.ok, first.tables  # every table applied its good files in this run
    assert first.table(TABLE_1).status is RunStatus.COMPLETED
    table_2_run = first.table(TABLE_2)
    assert table_2_run.status is RunStatus.COMPLETED, table_2_run.error
    assert (table_2_run.files, table_2_run.run.quarantined_files) == (1, (key,))
    assert table_2_run.row()["quarantined_files"] == [key]  # the report's JSON, and its text:
    assert f"quarantined by this run ({TABLE_2}; python -m odp status names why): {key}" in render_report(first)
    execution = first.cadences[0]
    assert execution.status == "SUCCEEDED"
    assert [alert["subject"] for alert in execution.alerts] == [
        "ODP File Processor quarantined files: every_10_minutes"
    ]
    summary = execution.alerts[0]["message"]["summary"]  # the SNS line: the Summarise state's output
    assert summary["quarantined_files"] == 1
    assert [row["quarantined_files"] for row in summary["tables"] if row["table_id"] == TABLE_2] == [[key]]
    for table_id in (TABLE_1, TABLE_2):
        table = generator.tables[table_id]
        assert check_table(spark, first.table(table_id).base_path, table.config, table.expected_rows(0)).ok

    # the operator deletes the bad file instead of fixing it: the next run has nothing to do and alerts no one
    corrupt.unlink()
    rerun = run_sandbox(config, layout, spark, cadence="every_10_minutes")

    assert rerun.ok, rerun.tables
    assert rerun.withdrawn_files == [key]
    assert {rerun.table(t).status for t in (TABLE_1, TABLE_2)} == {RunStatus.NOT_RUN}
    assert rerun.cadences[0].alerts == []

    # a failure that names no file (the configured index differs from the stored one) fails only its table,
    # sets no file aside, and the execution ends failed with its alert
    generator.generate_round(1)
    tables = tuple(t.model_copy(update={"index_buckets": 4}) if t.table_id == TABLE_2 else t for t in config.tables)
    failed = run_sandbox(replace(config, tables=tables), layout, spark, cadence="every_10_minutes")

    assert [table.table_id for table in failed.tables if not table.ok] == [TABLE_2]
    broken = failed.table(TABLE_2)
    assert broken.status is RunStatus.REFRESH_ERROR
    assert "TableConfigError" in broken.error
    assert "written with the simple index" in broken.error  # a small table left to its size (small_table_rows)
    assert broken.run.quarantined_files == ()
    execution = failed.cadences[0]
    assert execution.status == "FAILED"
    assert [alert["subject"] for alert in execution.alerts] == ["ODP File Processor failed: every_10_minutes"]
    assert TABLE_2 in str(execution.alerts[0]["message"])


@pytest.mark.spark
@pytest.mark.slow
def test_a_rerun_with_no_new_files_does_no_glue_work(config: OdpConfig, layout: SandboxLayout, spark: object) -> None:
    generator = DemoGenerator(config, layout.staging, table_ids=(PRODUCTS,))
    generator.generate_round(0)
    first_hooks = RunHooks()
    first = run_sandbox(config, layout, spark, cadence="every_15_minutes", hooks=first_hooks)
    assert first.ok
    assert first.table(PRODUCTS).files == 1
    assert first.cadences[0].glue_runs == 1
    # started on the workers its plan chose (every_15_minutes: G.1X, 2 workers)
    assert first_hooks.bindings.glue_run_sizes == [("G.1X", 2)]

    hooks = RunHooks()
    second = run_sandbox(config, layout, spark, hooks=hooks)

    assert second.ok
    assert second.announced_files == 0
    assert hooks.bindings.glue_calls == []
    assert {table.status for table in second.tables} == {RunStatus.NOT_RUN}
    assert [execution.status for execution in second.cadences] == ["SUCCEEDED"] * len(config.cadences.cadences)
    # Tracker state came back from the lake folder: the table is still at its first commit.
    table = generator.tables[PRODUCTS]
    base_path = first.table(PRODUCTS).base_path
    assert check_table(spark, base_path, table.config, table.expected_rows(0)).ok
    # The validation can fail: one changed value or one missing row is seen by both readers.
    changed = table.expected_rows(0)
    changed[3] = {**changed[3], "weight": changed[3]["weight"] + 0.001}
    wrong = check_table(spark, base_path, table.config, changed)
    assert not wrong.ok
    assert (wrong.actual_rows, wrong.hudi_rs_rows) == (len(changed), len(changed))
    assert wrong.expected_checksum not in (wrong.actual_checksum, wrong.hudi_rs_checksum)
    short = check_table(spark, base_path, table.config, table.expected_rows(0)[1:])
    assert not short.spark_ok
    assert not short.hudi_rs_ok


def test_the_state_machine_with_an_empty_batch_list_succeeds_without_glue(
    config: OdpConfig, layout: SandboxLayout
) -> None:
    """Nothing landed: the real Batch Manager plans no batch, the Choice ends at NothingToDo."""
    hooks = RunHooks()
    report = run_sandbox(config, layout, spark=None, hooks=hooks)

    assert report.ok
    assert [execution.status for execution in report.cadences] == ["SUCCEEDED"] * 3
    assert all(execution.glue_runs == 0 for execution in report.cadences)
    assert hooks.bindings.glue_calls == []
    planned = [event for name, event in hooks.bindings.lambda_calls]
    assert [event["action"] for event in planned] == ["plan"] * 3  # no summarise: the Map never ran
    assert all(execution.alerts == [] for execution in report.cadences)
