"""Pure change logic on the shared Spark session (no Hudi writes)."""

from __future__ import annotations

import pytest

from etl.change_frame import for_current_table, latest_per_key, with_sequence
from etl.hudi.tombstones import mark_stale, tombstone_rows

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
