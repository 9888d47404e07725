"""Upsert or rewrite (issue 27): both plans give the same table, on Spark and on hudi-rs, and the record index
stays right after a rewrite (etl.hudi.write_strategy, etl.hudi.rewrite).

Two tables get the same files. The cost model upserts the 20% wave of a 300-row table (a rewrite would save
milliseconds); the other table's run is priced without the minimum saving, so the same wave rewrites it. The wave holds updates, deletes, inserts, updates and deletes older than
the stored rows (they must lose), and the run after it upserts again into keys the rewrite wrote, deleted and kept.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from etl.hudi import write_strategy
from etl.hudi.timeline import completed_commits
from odp.tracker import RunStatus, TableRun, WriteStrategy
from tests.support.lake import Lake, hudi_rs_rows, rows_of, table_config

CDC = pa.schema([("Op", pa.string()), ("SEQ", pa.string()), ("ID", pa.int32()), ("NAME", pa.string())])
NEWER = range(51, 61)  # keys stored with a later sequence than the rest


def _c(op: str, seq: str, key: int, name: str) -> dict:
    return {"Op": op, "SEQ": seq, "ID": key, "NAME": name}


FIRST = [_c("I", "00020" if key in NEWER else "00001", key, f"n{key}") for key in range(1, 301)]
WAVE = (
    [_c("U", "00010", key, f"u{key}") for key in range(1, 41)]
    + [_c("D", "00010", key, f"n{key}") for key in range(41, 51)]
    + [_c("U", "00015", key, f"late{key}") for key in range(51, 56)]  # older than the stored 00020: lose
    + [_c("D", "00015", key, f"n{key}") for key in (56, 57)]  # a delete older than the stored row: loses
    + [_c("I", "00010", key, f"i{key}") for key in range(301, 306)]
)
AFTER = [
    _c("I", "00030", 41, "back"),  # deleted by the rewrite: comes back
    _c("U", "00030", 1, "u1-again"),  # rewritten into a new file group: found there
    _c("U", "00030", 301, "i301-again"),  # inserted by the rewrite
    _c("D", "00030", 2, "u2"),
]

# The expected tables, written out from the changes above (not by the code under test).
AFTER_FIRST = {key: f"n{key}" for key in range(1, 301)}
AFTER_WAVE = (
    {key: f"u{key}" for key in range(1, 41)}
    | {key: f"n{key}" for key in range(51, 301)}
    | {key: f"i{key}" for key in range(301, 306)}
)
AFTER_AFTER = {key: name for key, name in AFTER_WAVE.items() if key != 2} | {
    41: "back",
    1: "u1-again",
    301: "i301-again",
}


def _run(spark, lake: Lake, table_id: str) -> TableRun:
    run = lake.run(spark, table_id).tables[0]
    assert run.status is RunStatus.COMPLETED, run.error
    assert lake.landed(table_id) == []
    return run


def _table(spark, base_path: str) -> list[tuple]:
    spark_rows = rows_of(spark, base_path, ["id", "name"])
    assert spark_rows == hudi_rs_rows(base_path, ["id", "name"])  # the independent reader sees the same table
    return spark_rows


def _expected(model: dict[int, str]) -> list[tuple]:
    return sorted(model.items())


@pytest.mark.spark
def test_upsert_and_rewrite_give_the_same_table_and_the_index_stays_right(spark, lake: Lake, monkeypatch) -> None:
    upserted, rewritten = lake.configure(table_config("by_upsert")), lake.configure(table_config("by_rewrite"))
    for config in (upserted, rewritten):
        lake.land_parquet(config, "20260101-000001.parquet", FIRST, CDC)
        first = _run(spark, lake, config.table_id)
        assert (first.write_strategy, first.write_reason) == (None, None)  # a new table: its first write as before
        assert _table(spark, first.base_path) == _expected(AFTER_FIRST)

    wave = {
        config.table_id: lake.land_parquet(config, "20260101-000002.parquet", WAVE, CDC)
        for config in (upserted, rewritten)
    }
    by_upsert = _run(spark, lake, upserted.table_id)
    with monkeypatch.context() as priced:
        priced.setattr(write_strategy, "DEFAULT_COSTS", write_strategy.WriteCosts(min_saving_seconds=0.0))
        by_rewrite = _run(spark, lake, rewritten.table_id)
    assert by_upsert.write_strategy is WriteStrategy.UPSERT
    assert by_rewrite.write_strategy is WriteStrategy.REWRITE_TABLE
    assert by_rewrite.write_reason.startswith("rewrite_table: 62 changes into about 300 rows (20.7%, ")
    assert by_upsert.write_reason.startswith("upsert: 62 changes into about 300 rows (20.7%, ")
    # the same counts: the rewrite counts what it applied as Hudi's upsert does (the late changes not at all)
    counts = (by_upsert.inserts, by_upsert.updates, by_upsert.deletes)
    assert counts == (by_rewrite.inserts, by_rewrite.updates, by_rewrite.deletes) == (5, 40, 10)
    assert _table(spark, by_upsert.base_path) == _table(spark, by_rewrite.base_path) == _expected(AFTER_WAVE)
    # the rewrite is one replacecommit that names its files (exactly once), like the upsert's commit
    commit = completed_commits(spark, by_rewrite.base_path)[-1]
    assert (commit.action, commit.instant) == ("replacecommit", by_rewrite.commit_instant)
    assert commit.file_ids == (wave[rewritten.table_id].file_id,)
    # the choice and its reason are in the run's history row
    history = lake.tables["processing_tracker_history"].scan()["Items"]
    stored = {item["table_id"]: item for item in history if item["run_id"] in (by_rewrite.run_id, by_upsert.run_id)}
    assert stored[rewritten.table_id]["write_strategy"] == "rewrite_table"
    assert stored[rewritten.table_id]["write_reason"] == by_rewrite.write_reason
    assert stored[upserted.table_id]["write_strategy"] == "upsert"

    # the next run upserts into both: keys the rewrite wrote, deleted and inserted are found where they are now
    for config in (upserted, rewritten):
        lake.land_parquet(config, "20260101-000003.parquet", AFTER, CDC)
        after = _run(spark, lake, config.table_id)
        assert after.write_strategy is WriteStrategy.UPSERT
        assert (after.inserts, after.updates, after.deletes) == (1, 2, 1)
    assert _table(spark, by_upsert.base_path) == _table(spark, by_rewrite.base_path) == _expected(AFTER_AFTER)
