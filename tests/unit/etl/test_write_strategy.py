"""Upsert or rewrite (etl.hudi.write_strategy): the pure choice from the table's size and the run's change count."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import pytest

from etl.hudi import write_strategy
from etl.hudi.write_strategy import DEFAULT_COSTS, StoredTable, WriteCosts, rewrite_refusal, worth_sizing
from odp.config.models import TableMode, TableType
from odp.tracker import WriteStrategy
from tests.support.lake import table_config

# The choice's logic is tested with fixed costs (the first estimate, 7 us per rewritten row), not with the default,
# which is calibrated from bench runs (test_the_default_costs_follow_the_measured_runs).
LOGIC = WriteCosts(seconds_per_stored_row=7e-6)
choose_write = partial(write_strategy.choose_write, costs=LOGIC)

# 200,000 rows in 2 file groups of one partition (about 40 bytes a row); the last commit wrote one of them
TABLE = StoredTable(rows=200_000, bytes=8_000_000, file_groups=2, partitions=1, last_file_groups=1)


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (1, WriteStrategy.UPSERT),  # a 0.0005% wave: 70 us against 1.4 s of rewriting
        (2_000, WriteStrategy.UPSERT),  # 1%: 0.14 s against 1.4 s
        (20_000, WriteStrategy.UPSERT),  # 10%: 1.4 s against 1.54 s (and the margin)
        (34_000, WriteStrategy.REWRITE_TABLE),  # 17% (bench's workload): 2.38 s against 1.64 s
        (400_000, WriteStrategy.REWRITE_TABLE),  # more changes than rows (a replayed backlog)
    ],
)
def test_the_cheaper_plan_is_chosen_from_the_change_share(changes: int, expected: WriteStrategy) -> None:
    choice = choose_write(TABLE, changes)
    assert choice.strategy is expected
    assert choice.reason.startswith(f"{expected.value}: {changes} changes")
    assert not choice.recommend_merge_on_read


def test_the_reason_names_the_numbers_and_both_estimates() -> None:
    assert choose_write(TABLE, 34_000).reason == (
        "rewrite_table: 34000 changes into about 200000 rows (17.0%, 8000000 bytes, 2 file groups, 1 partitions): "
        "upsert about 6.4 s, rewrite of the table about 5.6 s"
    )


def test_a_rewrite_must_save_a_fifth_of_the_upsert() -> None:
    small = StoredTable(rows=10_000, bytes=400_000, file_groups=1, partitions=1)
    any_saving = replace(LOGIC, min_saving_seconds=0.0)
    # 1,300 changes: rewrite 7 us x 11,300 = 79 ms, cheaper than the upsert's 91 ms but above 0.8 x 91 = 73 ms
    assert choose_write(small, 1_300, costs=any_saving).strategy is WriteStrategy.UPSERT
    # 1,600 changes: rewrite 81 ms against 0.8 x 112 = 90 ms
    assert choose_write(small, 1_600, costs=any_saving).strategy is WriteStrategy.REWRITE_TABLE


def test_a_small_table_stays_an_upsert_whatever_its_share() -> None:
    # 10,000 rows, 5,000 changes (50%): the rewrite saves 0.35 - 0.105 = 0.245 s of about 4 s, under 0.5 s
    small = StoredTable(rows=10_000, bytes=400_000, file_groups=1, partitions=1)
    assert choose_write(small, 5_000).strategy is WriteStrategy.UPSERT
    # 10,000 changes into the same rows save 0.7 - 0.14 = 0.56 s: rewritten
    assert choose_write(small, 10_000).strategy is WriteStrategy.REWRITE_TABLE


def test_too_few_changes_upsert_without_reading_the_size() -> None:
    # 0.5 s of saving needs at least 0.5 / 70 us = 7,143 changes, whatever the table
    assert not worth_sizing(7_142)
    assert worth_sizing(7_143)
    assert choose_write(None, 7_142).reason == "upsert: 7142 changes, fewer than the 7143 a rewrite needs to pay off"
    assert choose_write(TABLE, 2_000).reason == "upsert: 2000 changes, fewer than the 7143 a rewrite needs to pay off"


def test_an_unknown_size_is_an_upsert() -> None:
    assert choose_write(None, 50_000).reason == "upsert: 50000 changes, the table's size is unknown"
    mor = StoredTable(rows=None, bytes=1_000, file_groups=1, partitions=1)
    assert choose_write(mor, 5_000_000).strategy is WriteStrategy.UPSERT


def test_a_refused_table_upserts_and_says_why() -> None:
    choice = choose_write(TABLE, 400_000, refused="index bucket:4: only record-index tables are rewritten")
    assert choice.strategy is WriteStrategy.UPSERT
    assert choice.reason.endswith("; never rewritten: index bucket:4: only record-index tables are rewritten")


def test_partitions_are_rewritten_when_few_are_hit() -> None:
    partitioned = StoredTable(rows=1_000_000, bytes=40_000_000, file_groups=100, partitions=100)
    # 20,000 changes in 2 of 100 partitions: upsert 1.4 s; the partitions 7 us x (20,000 + 20,000) = 0.28 s;
    # the table 7.14 s
    choice = choose_write(partitioned, 20_000, partitions_hit=2)
    assert choice.strategy is WriteStrategy.REWRITE_PARTITIONS
    assert "rewrite of the partitions about 4.3 s" in choice.reason
    # unknown partitions: only the table is priced, and it is dearer than the upsert
    assert choose_write(partitioned, 20_000).strategy is WriteStrategy.UPSERT


def test_merge_on_read_is_recommended_when_every_upsert_rewrites_every_file_group() -> None:
    scattered = StoredTable(rows=2_000_000, bytes=80_000_000, file_groups=10, partitions=1, last_file_groups=10)
    choice = choose_write(scattered, 10_000)
    assert choice.strategy is WriteStrategy.UPSERT
    assert choice.recommend_merge_on_read
    assert choice.reason.endswith(
        "; the last commit rewrote 10 of 10 file groups: changes scatter over every file group, "
        "table_type MERGE_ON_READ would log them instead"
    )
    # not for a MERGE_ON_READ table, nor for a table of few file groups, nor when the last commit touched few
    assert not choose_write(scattered, 10_000, copy_on_write=False).recommend_merge_on_read
    few = StoredTable(rows=2_000_000, bytes=80_000_000, file_groups=3, partitions=1, last_file_groups=3)
    assert not choose_write(few, 10_000).recommend_merge_on_read
    recent = StoredTable(rows=2_000_000, bytes=80_000_000, file_groups=10, partitions=1, last_file_groups=2)
    assert not choose_write(recent, 10_000).recommend_merge_on_read


def test_the_cost_model_is_a_parameter() -> None:
    never = WriteCosts(seconds_per_stored_row=1.0)
    assert choose_write(TABLE, 400_000, costs=never).strategy is WriteStrategy.UPSERT


def test_only_copy_on_write_current_tables_with_the_record_index_may_be_rewritten() -> None:
    assert rewrite_refusal(table_config("t"), "record") is None
    assert rewrite_refusal(table_config("t", mode=TableMode.HISTORICAL), "record") == (
        "historical table: every change is appended"
    )
    assert rewrite_refusal(table_config("t", table_type=TableType.MERGE_ON_READ), "record") == (
        "MERGE_ON_READ: a rewrite would leave log-file keys in the record index (Hudi 1.0.2)"
    )
    assert rewrite_refusal(table_config("t"), "bucket:4") == "index bucket:4: only record-index tables are rewritten"


def test_the_default_costs_follow_the_measured_runs() -> None:
    """bench/results/i27-4x200k (2026-11-25): rewriting 4 x 206,000 rows took 83.7 s where upserting 4 x 36,000
    changes took 49.0 s (i12-4x200k): at 17% the upsert is the cheaper write, so the default must choose it;
    a run changing most of a table is still rewritten."""
    assert write_strategy.choose_write(TABLE, 34_000, costs=DEFAULT_COSTS).strategy is WriteStrategy.UPSERT
    assert write_strategy.choose_write(TABLE, 150_000, costs=DEFAULT_COSTS).strategy is WriteStrategy.REWRITE_TABLE
