"""Pure change logic on the shared Spark session (no Hudi writes)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from etl.change_frame import LATER_STORED, UNRESOLVED, fill_kept, for_current_table, latest_per_key, with_sequence
from etl.raw_table.plan import plan_write
from etl.raw_table.stale_count import count_stale
from etl.raw_table.tombstones import mark_stale, tombstone_rows
from odp.config.models import TableType
from tests.support.lake import table_config
from tests.support.spark_work import job_counter

SCHEMA = "_odp_op string, _odp_ordering string, _odp_file string, _odp_file_order int, _odp_row long, id int, v string"


@pytest.mark.spark
def test_last_change_per_key_wins(spark) -> None:
    changes = spark.createDataFrame(
        [
            # key 1: insert then delete in one batch -> gone
            ("I", "01", "f1", 0, 0, 1, "a"),
            ("D", "02", "f1", 0, 1, 1, "a"),
            # key 2: delete then re-insert -> present
            ("D", "01", "f1", 0, 2, 2, "b"),
            ("I", "02", "f2", 1, 0, 2, "b2"),
            # key 3: several updates in one file, same ordering value: row position decides
            ("U", "05", "f1", 0, 3, 3, "c1"),
            ("U", "05", "f1", 0, 4, 3, "c2"),
            ("U", "04", "f2", 1, 1, 3, "older"),
            # key 4: same ordering in two files: the later file wins
            ("U", "07", "f1", 0, 5, 4, "d1"),
            ("U", "07", "f2", 1, 2, 4, "d2"),
        ],
        SCHEMA,
    )
    latest = with_sequence(changes).transform(latest_per_key(["id"]))
    rows = sorted((r.id, r._odp_op, r.v) for r in latest.collect())
    assert rows == [(1, "D", "a"), (2, "I", "b2"), (3, "U", "c2"), (4, "U", "d2")]
    shaped = for_current_table(with_sequence(changes).transform(latest_per_key(["id"])))
    assert sorted((r.id, r._hoodie_is_deleted) for r in shaped.collect()) == [
        (1, True),
        (2, False),
        (3, False),
        (4, False),
    ]
    assert shaped.columns == ["id", "v", "_odp_seq", "_hoodie_is_deleted"]


@pytest.mark.spark
def test_sequence_sorts_like_ordering_file_row(spark) -> None:
    frame = with_sequence(spark.createDataFrame([("U", "0042", "a/f.parquet", 0, 7, 1, "x")], SCHEMA))
    assert frame.first()._odp_seq == "0042 a/f.parquet 000000000007"
    empty = with_sequence(spark.createDataFrame([("I", "", "LOAD00000001.parquet", 0, 9, 1, "x")], SCHEMA))
    assert empty.first()._odp_seq < frame.first()._odp_seq  # a full-load row without ordering is older


@pytest.mark.spark
def test_upserts_not_newer_than_a_tombstone_are_stale(spark) -> None:
    changes = spark.createDataFrame(
        [
            ("U", "03", "late", 0, 0, 1, "older than the delete"),
            ("U", "05", "late", 0, 1, 2, "same ordering, earlier file"),
            ("I", "09", "late", 0, 2, 3, "newer than the delete"),
            ("D", "01", "late", 0, 3, 4, "an older delete: kept, changes nothing"),
            ("U", "01", "late", 0, 4, 5, "no tombstone"),
        ],
        SCHEMA,
    )
    latest = with_sequence(changes).transform(latest_per_key(["id"]))
    tombstones = spark.createDataFrame(
        [(1, "05 f 000000000000"), (2, "05 m 000000000000"), (3, "05 f 000000000000"), (4, "05 f 000000000000")],
        "id int, _odp_seq string",
    )
    flagged = mark_stale(latest, tombstones, ["id"])
    assert flagged.columns == [*latest.columns, "_odp_stale"]  # the key keeps its place
    assert sorted((r.id, r._odp_stale) for r in flagged.collect()) == [
        (1, True),
        (2, True),
        (3, False),
        (4, False),
        (5, False),
    ]
    assert sorted((r.id, r._odp_seq) for r in tombstone_rows(latest, ["id"]).collect()) == [(4, "01 late 000000000003")]


def _late_changes(spark):
    """A MERGE_ON_READ batch of late deletes and updates against stored rows and a committed delete: the changes, and
    their plan."""
    changes = spark.createDataFrame(
        [
            ("D", "03", "late", 0, 0, 1, "older than the stored row: loses"),
            ("D", "05", "late", 0, 1, 2, "the stored row's own ordering: wins"),
            ("D", "09", "late", 0, 2, 3, "newer than the stored row: wins"),
            ("D", "01", "late", 0, 3, 4, "nothing stored: kept"),
            ("U", "03", "late", 0, 4, 5, "older than a committed delete: stale"),
            ("U", "01", "late", 0, 5, 6, "older than the stored row: Hudi's merge drops it"),
        ],
        SCHEMA,
    )
    stored = spark.createDataFrame(
        [(1, "05 f 000000000000"), (2, "05 late 000000000001"), (3, "05 f 000000000000"), (6, "05 f 000000000000")],
        "id int, _odp_seq string",
    )
    tombstones = spark.createDataFrame([(5, "04 f 000000000000")], "id int, _odp_seq string")
    config = table_config("late", table_type=TableType.MERGE_ON_READ)
    plan = plan_write(
        with_sequence(changes), config, has_full_load=False, exists=True, tombstones=tombstones, stored_order=stored
    )
    return changes, plan


@pytest.mark.spark
def test_a_merge_on_read_delete_older_than_its_stored_row_is_stale_and_no_tombstone(spark) -> None:
    """``plan_write`` with the stored ``_odp_seq`` of the deleted keys (etl.raw_table.late_deletes): Hudi's rule, a tie
    goes to the change; a delete that loses is dropped with the stale upserts and recorded nowhere."""
    changes, plan = _late_changes(spark)
    assert sorted((r.id, r._hoodie_is_deleted) for r in plan.rows.collect()) == [
        (2, True),
        (3, True),
        (4, True),
        (6, False),
    ]
    assert sorted((r.id, r._odp_op) for r in plan.stale.collect()) == [(1, "D"), (5, "U")]
    assert sorted(r.id for r in plan.tombstones.collect()) == [2, 3, 4]  # not key 1: its delete was never applied
    # without the stored orderings (COPY_ON_WRITE: Hudi's merge decides) every delete is written and recorded
    cow = plan_write(with_sequence(changes), table_config("late"), has_full_load=False, exists=True)
    assert sorted(r.id for r in cow.tombstones.collect()) == [1, 2, 3, 4]


@pytest.mark.spark
def test_the_tombstone_write_counts_the_stale_changes_and_a_run_without_one_counts_them_apart(
    spark, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """etl.raw_table.stale_count: the stale changes of a plan counted by the tombstone write's own pass, by a query of
    their own when the run writes no tombstone, and again by a query when the write's counts never come."""
    _, plan = _late_changes(spark)
    observed = count_stale(plan, ["id"], "late", writes_tombstones=True)
    observed.plan.tombstones.coalesce(1).write.parquet(str(tmp_path / "tombstones"))
    before = job_counter(spark)
    assert observed.dropped(after_tombstone_write=True) == 2
    assert job_counter(spark) == before  # the counts came with the write: no job of their own
    # the observed plan records the same tombstones and writes the same rows
    assert sorted(r.id for r in spark.read.parquet(str(tmp_path / "tombstones")).collect()) == [2, 3, 4]
    assert sorted(r.id for r in observed.plan.rows.collect()) == [2, 3, 4, 6]

    # a run that writes no tombstone counts them in a query of their own (here several jobs: the test's frames are not
    # one partition, a run's small batch is)
    apart = count_stale(plan, ["id"], "late", writes_tombstones=False)
    assert apart.observation is None
    before = job_counter(spark)
    assert apart.dropped(after_tombstone_write=False) == 2
    assert job_counter(spark) > before

    # an observed count that never arrives (here: the tombstones were never written) is taken by a query, and said
    caplog.set_level(logging.WARNING, logger="etl.raw_table.stale_count")
    lost = count_stale(_late_changes(spark)[1], ["id"], "late", writes_tombstones=True)
    assert lost.dropped(after_tombstone_write=True, within_seconds=0.2) == 2
    assert "stale counts did not arrive; counted again" in caplog.text
    # and a plan that marks nothing drops nothing, with no job
    unmarked = plan_write(
        with_sequence(spark.createDataFrame([("U", "01", "f", 0, 0, 1, "a")], SCHEMA)),
        table_config("plain"),
        has_full_load=False,
        exists=True,
    )
    before = job_counter(spark)
    assert count_stale(unmarked, ["id"], "plain", writes_tombstones=True).dropped(after_tombstone_write=True) == 0
    assert job_counter(spark) == before


