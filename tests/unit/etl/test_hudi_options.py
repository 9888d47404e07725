"""The one function that makes Hudi write options from a table config, per profile."""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from typing import Any

import pytest
from pydantic import ValidationError

from etl.errors import TableConfigError
from etl.file_processor.table_plan import check_index_unchanged
from etl.hudi.commit import CommitTag
from etl.hudi.options import (
    INDEX_METADATA,
    PARALLELISM_OPTIONS,
    RECORD_INDEX_DEFERRED_UP_TO_ROWS,
    HudiProfile,
    WriteOperation,
    WriteProfile,
    defers_record_index,
    hudi_write_options,
    key_generator,
    record_index_file_groups,
    shuffle_parallelism,
)
from etl.hudi.target import HudiTarget, Ordering
from etl.hudi.timeline import CommitSummary, stored_index
from odp.config.datasets import DatasetConfig, DatasetSource, Refresh, Zone
from odp.config.models import IndexKind, TableMode, TableType
from odp.naming import tombstone_path
from tests.support.lake import table_config
from tests.support.paths import REPO_ROOT

GLUE = WriteProfile(HudiProfile.GLUE)
LOCAL = WriteProfile(HudiProfile.LOCAL, cores=2)


def test_key_generator_choice() -> None:
    assert key_generator(["id"], []) == ("org.apache.hudi.keygen.NonpartitionedKeyGenerator", "")
    assert key_generator(["id", "k"], []) == ("org.apache.hudi.keygen.NonpartitionedKeyGenerator", "")
    assert key_generator(["id"], ["region"]) == ("org.apache.hudi.keygen.SimpleKeyGenerator", "region")
    assert key_generator(["id", "k"], ["a", "b"]) == ("org.apache.hudi.keygen.ComplexKeyGenerator", "a,b")
    # never a one-field ComplexKeyGenerator (HUDI-9666 key encoding regression)
    assert key_generator(["id"], ["a", "b"]) == ("org.apache.hudi.keygen.CustomKeyGenerator", "a:SIMPLE,b:SIMPLE")


def test_current_cow_partitioned_options() -> None:
    config = table_config("orders", partition_by=("region",))
    options = hudi_write_options(
        HudiTarget.from_table(config),
        operation=WriteOperation.UPSERT,
        profile=LOCAL,
        catalog_sync=False,
        metadata=CommitTag("r1", ("b", "a")).metadata(),
    )
    assert options["hoodie.table.name"] == "orders"
    assert options["hoodie.datasource.write.table.type"] == "COPY_ON_WRITE"
    assert options["hoodie.datasource.write.operation"] == "upsert"
    assert options["hoodie.datasource.write.recordkey.field"] == "id"
    assert options["hoodie.datasource.write.precombine.field"] == "_odp_seq"
    assert options["hoodie.record.merge.mode"] == "EVENT_TIME_ORDERING"
    assert options["hoodie.datasource.write.keygenerator.class"] == "org.apache.hudi.keygen.SimpleKeyGenerator"
    assert options["hoodie.datasource.write.partitionpath.field"] == "region"
    assert options["hoodie.datasource.write.hive_style_partitioning"] == "true"
    assert json.loads(options["_odp_file_ids"]) == ["a", "b"]
    assert options["_odp_run_id"] == "r1"
    assert options["hoodie.datasource.write.commitmeta.key.prefix"] == "_odp_"
    assert not any(name.startswith("hoodie.datasource.hive_sync") for name in options)
    assert "hoodie.compact.inline" not in options
    assert "hoodie.parquet.small.file.limit" not in options  # COPY_ON_WRITE keeps Hudi's 100 MB bin-packing
    # the record level index: global (a row whose partition value changes moves), cost follows the changes
    assert options["hoodie.index.type"] == "RECORD_INDEX"
    assert options["hoodie.metadata.record.index.enable"] == "true"
    assert options["hoodie.record.index.update.partition.path"] == "true"
    assert options["hoodie.metadata.enable"] == "true"
    assert options["hoodie.parquet.bloom.filter.enabled"] == "false"  # only bloom indexes read it
    # the writer hands Hudi one row per record key (etl.change_frame.latest_per_key): no second pre-combine
    assert options["hoodie.combine.before.upsert"] == "false"


