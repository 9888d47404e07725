"""Upsert or rewrite (etl.raw_table.write_strategy): the pure choice from the table's size and the run's change count."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import pytest

from etl.errors import TableConfigError
from etl.file_processor.table_plan import check_index_unchanged
from etl.hudi.timeline import CommitSummary, HudiTableState, cleaning_due, commit_summary
from etl.raw_table import write_strategy
from etl.raw_table.write_strategy import (
    DEFAULT_COSTS,
    StoredTable,
    WriteCosts,
    merge_on_read_advice,
    rewrite_refusal,
    simple_index_advice,
    worth_sizing,
)
from odp.config.models import IndexKind, TableMode, TableType
from odp.tracker import WriteStrategy
from tests.support.lake import table_config

# The choice's logic is tested with fixed costs (the first estimate, 7 us per rewritten row), not with the default,
# which is calibrated from bench runs (test_the_default_costs_follow_the_measured_runs).
LOGIC = WriteCosts(seconds_per_stored_row=7e-6)
choose_write = partial(write_strategy.choose_write, costs=LOGIC)

# 200,000 rows in 2 file groups of one partition (about 40 bytes a row)
TABLE = StoredTable(rows=200_000, bytes=8_000_000, file_groups=2, partitions=1)


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


def test_a_refused_table_that_was_not_sized_gives_its_refusal_not_an_unknown_size() -> None:
    # a MERGE_ON_READ table is never sized (etl.raw_table.rewrite.choose_for_run); the fleet run i27-fleet-10m logged its
    # 32270 changes as "the table's size is unknown"
    refused = "MERGE_ON_READ: a rewrite would leave log-file keys in the record index (Hudi 1.0.2)"
    choice = choose_write(None, 32_270, refused=refused)
    assert choice.strategy is WriteStrategy.UPSERT
    assert choice.reason == (
        "upsert: 32270 changes; never rewritten: MERGE_ON_READ: a rewrite would leave log-file keys in the record "
        "index (Hudi 1.0.2)"
    )


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


def _stat(rows: int, *, inserts: int = 0, updates: int = 0, deletes: int = 0, previous: str = "000") -> dict:
    """One write statistic as Hudi's ``toJsonString`` writes it (a new file's previous commit is ``"null"``), for a
    file of 40 bytes a row."""
    return {
        "path": f"p/f{rows}-{inserts}_1-0-1_001.parquet",
        "prevCommit": previous,
        "numWrites": rows,
        "fileSizeInBytes": 40 * rows,
        "numInserts": inserts,
        "numUpdateWrites": updates,
        "numDeletes": deletes,
    }


def _commit(stats: list[dict], action: str = "commit") -> CommitSummary:
    return commit_summary("001", action, {"partitionToWriteStats": {"p": stats}})


def test_the_commit_summary_counts_the_rows_rewritten_for_updates_and_deletes_alone() -> None:
    summary = _commit(
        [
            _stat(30_000, updates=3, deletes=1),  # rewritten for its updates and deletes alone
            _stat(20_000, updates=2),
            _stat(10_000, inserts=100, updates=5),  # took inserts: the small file of its partition
            _stat(500, inserts=500, previous="null"),  # a new file group
            {**_stat(9_000, updates=9), "path": "p/.f9_001.log.1_0-1-1"},  # a log file, no base file
        ]
    )
    assert (summary.rows_rewritten, summary.files_rewritten, summary.bytes_rewritten) == (50_000, 2, 2_000_000)
    assert (summary.updates, summary.deletes) == (19, 1)


def test_a_file_group_too_large_for_merge_on_reads_inserts_counts_its_stored_rows() -> None:
    """COPY_ON_WRITE gives inserts to a file group under 100 MB, MERGE_ON_READ only to one under 4 MiB: a larger
    group that took inserts with its updates would log those updates under MERGE_ON_READ."""
    summary = _commit(
        [
            # one unpartitioned group of 200,000 rows (8,000,000 bytes): 500 inserts, 900 updates, 100 deletes
            _stat(200_000, inserts=500, updates=900, deletes=100),
            # a group of 100,000 rows (4,000,000 bytes, under 4 MiB = 4,194,304) with inserts: MERGE_ON_READ's too
            _stat(100_000, inserts=50, updates=10),
            # 120,000 rows (4,800,000 bytes) that took inserts only: no update or delete to log
            _stat(120_000, inserts=2_000),
        ]
    )
    # the first group's 199,500 stored rows and their share of its bytes: 8,000,000 x 199,500 / 200,000
    assert (summary.rows_rewritten, summary.files_rewritten, summary.bytes_rewritten) == (199_500, 1, 7_980_000)
    assert merge_on_read_advice(summary, copy_on_write=True) == (
        "the last commit rewrote 199500 stored rows (7980000 bytes) of 1 file groups for 1010 updates and deletes, "
        "197 rows each: table_type MERGE_ON_READ would log them instead"
    )
    assert CommitSummary("001", "commit", (), None, 0, 0, 0).files_rewritten == 0  # a summary without statistics


def test_merge_on_read_is_recommended_when_an_upsert_rewrites_many_rows_per_update_or_delete() -> None:
    # a fact table's late updates: 28 old partitions of 33,000 rows rewritten for 560 updates and deletes, and the
    # newest partition's small file with the inserts
    late = [_stat(33_000, updates=18, deletes=2)] * 28 + [_stat(40_000, inserts=9_000, updates=2_000)]
    advice = merge_on_read_advice(_commit(late), copy_on_write=True)
    assert advice == (
        "the last commit rewrote 924000 stored rows (36960000 bytes) of 28 file groups for 2560 updates and deletes, "
        "360 rows each: table_type MERGE_ON_READ would log them instead"
    )
    # not to a MERGE_ON_READ table, nor without a commit, nor from a rewrite (replacecommit)
    assert merge_on_read_advice(_commit(late), copy_on_write=False) is None
    assert merge_on_read_advice(None, copy_on_write=True) is None
    assert merge_on_read_advice(_commit(late, action="replacecommit"), copy_on_write=True) is None
    # from 50 rows per update or delete: 200,000 rows for 4,000 updates, not for 4,001
    assert merge_on_read_advice(_commit([_stat(200_000, updates=4_000)]), copy_on_write=True) is not None
    assert merge_on_read_advice(_commit([_stat(200_000, updates=4_001)]), copy_on_write=True) is None
    # and from 4 MiB rewritten: a table of one small file (10,000 rows, 0.4 MB) rewritten for 20 updates is not named
    assert merge_on_read_advice(_commit([_stat(10_000, updates=20)]), copy_on_write=True) is None
    assert merge_on_read_advice(_commit([_stat(104_858, updates=20)]), copy_on_write=True) is not None
    # the hot partitions only (every rewritten file took inserts), or an append: no file group rewritten for its
    # updates alone, nothing MERGE_ON_READ would log instead
    recent = [_stat(40_000, inserts=9_000, updates=2_000, deletes=500)] * 3
    assert merge_on_read_advice(_commit(recent), copy_on_write=True) is None
    appended = [_stat(40_000, inserts=9_000), _stat(9_000, inserts=9_000, previous="null")]
    assert merge_on_read_advice(_commit(appended), copy_on_write=True) is None


def test_the_cost_model_is_a_parameter() -> None:
    never = WriteCosts(seconds_per_stored_row=1.0)
    assert choose_write(TABLE, 400_000, costs=never).strategy is WriteStrategy.UPSERT


def test_only_copy_on_write_current_tables_with_the_record_or_simple_index_may_be_rewritten() -> None:
    assert rewrite_refusal(table_config("t"), "record") is None
    assert rewrite_refusal(table_config("t", index=IndexKind.SIMPLE), "simple") is None  # nothing to keep right
    assert rewrite_refusal(table_config("t", mode=TableMode.HISTORICAL), "record") == (
        "historical table: every change is appended"
    )
    assert rewrite_refusal(table_config("t", table_type=TableType.MERGE_ON_READ), "record") == (
        "MERGE_ON_READ: a rewrite would leave log-file keys in the record index (Hudi 1.0.2)"
    )
    assert rewrite_refusal(table_config("t"), "bucket:4") == (
        "index bucket:4: only record-index and simple-index tables are rewritten"
    )


def test_a_table_with_the_simple_index_is_told_when_it_has_outgrown_it() -> None:
    """The limits are the measured crossovers (docs/decisions/004): an unpartitioned table's SIMPLE index kept up with the record index to 1,000,000 rows, a partitioned
    table's GLOBAL_SIMPLE only to about 50,000."""
    assert (write_strategy.SIMPLE_INDEX_MAX_ROWS, write_strategy.SIMPLE_INDEX_MAX_ROWS_PARTITIONED) == (
        1_000_000,
        50_000,
    )
    assert simple_index_advice(999_999, 90_000_000, partitioned=False) is None
    assert simple_index_advice(1_000_000, 40_000_000, partitioned=False) == (
        "the table has grown to 1000000 rows, 40000000 bytes of base files, past the 1000000 rows the simple index "
        "suits on an unpartitioned table: load it again with the record level index (index omitted)"
    )
    # a partitioned table's GLOBAL_SIMPLE joins the keys of every partition: it is outgrown far earlier
    assert simple_index_advice(49_999, 15_000_000, partitioned=True) is None
    assert simple_index_advice(50_000, 15_000_000, partitioned=True) == (
        "the table has grown to 50000 rows, 15000000 bytes of base files, past the 50000 rows the simple index "
        "suits on a partitioned table (each run joins the keys of every partition): load it again with the record "
        "level index (index omitted)"
    )