KEPT_SCHEMA = f"{SCHEMA}, _odp_keep array<string>"


@pytest.mark.spark
def test_kept_cells_take_the_nearest_earlier_value_in_event_time_order(spark) -> None:
    """``fill_kept``: the batch's earlier change or the stored row, whichever is later; never across a delete."""
    changes = spark.createDataFrame(
        [
            # key 1: full, then kept: the batch's earlier change supplies it
            ("U", "02", "f1", 0, 0, 1, "b1", None),
            ("U", "03", "f1", 0, 1, 1, None, ["v"]),
            # key 2: a late full change (01) and a kept one (05); the stored row (03) is newer than 01: it wins
            ("U", "01", "f2", 1, 0, 2, "late", None),
            ("U", "05", "f2", 1, 1, 2, None, ["v"]),
            # key 3: stored row, then a delete in the batch, then kept: nothing to keep from
            ("D", "04", "f1", 0, 2, 3, None, None),
            ("I", "05", "f1", 0, 3, 3, None, ["v"]),
            # key 4: kept, but the stored row is newer: event-time ordering drops the change, it needs no value
            ("U", "02", "f1", 0, 4, 4, None, ["v"]),
            # key 5: kept twice in a row: both take the stored value
            ("U", "06", "f1", 0, 5, 5, None, ["v"]),
            ("U", "07", "f1", 0, 6, 5, None, ["v"]),
        ],
        KEPT_SCHEMA,
    )
    stored = spark.createDataFrame(
        [(2, "03", "stored2"), (3, "01", "stored3"), (4, "09", "stored4"), (5, "01", "stored5")],
        "id int, _odp_seq string, v string",
    ).withColumn("_odp_op", F.lit("U"))
    # stored _odp_seq values compare with the batch's "ordering file row" text
    filled = with_sequence(changes).transform(fill_kept(["id"], ["v"], stored))
    rows = sorted((r.id, r._odp_ordering, r.v, tuple(r[UNRESOLVED]), r[LATER_STORED]) for r in filled.collect())
    assert rows == [
        (1, "02", "b1", (), False),
        (1, "03", "b1", (), False),
        (2, "01", "late", (), True),
        (2, "05", "stored2", (), False),
        (3, "04", None, (), False),
        (3, "05", None, ("v",), False),
        (4, "02", None, ("v",), True),
        (5, "06", "stored5", (), False),
        (5, "07", "stored5", (), False),
    ]
