"""The record level index on tables written before it existed, and MERGE_ON_READ compaction on its schedule."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import etl.writer
from etl.hudi_options import DEFAULT_COMPACTION_DELTA_COMMITS, hudi_write_options
from etl.processor import TableStatus
from etl.timeline import completed_commits
from odp.config.models import TableType
from tests.unit.etl.conftest import Lake, rows_of, table_config

CDC = pa.schema([("Op", pa.string()), ("seq", pa.string()), ("id", pa.int32()), ("region", pa.string())])

# How partitioned current tables were written before the record level index (etl/README.md, "Upgrading").
BEFORE_RECORD_INDEX = {
    "hoodie.index.type": "GLOBAL_SIMPLE",
    "hoodie.simple.index.update.partition.path": "true",
    "hoodie.metadata.enable": "false",
    "hoodie.metadata.record.index.enable": "false",
}


@pytest.mark.spark
def test_a_table_written_with_the_old_global_simple_index_moves_to_the_record_index(
    spark, lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = lake.configure(table_config("legacy", partition_by=("region",)))
    rows = [{"Op": "I", "seq": "1", "id": 1, "region": "eu"}, {"Op": "I", "seq": "1", "id": 2, "region": "eu"}]
    lake.land_parquet(config, "20260101-1.parquet", rows, CDC)
    with monkeypatch.context() as patch:
        patch.setattr(
            etl.writer, "hudi_write_options", lambda *a, **k: {**hudi_write_options(*a, **k), **BEFORE_RECORD_INDEX}
        )
        old = lake.run(spark, config.table_id).tables[0]
    assert old.status is TableStatus.COMPLETED, old.error
    base = Path(old.base_path.removeprefix("file://"))
    assert not (base / ".hoodie" / "metadata").exists()  # an old table: no metadata table, no record index

    # the first run with today's options builds the metadata table and the record index from the table's
    # files, and the index is global from that commit on: a row that changes partition moves, a delete
    # whose image carries a stale partition value finds its row
    moves = [{"Op": "U", "seq": "2", "id": 1, "region": "us"}, {"Op": "D", "seq": "3", "id": 2, "region": "us"}]
    lake.land_parquet(config, "20260101-2.parquet", moves, CDC)
    upgraded = lake.run(spark, config.table_id).tables[0]
    assert upgraded.status is TableStatus.COMPLETED, upgraded.error
    # Hudi's statistics count a move as an insert into the new partition and a delete from the old one
    assert (upgraded.inserts, upgraded.updates, upgraded.deletes) == (1, 0, 2)
    assert rows_of(spark, upgraded.base_path, ["id", "region", "_hoodie_partition_path"]) == [(1, "us", "region=us")]
    assert (base / ".hoodie" / "metadata" / "record_index").is_dir()


@pytest.mark.spark
def test_merge_on_read_compacts_inline_every_n_delta_commits(spark, lake: Lake) -> None:
    config = lake.configure(table_config("busy", table_type=TableType.MERGE_ON_READ))

    def run(wave: int) -> str:
        change = {"Op": "I" if wave == 1 else "U", "seq": f"{wave:03d}", "id": 1, "region": f"r{wave}"}
        lake.land_parquet(config, f"20260101-{wave:03d}.parquet", [change], CDC)
        result = lake.run(spark, config.table_id).tables[0]
        assert result.status is TableStatus.COMPLETED, result.error
        return result.base_path

    for wave in range(1, DEFAULT_COMPACTION_DELTA_COMMITS):
        base_path = run(wave)
    actions = [commit.action for commit in completed_commits(spark, base_path)]
    # runs below the schedule only append delta commits: ingestion never waits for a compaction
    assert actions == ["deltacommit"] * (DEFAULT_COMPACTION_DELTA_COMMITS - 1)

    base_path = run(DEFAULT_COMPACTION_DELTA_COMMITS)
    commits = completed_commits(spark, base_path)
    assert [c.action for c in commits].count("deltacommit") == DEFAULT_COMPACTION_DELTA_COMMITS
    assert [c.action for c in commits][-1] == "commit"  # the compaction, inline after the N-th delta commit
    assert commits[-1].file_ids == ()  # a compaction consumes no landed file
    assert rows_of(spark, base_path, ["id", "region"]) == [(1, f"r{DEFAULT_COMPACTION_DELTA_COMMITS}")]