def test_the_default_costs_follow_the_measured_runs() -> None:
    """i27-4x200k (2026-11-25, docs/decisions/005): rewriting 4 x 206,000 rows took 83.7 s where upserting 4 x 36,000
    changes took 49.0 s (i12-4x200k): at 17% the upsert is the cheaper write, so the default must choose it;
    a run changing most of a table is still rewritten."""
    assert write_strategy.choose_write(TABLE, 34_000, costs=DEFAULT_COSTS).strategy is WriteStrategy.UPSERT
    assert write_strategy.choose_write(TABLE, 150_000, costs=DEFAULT_COSTS).strategy is WriteStrategy.REWRITE_TABLE


def test_a_commit_supersedes_files_when_it_writes_a_new_version_of_a_base_file_or_replaces_file_groups() -> None:
    assert _commit([_stat(500, inserts=500, previous="null")]).supersedes is False  # a new file group only
    assert _commit([_stat(10_000, inserts=20)]).supersedes is True  # inserts into an existing small file
    assert _commit([_stat(10_000, updates=3)]).supersedes is True
    log = {**_stat(9_000, updates=9), "path": "p/.f9_001.log.1_0-1-1"}  # a log block: nothing older to clean yet
    assert _commit([log]).supersedes is False
    replaced = {
        "partitionToWriteStats": {"p": [_stat(500, previous="null")]},
        "partitionToReplaceFileIds": {"p": ["f"]},
    }
    assert commit_summary("002", "replacecommit", replaced).supersedes is True  # insert_overwrite_table
    empty_replace = {**replaced, "partitionToReplaceFileIds": {"p": []}}
    assert commit_summary("002", "replacecommit", empty_replace).supersedes is False