@pytest.mark.parametrize("profile", [GLUE, LOCAL])
def test_every_table_has_the_metadata_table_and_the_record_index_in_both_profiles(profile: WriteProfile) -> None:
    for config in (
        table_config("plain"),
        table_config("history", partition_by=("region",), mode=TableMode.HISTORICAL),
        table_config("mor", table_type=TableType.MERGE_ON_READ),
    ):
        options = hudi_write_options(
            HudiTarget.from_table(config), operation=WriteOperation.UPSERT, profile=profile, catalog_sync=False
        )
        assert options["hoodie.metadata.enable"] == "true", config.table
        assert options["hoodie.index.type"] == "RECORD_INDEX", config.table
        assert options["hoodie.metadata.record.index.enable"] == "true", config.table
        # Hudi 1.0 would compute column and partition statistics on every write: off (docs/decisions/015)
        assert options["hoodie.metadata.index.column.stats.enable"] == "false", config.table
        assert options["hoodie.metadata.index.partition.stats.enable"] == "false", config.table
        # a clean every 10 commits, not after each (docs/decisions/008)
        assert options["hoodie.clean.trigger.max.commits"] == "10", config.table


def test_glue_profile_leaves_parallelism_to_hudi_and_local_derives_it_from_input_and_cores() -> None:
    config = table_config("orders")
    glue = hudi_write_options(
        HudiTarget.from_table(config),
        operation=WriteOperation.UPSERT,
        profile=GLUE,
        catalog_sync=True,
        input_rows=5_000_000,
    )
    assert not any(name in glue for name in PARALLELISM_OPTIONS)  # no laptop constant on the Glue path
    assert "hoodie.metadata.record.index.min.filegroup.count" not in glue
    assert "hoodie.global.index.reconcile.parallelism" not in glue
    assert shuffle_parallelism(GLUE, 10_000_000) is None
    # local: one task per 100,000 rows, between 1 and the cores
    assert shuffle_parallelism(LOCAL, 0) == 1
    assert shuffle_parallelism(LOCAL, 36_000) == 1
    assert shuffle_parallelism(LOCAL, 150_000) == 2
    assert shuffle_parallelism(WriteProfile(HudiProfile.LOCAL, cores=8), 450_000) == 5
    assert shuffle_parallelism(WriteProfile(HudiProfile.LOCAL, cores=8), 5_000_000) == 8
    local = hudi_write_options(
        HudiTarget.from_table(config),
        operation=WriteOperation.UPSERT,
        profile=LOCAL,
        catalog_sync=False,
        input_rows=150_000,
    )
    assert {name: local[name] for name in PARALLELISM_OPTIONS} == dict.fromkeys(PARALLELISM_OPTIONS, "2")
    assert local["hoodie.metadata.record.index.min.filegroup.count"] == "1"
    # the record index's file groups follow the rows a first write brings, up to Hudi's own minimum of 10
    assert [record_index_file_groups(rows) for rows in (0, 250_000, 250_001, 2_000_000, 50_000_000)] == [1, 1, 2, 8, 10]
    assert local["hoodie.global.index.reconcile.parallelism"] == "2"


