"""The record level index on tables written before it existed, MERGE_ON_READ compaction on its schedule, and what
MERGE_ON_READ logs instead of rewriting."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import etl.raw_table.writer
from bench.metrics import DATA, LOG, file_group, kind
from etl.hudi.options import DEFAULT_COMPACTION_DELTA_COMMITS, hudi_write_options
from etl.hudi.timeline import completed_commits
from odp.config.models import TableType
from odp.table_reader import read_hudi_snapshot
from odp.tracker import RunStatus
from tests.support.lake import Lake, patch_write_profile, rows_of, table_config

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
            etl.raw_table.writer,
            "hudi_write_options",
            lambda *a, **k: {**hudi_write_options(*a, **k), **BEFORE_RECORD_INDEX},
        )
        old = lake.run(spark, config.table_id).tables[0]
    assert old.status is RunStatus.COMPLETED, old.error
    base = Path(old.base_path.removeprefix("file://"))
    assert not (base / ".hoodie" / "metadata").exists()  # an old table: no metadata table, no record index

    # the first run with today's options builds the metadata table and the record index from the table's
    # files, and the index is global from that commit on: a row that changes partition moves, a delete
    # whose image carries a stale partition value finds its row
    moves = [{"Op": "U", "seq": "2", "id": 1, "region": "us"}, {"Op": "D", "seq": "3", "id": 2, "region": "us"}]
    lake.land_parquet(config, "20260101-2.parquet", moves, CDC)
    upgraded = lake.run(spark, config.table_id).tables[0]
    assert upgraded.status is RunStatus.COMPLETED, upgraded.error
    # Hudi's statistics count a move as an insert into the new partition and a delete from the old one
    assert (upgraded.inserts, upgraded.updates, upgraded.deletes) == (1, 0, 2)
    assert rows_of(spark, upgraded.base_path, ["id", "region", "_hoodie_partition_path"]) == [(1, "us", "region=us")]
    assert (base / ".hoodie" / "metadata" / "record_index").is_dir()
    # no base file carries a bloom filter (etl.hudi.options.NO_BASE_FILE_BLOOM_FILTER): Hudi keeps it in the
    # footer's key-value metadata, and neither index reads it
    base_files = [f for f in base.rglob("*.parquet") if ".hoodie" not in f.parts]
    assert base_files
    footers = [pq.ParquetFile(f).metadata.metadata or {} for f in base_files]
    assert [k for footer in footers for k in footer if b"bloom" in k.lower()] == []


LOAD = pa.schema([("seq", pa.string()), ("id", pa.int32()), ("region", pa.string())])


def metadata_partitions(base: Path) -> set[str]:
    """The metadata table's partitions Hudi has built (``hoodie.table.metadata.partitions`` in hoodie.properties)."""
    lines = (base / ".hoodie" / "hoodie.properties").read_text().splitlines()
    value = next((line.split("=", 1)[1] for line in lines if line.startswith("hoodie.table.metadata.partitions=")), "")
    return set(filter(None, value.split(",")))


def record_index_keys(spark, base_path: str, keys: list[str]) -> dict[str, str]:
    """key -> file group of each of ``keys`` that the table's record index holds, read with Hudi's own metadata
    reader (``HoodieTableMetadata.readRecordIndex``)."""
    jvm = spark.sparkContext._jvm
    conf = jvm.org.apache.hudi.storage.hadoop.HadoopStorageConfiguration(spark.sparkContext._jsc.hadoopConfiguration())
    metadata_config = (
        jvm.org.apache.hudi.common.config.HoodieMetadataConfig.newBuilder().enable(True).withEnableRecordIndex(True)
    ).build()
    metadata = jvm.org.apache.hudi.metadata.HoodieTableMetadata.create(
        jvm.org.apache.hudi.common.engine.HoodieLocalEngineContext(conf),
        jvm.org.apache.hudi.storage.HoodieStorageUtils.getStorage(base_path, conf),
        metadata_config,
        base_path,
    )
    try:
        found = metadata.readRecordIndex(keys)
        return {str(key): str(found.get(key).getFileId()) for key in found.keySet()}
    finally:
        metadata.close()