def test_cleaning_is_due_unless_a_copy_on_write_table_never_superseded_a_file() -> None:
    """An append-only table (inserts into new file groups, a day-partitioned event table) has nothing to clean:
    Hudi 1.0.2 would plan a clean over every partition at each commit from its 10th and never write one."""
    appended = _commit([_stat(500, inserts=500, previous="null")])
    updated = _commit([_stat(10_000, updates=3)])

    def state(*commits: CommitSummary) -> HudiTableState:
        return HudiTableState("file:/lake/t", exists=True, commits=commits)

    assert cleaning_due(state(*[appended] * 30), merge_on_read=False) is False
    assert cleaning_due(state(*[appended] * 29, updated), merge_on_read=False) is True  # one update is enough
    assert cleaning_due(state(updated, *[appended] * 29), merge_on_read=False) is True  # while it is active
    assert cleaning_due(state(*[appended] * 30), merge_on_read=True) is True  # compactions leave slices to clean
    assert cleaning_due(HudiTableState("file:/lake/new"), merge_on_read=False) is True  # a new table: Hudi's default


def test_a_table_left_to_its_size_takes_the_simple_index_under_small_table_rows_at_its_first_write_only() -> None:
    """Issue 47 item 4: small tables are created with the simple index (docs/decisions/004), decided once."""
    left = table_config("t", small_table_rows=100_000)
    chosen, reason = write_strategy.choose_index(left, None, 99_999)
    assert (chosen.index, reason) == (
        IndexKind.SIMPLE,
        "index simple: the first write brings 99999 rows, under small_table_rows 100000",
    )
    chosen, reason = write_strategy.choose_index(left, None, 100_000)
    assert chosen.index is IndexKind.RECORD
    assert reason == "index record: the first write brings 100000 rows, not under small_table_rows 100000"
    # partitioned: at most where GLOBAL_SIMPLE stops paying (50,000)
    partitioned = table_config("p", partition_by=("region",), small_table_rows=100_000)
    assert write_strategy.choose_index(partitioned, None, 60_000)[0].index is IndexKind.RECORD
    assert write_strategy.choose_index(partitioned, None, 49_999)[0].index is IndexKind.SIMPLE
    # later writes keep what the first chose, whatever their size, and say nothing
    assert write_strategy.choose_index(left, "simple", 5_000_000) == (
        left.model_copy(update={"index": IndexKind.SIMPLE}),
        None,
    )
    assert write_strategy.choose_index(left, "record", 3) == (left, None)
    assert write_strategy.choose_index(left, None, 3, exists=True) == (left, None)  # a table without an ODP commit
    # an index named in the table's settings (small_table_rows 0) is never chosen for it
    named = table_config("n")
    assert write_strategy.choose_index(named, None, 3) == (named, None)
    # the plan accepts either stored index for a table left to its size, and still refuses a bucket index
    check_index_unchanged(left, "simple")
    check_index_unchanged(left, "record")
    with pytest.raises(TableConfigError, match="written with the bucket:4 index"):
        check_index_unchanged(left, "bucket:4")
    with pytest.raises(TableConfigError, match="written with the simple index"):
        check_index_unchanged(named, "simple")