def test_historical_mor_with_glue_sync() -> None:
    config = table_config(
        "events", mode=TableMode.HISTORICAL, table_type=TableType.MERGE_ON_READ, primary_key=("a", "b")
    )
    options = hudi_write_options(
        HudiTarget.from_table(config),
        operation=WriteOperation.BULK_INSERT,
        profile=WriteProfile(compaction_delta_commits=7),
        catalog_sync=True,
    )
    assert options["hoodie.datasource.write.recordkey.field"] == "a,b,_odp_seq"
    assert options["hoodie.datasource.write.table.type"] == "MERGE_ON_READ"
    assert options["hoodie.compact.inline"] == "true"
    assert options["hoodie.compact.inline.trigger.strategy"] == "NUM_COMMITS"
    assert options["hoodie.compact.inline.max.delta.commits"] == "7"
    # only a file group under 4 MiB takes a commit's inserts (Hudi's 100 MB rewrote whole small tables per commit)
    assert options["hoodie.parquet.small.file.limit"] == str(4 * 1024 * 1024)
    # compaction of the groups whose logs matter: ODP's strategy from jvm/, its share, and the log-file count that
    # makes a group due whatever its logs' size (the delta commits between schedules)
    assert options["hoodie.compaction.strategy"] == "odp.hudi.LogShareCompactionStrategy"
    assert options["odp.compaction.log.share"] == "0.2"
    assert options["hoodie.compaction.logfile.num.threshold"] == "7"
    assert options["hoodie.metadata.enable"] == "true"
    assert options["hoodie.datasource.hive_sync.enable"] == "true"
    assert options["hoodie.datasource.hive_sync.database"] == "lake_db"
    assert options["hoodie.datasource.hive_sync.table"] == "events"
    assert (
        options["hoodie.datasource.hive_sync.partition_extractor_class"]
        == "org.apache.hudi.hive.NonPartitionedExtractor"
    )


def test_tombstone_path() -> None:
    assert tombstone_path("s3://raw/", "lake_db", "orders") == "s3://raw/lake_db/_odp_tombstones/orders"


def test_index_buckets_choose_the_bucket_index_and_every_commit_records_its_index() -> None:
    bucketed = table_config("orders", partition_by=("region",), index_buckets=16)
    options = hudi_write_options(
        HudiTarget.from_table(bucketed), operation=WriteOperation.UPSERT, profile=GLUE, catalog_sync=False
    )
    assert options["hoodie.index.type"] == "BUCKET"
    assert options["hoodie.index.bucket.engine"] == "SIMPLE"
    assert options["hoodie.bucket.index.num.buckets"] == "16"
    assert options["hoodie.metadata.record.index.enable"] == "false"
    assert options["hoodie.metadata.enable"] == "true"  # file listings still come from the metadata table
    assert "hoodie.record.index.update.partition.path" not in options
    assert options[INDEX_METADATA] == "bucket:16"
    plain = hudi_write_options(
        HudiTarget.from_table(table_config("orders")), operation=WriteOperation.UPSERT, profile=GLUE, catalog_sync=False
    )
    assert plain[INDEX_METADATA] == "record"


@pytest.mark.parametrize("profile", [GLUE, LOCAL])
def test_the_simple_index_turns_the_metadata_table_off_and_stays_global_when_partitioned(profile: WriteProfile) -> None:
    def options(**settings: Any) -> dict[str, str]:
        target = HudiTarget.from_table(table_config("small", index=IndexKind.SIMPLE, **settings))
        return hudi_write_options(target, operation=WriteOperation.UPSERT, profile=profile, catalog_sync=False)

    partitioned, unpartitioned = options(partition_by=("region",)), options()
    # a key whose partition value changes is found in its old partition and moved, as with the record index
    assert partitioned["hoodie.index.type"] == "GLOBAL_SIMPLE"
    assert partitioned["hoodie.simple.index.update.partition.path"] == "true"
    assert unpartitioned["hoodie.index.type"] == "SIMPLE"  # one partition: the global index's reconciling is moot
    for written in (partitioned, unpartitioned):
        # no metadata table at all: the profile's "true" is overridden, so Hudi lists the table's files itself
        assert written["hoodie.metadata.enable"] == "false"
        assert written["hoodie.metadata.record.index.enable"] == "false"
        assert "hoodie.record.index.update.partition.path" not in written
        assert written[INDEX_METADATA] == "simple"
        assert written["hoodie.parquet.bloom.filter.enabled"] == "false"  # the simple index reads the key column
    if profile is LOCAL:  # the join with the stored keys runs as one task for a small write, as every shuffle does
        assert partitioned["hoodie.global.simple.index.parallelism"] == "1"
        assert unpartitioned["hoodie.simple.index.parallelism"] == "1"
    else:
        assert "hoodie.global.simple.index.parallelism" not in partitioned
    with pytest.raises(ValidationError, match="index: simple and index_buckets exclude each other"):
        table_config("small", index=IndexKind.SIMPLE, index_buckets=2)