@pytest.mark.spark
def test_a_first_load_leaves_the_record_index_to_the_next_write_which_builds_it_from_the_files(
    spark, lake: Lake
) -> None:
    """docs/decisions/033: a first load writes no record index (Hudi would write every key's entry as a delta
    commit); the table's next write builds it from the base files, and from then on every key is in it."""
    config = lake.configure(table_config("first_load"))
    loaded = [{"seq": None, "id": key, "region": "load"} for key in range(1, 301)]
    lake.land_parquet(config, "LOAD00000001.parquet", loaded, LOAD)
    load = lake.run(spark, config.table_id).tables[0]
    assert load.status is RunStatus.COMPLETED, load.error
    base = Path(load.base_path.removeprefix("file://"))
    assert metadata_partitions(base) == {"files"}  # the file listing only: no record index written by the load
    assert {c.index for c in completed_commits(spark, load.base_path)} == {"record"}  # the table's index all the same

    upsert = run_changes(spark, lake, config, "U1 I1001", seq="2")
    # the update of a loaded key found its row (an update, not a second copy), the new key is an insert
    assert (upsert.inserts, upsert.updates, upsert.deletes) == (1, 1, 0)
    assert metadata_partitions(base) == {"files", "record_index"}
    stored = rows_of(spark, upsert.base_path, ["id", "region"])
    assert [row[0] for row in stored] == [*range(1, 301), 1001]  # every key once
    assert stored[0] == (1, "us")
    keys = [str(key) for key in (*range(1, 301), 1001)]
    assert sorted(record_index_keys(spark, upsert.base_path, keys), key=int) == keys  # the index holds every key


def file_groups(base: Path) -> tuple[dict[str, str], dict[str, int]]:
    """An unpartitioned table's file groups: group -> its latest base file's name, and group -> its log files
    (Hudi's file names parsed as the benchmark parses them, :mod:`bench.metrics`)."""
    bases: dict[str, str] = {}
    logs: dict[str, int] = {}
    for name in sorted((f.name for f in base.iterdir()), key=lambda name: name.split("_")[-1]):  # by instant
        if kind(name) == DATA:
            bases[file_group(name)] = name
        elif kind(name) == LOG:
            logs[file_group(name)] = logs.get(file_group(name), 0) + 1
    return bases, logs


def run_changes(spark, lake: Lake, config, changes: str, *, seq: str):
    """Land one CDC file of ``changes`` (``U1 D2 I101``: op and id; every row's region ``us``) and run the table."""
    rows = [{"Op": change[0], "seq": seq, "id": int(change[1:]), "region": "us"} for change in changes.split()]
    lake.land_parquet(config, f"20260101-{seq}.parquet", rows, CDC)
    result = lake.run(spark, config.table_id).tables[0]
    assert result.status is RunStatus.COMPLETED, result.error
    return result


