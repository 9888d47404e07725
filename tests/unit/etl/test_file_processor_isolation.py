"""One table's failure never stops the rest: bad files, schema changes, leases, the job's exit code."""

from __future__ import annotations

import pyarrow as pa
import pytest

from etl.jobs.file_processor import main
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.tracker import ProcessingTracker, RunStatus
from tests.support.lake import Lake, hudi_rs_rows, rows_of, small_table_config

V1 = pa.schema([("Op", pa.string()), ("seq", pa.string()), ("id", pa.int32()), ("n", pa.int32())])
V2 = pa.schema(
    [("Op", pa.string()), ("seq", pa.string()), ("id", pa.int32()), ("n", pa.int64()), ("extra", pa.string())]
)
# carries every stored column (a file without one is refused: missing_columns), with n changed to text
V3 = pa.schema(
    [("Op", pa.string()), ("seq", pa.string()), ("id", pa.int32()), ("n", pa.string()), ("extra", pa.string())]
)


@pytest.mark.spark
def test_bad_table_fails_alone_lease_skips_and_schema_evolves(spark, lake: Lake) -> None:
    good = lake.configure(small_table_config("evolving"))
    bad = lake.configure(small_table_config("broken"))
    leased = lake.configure(small_table_config("leased"))
    lake.land_parquet(good, "20260101-1.parquet", [{"Op": "I", "seq": "1", "id": 1, "n": 10}], V1)
    lake.land_parquet(bad, "20260101-1.parquet", [{"Op": "I", "seq": "1", "id": 1, "n": 10}], V1)
    # a table-level failure: a CSV file on a table with no columns (a bad file alone is quarantined instead)
    lake.land_text(bad, "20260101-2.csv", "I,2,2,20\n")
    lake.land_parquet(leased, "20260101-1.parquet", [{"Op": "I", "seq": "1", "id": 1, "n": 10}], V1)
    processing = ProcessingTracker(lake.tables["processing_tracker"], lake.tables["processing_tracker_history"])
    assert processing.acquire(leased.table_id, "another-run", lease_seconds=600)

    outcome = lake.run(spark, good.table_id, bad.table_id, leased.table_id)
    by_id = {result.table_id: result for result in outcome.tables}
    assert by_id[good.table_id].status is RunStatus.COMPLETED
    assert by_id[bad.table_id].status is RunStatus.REFRESH_ERROR
    assert "src.app.broken: CSV files need the table's columns in its configuration" in by_id[bad.table_id].error
    assert by_id[leased.table_id].status is RunStatus.SKIPPED
    assert [r.table_id for r in outcome.failed] == [bad.table_id]
    # the failed table: nothing committed, files left landed, error and trace on the tracker
    assert len(lake.landed(bad.table_id)) == 2
    assert not (lake.root / "raw" / "lake_db" / "broken" / ".hoodie").exists()
    state = processing.state(bad.table_id)
    assert state.status is RunStatus.REFRESH_ERROR
    assert "CSV files need the table's columns" in state.last_run.error
    assert "TableConfigError" in state.last_run.error_trace
    assert lake.quarantined(bad.table_id) == []  # an error naming no file sets no file aside
    assert state.lease_owner is None
    assert len(lake.landed(leased.table_id)) == 1
    assert processing.state(leased.table_id).lease_owner == "another-run"

    # schema evolution: a new nullable column and int -> bigint widening
    lake.land_parquet(
        good, "20260101-2.parquet", [{"Op": "I", "seq": "2", "id": 2, "n": 5_000_000_000, "extra": "x"}], V2
    )
    evolved = lake.run(spark, good.table_id).tables[0]
    assert evolved.status is RunStatus.COMPLETED, evolved.error
    assert rows_of(spark, evolved.base_path, ["id", "n", "extra"]) == [(1, 10, None), (2, 5_000_000_000, "x")]
    assert hudi_rs_rows(evolved.base_path, ["id", "n", "extra"]) == [(1, 10, None), (2, 5_000_000_000, "x")]

    # an incompatible change fails only that table, with a clear error
    lake.land_parquet(good, "20260101-3.parquet", [{"Op": "U", "seq": "3", "id": 1, "n": "ten"}], V3)
    incompatible = lake.run(spark, good.table_id).tables[0]
    assert incompatible.status is RunStatus.REFRESH_ERROR
    assert "SchemaEvolutionError" in incompatible.error
    assert "column n: table has bigint, files bring string" in incompatible.error
    assert len(lake.landed(good.table_id)) == 1


@pytest.mark.spark
def test_job_entry_point_exits_non_zero_when_a_table_fails(spark, lake: Lake) -> None:
    args = FileProcessorJobArgs.static_arguments(
        environment="test", cadence="hourly", raw_root=lake.raw_root, tracker_tables=lake.names, catalog_sync=False
    ) | FileProcessorJobArgs.run_arguments(["src.app.unconfigured"], "b1")
    argv = ["file_processor.py", *[part for name, value in args.items() for part in (name, value)]]
    assert main(argv) == 1
    state = ProcessingTracker(lake.tables["processing_tracker"], lake.tables["processing_tracker_history"]).state(
        "src.app.unconfigured"
    )
    assert state.status is RunStatus.REFRESH_ERROR
    assert "no table_config item" in state.last_run.error


def test_an_inactive_table_is_skipped_and_keeps_its_files(spark, lake: Lake) -> None:
    config = lake.configure(small_table_config("retired").model_copy(update={"is_active": False}))
    lake.land_text(config, "20260101-000001.csv", "Op,seq,id\nI,1,1\n")
    # No Spark job: the job decides before reading anything (the session only names the table's pool).
    result = lake.run(spark, config.table_id).tables[0]
    assert result.status is RunStatus.SKIPPED
    assert result.error == "inactive in table_config: its files stay landed"
    assert [f.file_name for f in lake.landed(config.table_id)] == ["20260101-000001.csv"]