def commit(run_id: str | None, index: str | None) -> CommitSummary:
    return CommitSummary("1", "commit", (), run_id, 0, 0, 0, index=index)


def test_the_stored_index_is_the_last_odp_commits_and_another_one_is_refused() -> None:
    assert stored_index([]) is None
    assert stored_index([commit("r1", "bucket:4"), commit(None, None)]) == "bucket:4"  # a compaction records none
    assert stored_index([commit("r1", None)]) == "record"  # written before the index was recorded: a global one
    bucketed = table_config("orders", index_buckets=4)
    check_index_unchanged(bucketed, None)  # a new table takes any index
    check_index_unchanged(bucketed, "bucket:4")
    with pytest.raises(TableConfigError, match=r"asks for the bucket:4 index .* written with the record index"):
        check_index_unchanged(bucketed, "record")
    with pytest.raises(TableConfigError, match=r"asks for the record index .* written with the bucket:4 index"):
        check_index_unchanged(table_config("orders"), "bucket:4")
    # the simple index neither reads nor keeps a record index: a switch either way is refused too
    small = table_config("orders", index=IndexKind.SIMPLE)
    check_index_unchanged(small, "simple")
    with pytest.raises(TableConfigError, match=r"asks for the simple index \(index: simple, index_buckets: None\), "):
        check_index_unchanged(small, "record")
    with pytest.raises(TableConfigError, match=r"asks for the record index .* written with the simple index"):
        check_index_unchanged(table_config("orders"), "simple")


def dataset(**settings: Any) -> DatasetConfig:
    fields = {
        "name": "orders_by_region",
        "zone": Zone.CONFORMED,
        "database": "conformed_db",
        "sources": (DatasetSource(name="orders", table="src.app.orders"),),
        "sql": "SELECT * FROM orders",
        "key": ("id",),
        "partition_by": ("region",),
        "table_type": TableType.COPY_ON_WRITE,
        "refresh": Refresh.FULL,
        "quality": (),
        "file": "datasets/orders_by_region.yaml",
    }
    return DatasetConfig(**{**fields, **settings})


def test_a_dataset_is_written_with_the_same_builder_the_raw_tables_index_and_the_profiles_compaction() -> None:
    tag = CommitTag("run-1", ("src.app.orders@20260101",), extra={"_odp_consumed": '{"src.app.orders": "20260101"}'})
    options = hudi_write_options(
        HudiTarget.from_dataset(dataset(table_type=TableType.MERGE_ON_READ)),
        operation=WriteOperation.UPSERT,
        profile=WriteProfile(compaction_delta_commits=3),
        catalog_sync=True,
        metadata=tag.metadata(),
    )
    assert options["hoodie.table.name"] == "orders_by_region"
    assert options["hoodie.datasource.write.recordkey.field"] == "id"
    assert options["hoodie.datasource.write.precombine.field"] == ""
    assert options["hoodie.record.merge.mode"] == "COMMIT_TIME_ORDERING"  # each run recomputes its rows
    assert options["hoodie.datasource.write.keygenerator.class"] == "org.apache.hudi.keygen.SimpleKeyGenerator"
    # the raw tables' record level index (global, a key changing partition moves), not GLOBAL_SIMPLE
    assert options["hoodie.index.type"] == "RECORD_INDEX"
    assert options["hoodie.record.index.update.partition.path"] == "true"
    assert options[INDEX_METADATA] == "record"
    # the profile's compaction, not a constant of the dataset job
    assert options["hoodie.compact.inline.max.delta.commits"] == "3"
    # the dataset's own catalog names, no disguise as a raw table
    assert options["hoodie.datasource.hive_sync.database"] == "conformed_db"
    assert options["hoodie.datasource.hive_sync.table"] == "orders_by_region"
    assert options["hoodie.datasource.hive_sync.partition_fields"] == "region"
    assert json.loads(options["_odp_consumed"]) == {"src.app.orders": "20260101"}
    assert json.loads(options["_odp_file_ids"]) == ["src.app.orders@20260101"]
    assert options["_odp_run_id"] == "run-1"
    # a dataset's SQL may produce a key twice: Hudi's pre-combine stays on
    assert "hoodie.combine.before.upsert" not in options