@pytest.mark.spark
def test_merge_on_read_logs_the_changes_of_a_file_group_above_the_small_file_limit(
    spark, lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file group above the small-file limit logs its changes instead of being rewritten; the same table then
    compacts inline on the default schedule, every DEFAULT_COMPACTION_DELTA_COMMITS delta commits."""
    # every base file of this test is above a 1-byte limit, as a real table's are above 4 MiB; the compaction
    # schedule stays the default one
    patch_write_profile(monkeypatch, merge_on_read_small_file_bytes=1)
    assert DEFAULT_COMPACTION_DELTA_COMMITS > 3  # the load and the two logging runs below stay under the schedule
    config = lake.configure(table_config("logged", table_type=TableType.MERGE_ON_READ))
    lake.land_parquet(
        config, "LOAD00000001.parquet", [{"seq": None, "id": n, "region": "eu"} for n in range(1, 51)], LOAD
    )
    loaded = lake.run(spark, config.table_id).tables[0]
    assert loaded.status is RunStatus.COMPLETED, loaded.error
    base = Path(loaded.base_path.removeprefix("file://"))
    ((loaded_group, loaded_file),) = file_groups(base)[0].items()

    # the updates and deletes of the loaded group go to its log; the insert gets a new file group of its own
    # (Hudi's default limit, 100 MB, merged all three into a new base file of the loaded group)
    logged = run_changes(spark, lake, config, "U1 D2 I101", seq="2")
    assert (logged.inserts, logged.updates, logged.deletes) == (1, 1, 1)
    bases, logs = file_groups(base)
    assert bases[loaded_group] == loaded_file  # not rewritten
    assert logs == {loaded_group: 1}
    (inserted_group,) = set(bases) - {loaded_group}

    # the record index finds the keys of both groups: an update of each is logged in its group, not inserted twice
    again = run_changes(spark, lake, config, "U101 U3 I102", seq="3")
    assert (again.inserts, again.updates, again.deletes) == (1, 2, 0)
    bases, logs = file_groups(base)
    assert bases[loaded_group] == loaded_file
    assert logs[loaded_group] >= 1
    assert logs[inserted_group] == 1
    assert len(bases) == 3  # the loaded group, the first insert's, the second insert's

    expected = [(1, "us", "2"), (3, "us", "3")] + [(n, "eu", None) for n in range(4, 51)]
    expected += [(101, "us", "3"), (102, "us", "3")]
    assert rows_of(spark, again.base_path, ["id", "region", "seq"]) == expected
    # a filtered read finds every matching row: with Hudi 1.0.2's default column and partition statistics on
    # (etl.hudi.options.METADATA_INDEXES_OFF emptied), Spark's data skipping returned no row for this prefix filter
    moved = spark.read.format("hudi").load(again.base_path).where("region like 'u%'").select("id").collect()
    assert sorted(row.id for row in moved) == [1, 3, 101, 102]
    snapshot = read_hudi_snapshot(base)  # hudi-rs merges the logs as well
    assert snapshot is not None
    assert (
        sorted(zip(*(snapshot.column(name).to_pylist() for name in ("id", "region", "seq")), strict=True)) == expected
    )

    # runs below the schedule only append delta commits: ingestion never waits for a compaction
    for wave in range(4, DEFAULT_COMPACTION_DELTA_COMMITS):
        run_changes(spark, lake, config, "U1", seq=str(wave))
    actions = [commit.action for commit in completed_commits(spark, again.base_path)]
    assert actions == ["deltacommit"] * (DEFAULT_COMPACTION_DELTA_COMMITS - 1)

    last = run_changes(spark, lake, config, "U1", seq=str(DEFAULT_COMPACTION_DELTA_COMMITS))
    commits = completed_commits(spark, last.base_path)
    assert [c.action for c in commits].count("deltacommit") == DEFAULT_COMPACTION_DELTA_COMMITS
    assert [c.action for c in commits][-1] == "commit"  # the compaction, inline after the N-th delta commit
    assert commits[-1].file_ids == ()  # a compaction consumes no landed file
    expected[0] = (1, "us", str(DEFAULT_COMPACTION_DELTA_COMMITS))  # the last update of key 1 wins
    assert rows_of(spark, last.base_path, ["id", "region", "seq"]) == expected


WIDE = pa.schema(
    [("Op", pa.string()), ("seq", pa.string()), ("id", pa.int32()), ("region", pa.string()), ("note", pa.string())]
)


def _note(key: int, seq: int) -> str:
    """About 200 characters that Parquet cannot shrink much, so a base file is large beside a log of one row."""
    return "".join(hashlib.sha256(f"{key}-{seq}-{n}".encode()).hexdigest() for n in range(3))


def _wide_changes(op: str, seq: int, keys: range | list[int]) -> list[dict]:
    return [
        {"Op": op, "seq": f"{seq:03d}", "id": key, "region": "eu" if key < 2000 else "us", "note": _note(key, seq)}
        for key in keys
    ]


@pytest.mark.spark
def test_merge_on_read_compacts_only_the_file_groups_whose_logs_matter(
    spark, lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every base file above a 1-byte limit logs its updates (as a real table's above 4 MiB); a compaction is
    # scheduled every 2 delta commits, and a group with 2 log files is due whatever their size
    patch_write_profile(monkeypatch, merge_on_read_small_file_bytes=1, compaction_delta_commits=2)
    config = lake.configure(table_config("scattered", partition_by=("region",), table_type=TableType.MERGE_ON_READ))

    def run(seq: int, rows: list[dict]):
        lake.land_parquet(config, f"20260101-{seq:03d}.parquet", rows, WIDE)
        result = lake.run(spark, config.table_id).tables[0]
        assert result.status is RunStatus.COMPLETED, result.error
        return result

    loaded = run(1, _wide_changes("I", 1, [*range(1, 1001), *range(2001, 3001)]))
    base = Path(loaded.base_path.removeprefix("file://"))
    ((eu_group, eu_loaded),) = file_groups(base / "region=eu")[0].items()
    ((us_group, us_loaded),) = file_groups(base / "region=us")[0].items()

    # the second delta commit schedules a compaction: half of eu's rows are logged (a log about as large as its base
    # file), one row of us (a log of a few KB against about 100 KB)
    scheduled = run(2, _wide_changes("U", 2, [*range(1, 501), 2001]))
    assert [c.action for c in completed_commits(spark, scheduled.base_path)] == ["deltacommit"] * 2 + ["commit"]
    eu_bases, _ = file_groups(base / "region=eu")
    us_bases, us_logs = file_groups(base / "region=us")
    assert eu_bases[eu_group] != eu_loaded  # compacted into a new base file
    # left as it is: Hudi's default strategy compacts every file group with a log file, and rewrote this one
    assert (us_bases[us_group], us_logs) == (us_loaded, {us_group: 1})

    # the waiting group is compacted at the next schedule once it has as many log files as delta commits between
    # schedules (2), however small they are
    run(3, _wide_changes("U", 3, [2002]))
    run(4, _wide_changes("U", 4, [2003]))
    us_bases, _ = file_groups(base / "region=us")
    assert us_bases[us_group] != us_loaded
    assert [c.action for c in completed_commits(spark, scheduled.base_path)][-1] == "commit"

    expected = {row["id"]: row["note"] for row in _wide_changes("I", 1, [*range(1, 1001), *range(2001, 3001)])}
    expected |= {row["id"]: row["note"] for row in _wide_changes("U", 2, [*range(1, 501), 2001])}
    expected |= {2002: _note(2002, 3), 2003: _note(2003, 4)}
    stored = spark.read.format("hudi").load(scheduled.base_path).select("id", "note").collect()
    assert len(stored) == len(expected)
    assert dict(stored) == expected
    snapshot = read_hudi_snapshot(base)  # hudi-rs: base files and the logs left
    assert snapshot is not None
    assert dict(zip(snapshot.column("id").to_pylist(), snapshot.column("note").to_pylist(), strict=True)) == expected


def bucket_ids(base: Path) -> dict[str, set[int]]:
    """Partition -> the buckets of its base files (a bucket file group's id starts with its bucket number)."""
    found: dict[str, set[int]] = {}
    for parquet in base.glob("region=*/*.parquet"):
        found.setdefault(parquet.parent.name, set()).add(int(parquet.name[:8]))
    return found


@pytest.mark.spark
@pytest.mark.parametrize("table_type", [TableType.COPY_ON_WRITE, TableType.MERGE_ON_READ])
def test_a_bucket_index_table_loads_changes_and_reloads_and_refuses_another_index(
    spark, lake: Lake, table_type: TableType
) -> None:
    bucketed = {"partition_by": ("region",), "table_type": table_type}
    config = lake.configure(table_config("bucketed", index_buckets=2, **bucketed))
    loaded = [{"seq": None, "id": n, "region": "eu" if n % 2 else "us"} for n in range(1, 7)]
    lake.land_parquet(config, "LOAD00000001.parquet", loaded, LOAD)
    first = lake.run(spark, config.table_id).tables[0]
    assert first.status is RunStatus.COMPLETED, first.error
    base = Path(first.base_path.removeprefix("file://"))
    assert set(bucket_ids(base)) == {"region=eu", "region=us"}
    assert all(buckets <= {0, 1} for buckets in bucket_ids(base).values())
    assert not (base / ".hoodie" / "metadata" / "record_index").exists()  # no record index to build or keep
    assert [c.index for c in completed_commits(spark, first.base_path)] == ["bucket:2"]

    changes = [
        {"Op": "U", "seq": "2", "id": 1, "region": "eu"},
        {"Op": "D", "seq": "2", "id": 2, "region": "us"},
        {"Op": "I", "seq": "2", "id": 7, "region": "eu"},
    ]
    lake.land_parquet(config, "20260101-1.parquet", changes, CDC)
    second = lake.run(spark, config.table_id).tables[0]
    assert second.status is RunStatus.COMPLETED, second.error
    if table_type is TableType.COPY_ON_WRITE:
        assert (second.inserts, second.updates, second.deletes) == (1, 1, 1)  # found in its bucket: no duplicate
    else:  # Hudi counts a MOR insert appended to an existing bucket's log file as an update write
        assert (second.inserts + second.updates, second.deletes) == (2, 1)
    expected = [(1, "eu", "2"), (3, "eu", None), (4, "us", None), (5, "eu", None), (6, "us", None), (7, "eu", "2")]
    assert rows_of(spark, second.base_path, ["id", "region", "seq"]) == expected
    assert all(buckets <= {0, 1} for buckets in bucket_ids(base).values())

    # a later full load replaces the table (insert_overwrite_table) with the same buckets
    lake.land_parquet(config, "LOAD00000002.parquet", [{"seq": None, "id": 9, "region": "us"}], LOAD)
    reloaded = lake.run(spark, config.table_id).tables[0]
    assert reloaded.status is RunStatus.COMPLETED, reloaded.error

    # another bucket count, or the record index, would look for the stored keys where they are not: refused
    lake.land_parquet(config, "20260101-2.parquet", [{"Op": "U", "seq": "3", "id": 9, "region": "us"}], CDC)
    for other, label in ((3, "bucket:3"), (None, "record")):
        lake.configure(table_config("bucketed", index_buckets=other, **bucketed))
        refused = lake.run(spark, config.table_id).tables[0]
        assert refused.status is RunStatus.REFRESH_ERROR
        assert refused.error.startswith(
            f"TableConfigError: src.app.bucketed: table_config asks for the {label} index (index: record, "
            f"index_buckets: {other}), but the table was written with the bucket:2 index; a table's index is fixed at "
            "its first write"
        ), refused.error
        assert len(lake.landed(config.table_id)) == 1  # nothing written, the file stays landed
    # read once after both refusals: the reload's table, which neither refused run changed
    stored = rows_of(spark, reloaded.base_path, ["id", "region", "seq"])
    assert [row[:2] for row in stored] == [(9, "us")]
    assert stored == [(9, "us", None)]


@pytest.mark.spark
def test_a_small_table_left_to_its_size_is_created_with_the_simple_index_and_keeps_it(spark, lake: Lake) -> None:
    """Issue 47 item 4: a table that sets no index and whose first write brings fewer than small_table_rows rows is
    created with the simple index (no metadata table: docs/decisions/004); its run history says why."""
    config = lake.configure(table_config("small", small_table_rows=100_000))
    loaded = [{"seq": None, "id": key, "region": "load"} for key in range(1, 51)]
    lake.land_parquet(config, "LOAD00000001.parquet", loaded, LOAD)
    load = lake.run(spark, config.table_id).tables[0]
    assert load.status is RunStatus.COMPLETED, load.error
    assert load.write_reason == "index simple: the first write brings 50 rows, under small_table_rows 100000"
    base = Path(load.base_path.removeprefix("file://"))
    assert not (base / ".hoodie" / "metadata").exists()
    upsert = run_changes(spark, lake, config, "U1 I101", seq="2")
    assert (upsert.inserts, upsert.updates, upsert.deletes) == (1, 1, 0)  # the stored key found by the simple index
    assert upsert.write_reason.startswith("upsert: ")  # nothing chosen again
    # where the run's time went, step by step and the write's phases inside apply (TableRun.step_seconds)
    steps = upsert.step_seconds
    assert list(steps) == [
        "plan",
        "reconcile",
        "read",
        "write.prepare",
        "write.tombstones",
        "write.hudi",
        "write.after",
        "apply",
        "record",
    ], steps
    assert steps["write.hudi"] > 0
    assert sum(v for k, v in steps.items() if k.startswith("write.")) <= steps["apply"] + 0.003  # rounded each
    assert sum(v for k, v in steps.items() if "." not in k) <= upsert.seconds + 0.005
    assert {c.index for c in completed_commits(spark, upsert.base_path)} == {"simple"}
    assert not (base / ".hoodie" / "metadata").exists()
    assert len(rows_of(spark, upsert.base_path, ["id"])) == 51
