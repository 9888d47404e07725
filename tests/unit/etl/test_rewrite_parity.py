"""Upsert or rewrite (issue 27): both plans give the same table, on Spark and on hudi-rs, and the record index
stays right after a rewrite (etl.raw_table.write_strategy, etl.raw_table.rewrite).

Two partitioned tables get the same files. The cost model upserts the 20% wave of a 300-row table (a rewrite would
save milliseconds); the other table's run is priced without the minimum saving, so the same wave rewrites it. The
wave holds updates (two move partition), deletes, inserts, and updates and deletes older than the stored rows (they
must lose); the run after it upserts again into keys the rewrite wrote, moved, deleted and inserted. Two more
tables with the small-table index (``index: simple``: Hudi's GLOBAL_SIMPLE index, no metadata table), one
COPY_ON_WRITE and one MERGE_ON_READ, are upserted with the same files and must end the same: the MERGE_ON_READ one
moves key 3 back to a partition whose base file still holds it, deleted only in a log file.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from etl.hudi.timeline import completed_commits, read_table_state
from etl.raw_table import write_strategy
from odp.config.models import IndexKind, TableType
from odp.tracker import RunStatus, TableRun, WriteStrategy
from tests.support.lake import Lake, hudi_rs_rows, rows_of, table_config

CDC = pa.schema(
    [("Op", pa.string()), ("SEQ", pa.string()), ("ID", pa.int32()), ("NAME", pa.string()), ("GRP", pa.string())]
)
NEWER = range(51, 61)  # keys stored with a later sequence than the rest
MOVED = {3: "c", 4: "c"}  # keys whose wave update moves them to another partition


def _grp(key: int) -> str:
    return "a" if key % 2 else "b"


def _c(op: str, seq: str, key: int, name: str, grp: str | None = None) -> dict:
    return {"Op": op, "SEQ": seq, "ID": key, "NAME": name, "GRP": grp or _grp(key)}


FIRST = [_c("I", "00020" if key in NEWER else "00001", key, f"n{key}") for key in range(1, 301)]
WAVE = (
    [_c("U", "00010", key, f"u{key}", MOVED.get(key)) for key in range(1, 41)]
    + [_c("D", "00010", key, f"n{key}") for key in range(41, 51)]
    + [_c("U", "00015", key, f"late{key}") for key in range(51, 56)]  # older than the stored 00020: lose
    + [_c("D", "00015", key, f"n{key}") for key in (56, 57)]  # a delete older than the stored row: loses
    + [_c("I", "00010", key, f"i{key}") for key in range(301, 306)]
)
AFTER = [
    _c("I", "00030", 41, "back"),  # deleted by the rewrite: comes back
    _c("U", "00030", 1, "u1-again", "c"),  # rewritten into a new file group: found there, and moved
    _c("U", "00030", 3, "u3-again"),  # moved by the wave: found in its new partition, moved back
    _c("U", "00030", 301, "i301-again"),  # inserted by the rewrite
    _c("D", "00030", 2, "u2"),
]

# The expected tables (key -> name, partition), written out from the changes above (not by the code under test).
AFTER_FIRST = {key: (f"n{key}", _grp(key)) for key in range(1, 301)}
AFTER_WAVE = (
    {key: (f"u{key}", MOVED.get(key, _grp(key))) for key in range(1, 41)}
    | {key: (f"n{key}", _grp(key)) for key in range(51, 301)}
    | {key: (f"i{key}", _grp(key)) for key in range(301, 306)}
)
AFTER_AFTER = {key: row for key, row in AFTER_WAVE.items() if key != 2} | {
    41: ("back", _grp(41)),
    1: ("u1-again", "c"),
    3: ("u3-again", _grp(3)),
    301: ("i301-again", _grp(301)),
}
COLUMNS = ["id", "name", "grp"]


def _run(spark, lake: Lake, table_id: str) -> TableRun:
    run = lake.run(spark, table_id).tables[0]
    assert run.status is RunStatus.COMPLETED, run.error
    assert lake.landed(table_id) == []
    return run


def _table(spark, base_path: str) -> list[tuple]:
    spark_rows = rows_of(spark, base_path, COLUMNS)
    assert spark_rows == hudi_rs_rows(base_path, COLUMNS)  # the independent reader sees the same table
    return spark_rows


def _expected(model: dict[int, tuple[str, str]]) -> list[tuple]:
    return sorted((key, *row) for key, row in model.items())


@pytest.mark.spark
@pytest.mark.slow
def test_upsert_and_rewrite_give_the_same_table_and_the_index_stays_right(spark, lake: Lake, monkeypatch) -> None:
    upserted = lake.configure(table_config("by_upsert", partition_by=("grp",)))
    rewritten = lake.configure(table_config("by_rewrite", partition_by=("grp",)))
    small, small_mor = (
        lake.configure(table_config(name, partition_by=("grp",), index=IndexKind.SIMPLE, table_type=table_type))
        for name, table_type in (("by_simple_index", TableType.COPY_ON_WRITE), ("mor_simple", TableType.MERGE_ON_READ))
    )
    for config in (upserted, rewritten, small, small_mor):
        lake.land_parquet(config, "20260101-000001.parquet", FIRST, CDC)
        first = _run(spark, lake, config.table_id)
        assert (first.write_strategy, first.write_reason) == (None, None)  # a new table: its first write as before
        assert _table(spark, first.base_path) == _expected(AFTER_FIRST)

    wave = {
        config.table_id: lake.land_parquet(config, "20260101-000002.parquet", WAVE, CDC)
        for config in (upserted, rewritten, small, small_mor)
    }
    by_upsert = _run(spark, lake, upserted.table_id)
    by_simple_index = _run(spark, lake, small.table_id)
    mor_simple = _run(spark, lake, small_mor.table_id)
    with monkeypatch.context() as priced:
        priced.setattr(
            write_strategy,
            "DEFAULT_COSTS",
            write_strategy.WriteCosts(min_saving_seconds=0.0, seconds_per_stored_row=7e-6),
        )
        by_rewrite = _run(spark, lake, rewritten.table_id)
    assert by_upsert.write_strategy is WriteStrategy.UPSERT
    assert by_rewrite.write_strategy is WriteStrategy.REWRITE_TABLE
    assert by_rewrite.write_reason.startswith("rewrite_table: 62 changes into about 300 rows (20.7%, ")
    assert " 2 partitions): upsert about 4.0 s, rewrite of the table about 4.0 s" in by_rewrite.write_reason
    assert by_upsert.write_reason == "upsert: 62 changes, fewer than the 7143 a rewrite needs to pay off"
    # the same counts: the rewrite counts what it applied as Hudi's upsert does (the late changes not at all; a
    # partition move as an insert and a delete, etl/hudi/README.md "Indexes")
    counts = (by_upsert.inserts, by_upsert.updates, by_upsert.deletes)
    assert counts == (by_rewrite.inserts, by_rewrite.updates, by_rewrite.deletes) == (5 + 2, 40 - 2, 10 + 2)
    assert counts == (by_simple_index.inserts, by_simple_index.updates, by_simple_index.deletes)
    assert _table(spark, by_upsert.base_path) == _table(spark, by_rewrite.base_path) == _expected(AFTER_WAVE)
    assert _table(spark, by_simple_index.base_path) == _table(spark, mor_simple.base_path) == _expected(AFTER_WAVE)
    # the rewrite is one replacecommit that names its files (exactly once), like the upsert's commit
    commit = completed_commits(spark, by_rewrite.base_path)[-1]
    assert (commit.action, commit.instant) == ("replacecommit", by_rewrite.commit_instant)
    assert commit.file_ids == (wave[rewritten.table_id].file_id,)
    # the table's size read from the timeline leaves out the file groups the replacecommit replaced
    state = read_table_state(spark, by_rewrite.base_path)
    table = spark.read.format("hudi").load(by_rewrite.base_path)
    assert state.rows == table.count() == len(AFTER_WAVE)
    assert state.file_groups == table.select("_hoodie_file_name").distinct().count()
    # the choice and its reason are in the run's history row
    history = lake.tables["processing_tracker_history"].scan()["Items"]
    stored = {item["table_id"]: item for item in history if item["run_id"] in (by_rewrite.run_id, by_upsert.run_id)}
    assert stored[rewritten.table_id]["write_strategy"] == "rewrite_table"
    assert stored[rewritten.table_id]["write_reason"] == by_rewrite.write_reason
    assert stored[upserted.table_id]["write_strategy"] == "upsert"

    # the next run upserts into all three: keys the rewrite wrote, deleted and inserted are found where they are now
    for config in (upserted, rewritten, small_mor, small):
        lake.land_parquet(config, "20260101-000003.parquet", AFTER, CDC)
        with monkeypatch.context() as outgrown:  # any size is too large: the simple-index table is told so
            outgrown.setattr(write_strategy, "SIMPLE_INDEX_MAX_ROWS", 1)
            outgrown.setattr(write_strategy, "SIMPLE_INDEX_MAX_ROWS_PARTITIONED", 1)
            after = _run(spark, lake, config.table_id)
        assert after.write_strategy is WriteStrategy.UPSERT
        if config is not small_mor:  # (Hudi counts a MERGE_ON_READ table's writes its own way)
            assert (after.inserts, after.updates, after.deletes) == (1 + 2, 1, 1 + 2)  # two partition moves
        outgrown = "the simple index suits" in after.write_reason
        assert outgrown is (config in (small, small_mor)), after.write_reason
    assert _table(spark, by_upsert.base_path) == _table(spark, by_rewrite.base_path) == _expected(AFTER_AFTER)
    assert _table(spark, by_simple_index.base_path) == _table(spark, mor_simple.base_path) == _expected(AFTER_AFTER)

    # the simple-index table has no metadata table; each commit records its index, so another is refused later
    base = Path(by_simple_index.base_path.removeprefix("file://"))
    assert not (base / ".hoodie" / "metadata").exists()
    assert {c.index for c in completed_commits(spark, by_simple_index.base_path)} == {"simple"}
    # its reason counts the table's rows and bytes before the run (the latest base file of each file group, the
    # bytes from the disk) and names the partitioned table's limit
    stored_bytes = _latest_base_file_bytes(base, before=after.commit_instant)
    assert (
        f"grown to {len(AFTER_WAVE)} rows, {stored_bytes} bytes of base files, past the 1 rows the simple index suits "
        "on a partitioned table"
    ) in after.write_reason


def _latest_base_file_bytes(base: Path, *, before: str) -> int:
    """The bytes of each file group's newest base file written before instant ``before`` (names
    ``<file id>_<write token>_<instant>.parquet``)."""
    newest: dict[str, tuple[str, int]] = {}
    for parquet in base.rglob("*.parquet"):
        if ".hoodie" in parquet.parts:
            continue
        file_id, instant = parquet.name.split("_")[0], parquet.stem.split("_")[-1]
        if instant < before and instant > newest.get(file_id, ("", 0))[0]:
            newest[file_id] = (instant, parquet.stat().st_size)
    return sum(size for _, size in newest.values())