def test_a_raw_tables_target() -> None:
    target = HudiTarget.from_table(
        table_config("events", mode=TableMode.HISTORICAL, partition_by=("day",), index_buckets=8)
    )
    assert target == HudiTarget(
        label="src.app.events",
        name="events",
        database="lake_db",
        record_keys=("id", "_odp_seq"),
        partitions=("day",),
        table_type=TableType.COPY_ON_WRITE,
        ordering=Ordering.EVENT_TIME,
        ordering_field="_odp_seq",
        index_buckets=8,
        one_row_per_key=True,
    )
    assert target.index == "bucket:8"


def test_catalog_sync_reads_partition_values_decoded_from_encoded_paths_and_as_written_from_unencoded_ones() -> None:
    """An encoded table syncs with ODP's decoding extractor (jvm/partition-extractor; tests/unit/etl/
    test_partition_paths.py runs it), an unencoded one with Hudi's own: a literal % in its paths is no escape."""
    target = HudiTarget.from_table(table_config("sites", partition_by=("region",)))
    extractors = {
        encoded: hudi_write_options(
            target.with_stored_layout(encoded), operation=WriteOperation.UPSERT, profile=GLUE, catalog_sync=True
        )["hoodie.datasource.hive_sync.partition_extractor_class"]
        for encoded in (None, True, False)
    }
    assert extractors == {
        None: "odp.hudi.DecodingPartitionValueExtractor",  # a new table: encoded
        True: "odp.hudi.DecodingPartitionValueExtractor",
        False: "org.apache.hudi.hive.MultiPartKeysValueExtractor",
    }
    # the class make setup compiles into .cache/jars/odp-hudi-extensions.jar
    source = REPO_ROOT / "jvm/partition-extractor/src/main/java/odp/hudi/DecodingPartitionValueExtractor.java"
    assert "public class DecodingPartitionValueExtractor implements PartitionValueExtractor" in source.read_text()


def test_a_write_of_a_table_with_nothing_to_clean_turns_hudis_automatic_clean_off() -> None:
    target = HudiTarget.from_table(table_config("events", partition_by=("day",)))
    write = {"operation": WriteOperation.UPSERT, "profile": GLUE, "catalog_sync": False}
    assert "hoodie.clean.automatic" not in hudi_write_options(target, **write)  # Hudi's default: on
    assert hudi_write_options(target, **write, clean=False)["hoodie.clean.automatic"] == "false"


def _every_target() -> list[HudiTarget]:
    """A raw table of every table type, mode, partitioning and index, and a dataset of each table type."""
    indexes: dict[str, dict[str, Any]] = {
        "record": {},
        "simple": {"index": IndexKind.SIMPLE},
        "bucket": {"index_buckets": 4},
    }
    raw = [
        HudiTarget.from_table(table_config("t", table_type=kind, mode=mode, partition_by=partitions, **indexes[index]))
        for kind, mode, partitions, index in itertools.product(TableType, TableMode, ((), ("region",)), indexes)
    ]
    return [*raw, *(HudiTarget.from_dataset(dataset(table_type=kind)) for kind in TableType)]


@pytest.mark.parametrize("target", _every_target(), ids=lambda t: f"{t.label}-{t.table_type.value}-{t.index}")
def test_every_write_keeps_hudi_table_version_6_and_never_upgrades(target: HudiTarget) -> None:
    """Athena reads table version 6 (etl.hudi.table_version): no write path of any table may lose it."""
    for operation, profile, catalog_sync, clean in itertools.product(
        WriteOperation, (GLUE, LOCAL), (False, True), (False, True)
    ):
        options = hudi_write_options(
            target,
            operation=operation,
            profile=profile,
            catalog_sync=catalog_sync,
            input_rows=10,
            metadata={"hoodie.write.table.version": "8"},  # nothing passed in can change it
            clean=clean,
        )
        assert options["hoodie.write.table.version"] == "6", (operation, profile, catalog_sync, clean)
        assert options["hoodie.write.auto.upgrade"] == "false", (operation, profile, catalog_sync, clean)


@pytest.mark.parametrize("profile", [GLUE, LOCAL])
def test_a_first_load_writes_no_record_index_and_the_next_write_builds_it_sized_for_the_stored_rows(
    profile: WriteProfile,
) -> None:
    """docs/decisions/033: the load leaves the index to the table's next write (Hudi builds it from the files)."""
    target = HudiTarget.from_table(table_config("orders"))
    load = hudi_write_options(target, operation=WriteOperation.BULK_INSERT, profile=profile, catalog_sync=False)
    assert defers_record_index(target, WriteOperation.BULK_INSERT)
    assert load["hoodie.index.type"] == "RECORD_INDEX"  # the table's index, recorded as such
    assert load["_odp_index"] == "record"
    assert load["hoodie.metadata.enable"] == "true"  # the file listing is written
    assert load["hoodie.metadata.record.index.enable"] == "false"  # the index is not
    upsert = hudi_write_options(
        target,
        operation=WriteOperation.UPSERT,
        profile=profile,
        catalog_sync=False,
        input_rows=20,
        stored_rows=2_000_000,
    )
    assert upsert["hoodie.metadata.record.index.enable"] == "true"
    if profile is LOCAL:
        # the index the upsert builds holds the stored keys: sized for them, not for its 20 changes
        assert upsert["hoodie.metadata.record.index.min.filegroup.count"] == "8"
        assert upsert["hoodie.upsert.shuffle.parallelism"] == "1"  # the shuffles still follow the input
    for operation in (WriteOperation.UPSERT, WriteOperation.INSERT_OVERWRITE_TABLE):
        assert not defers_record_index(target, operation)
    # the bucket and the simple index build no record index at all
    for other in (replace(target, index_buckets=4), replace(target, simple_index=True)):
        assert not defers_record_index(other, WriteOperation.BULK_INSERT)


def test_a_load_of_more_than_a_million_rows_writes_its_record_index() -> None:
    """docs/decisions/033's addendum: the write after a deferred load tags against every stored key before the index
    exists, which a table of millions pays on its first CDC write; a load above the bound writes the index itself."""
    target = HudiTarget.from_table(table_config("orders"))
    assert RECORD_INDEX_DEFERRED_UP_TO_ROWS == 1_000_000
    for rows, deferred in ((1_000_000, True), (1_000_001, False), (10_000_000, False)):
        assert defers_record_index(target, WriteOperation.BULK_INSERT, rows) is deferred
        load = hudi_write_options(
            target, operation=WriteOperation.BULK_INSERT, profile=GLUE, catalog_sync=False, input_rows=rows
        )
        assert load["hoodie.metadata.record.index.enable"] == str(not deferred).lower()
