"""Upsert or rewrite: the cheaper write of one run of a current table, chosen from what is already known (pure).

The inputs are the table as its timeline and file listing describe it (:class:`StoredTable`, read by
:func:`etl.hudi.table_size.stored_table`) and the run's change count; nothing here reads data. The cost model
(:class:`WriteCosts`) is bench/README's estimate on 2 cores: a table run costs a fixed part (the commit, the
metadata table, the timeline: about 4 s) in either plan; an upsert adds about 70 us per change (the record index
lookup, the merge of the touched file groups); a rewrite adds about 21 us per stored row (measured, see
``WriteCosts.seconds_per_stored_row``; first estimated at 7 us from the naive rewrite's 3 to 4 us per row). The
fixed part is the same in both plans, so the choice compares the variable parts, and a rewrite must save at
least ``1 - margin`` of the upsert's variable part and at least ``min_saving_seconds``: a near tie, and every
small table (where either plan is its fixed part), stays an upsert, which writes fewer bytes.
etl/README.md ("Upsert or rewrite") has the model and where a rewrite is refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from etl.hudi.target import RECORD_INDEX
from odp.config.models import TableConfig, TableMode, TableType
from odp.tracker.statuses import WriteStrategy


@dataclass(frozen=True)
class StoredTable:
    """The table before the run, from its file listing and its latest commit's write statistics.

    ``rows``: estimated (the table's base-file bytes times the rows per byte of the base files the latest commit
    wrote), None when the latest commit wrote no base file; ``last_file_groups``: the file groups the latest
    commit wrote (an upsert: those it touched).
    """

    rows: int | None
    bytes: int
    file_groups: int
    partitions: int
    last_file_groups: int = 0


@dataclass(frozen=True)
class WriteCosts:
    """The cost model of :func:`choose_write` (seconds on 2 cores; bench/README, "The naive rewrite")."""

    fixed_seconds: float = 4.0  # either plan: the commit, the metadata table, the timeline
    seconds_per_change: float = 70e-6  # upsert: index lookup and merge, per change
    # rewrite: read, merge and write again, per stored row. Measured (bench/results/i27-4x200k, 2 cores): rewriting
    # 4 x 206,000 rows took 83.7 s where upserting 4 x 36,000 changes took 49.0 s (i12-4x200k): a rewritten row costs
    # about 0.3x an upserted change (first estimated at 0.1x, 7 us); with the 0.8 margin a rewrite is chosen from
    # about 60% of the rows changed.
    seconds_per_stored_row: float = 21e-6
    margin: float = 0.8  # a rewrite's variable part must be at most this share of the upsert's
    # and save at least this much: below it the choice is noise against the fixed part, and the upsert writes less
    min_saving_seconds: float = 0.5
    # MERGE_ON_READ is recommended when a COW table's last upsert touched at least this share of its file groups
    # (at least MOR_MIN_FILE_GROUPS of them) while a rewrite was not cheaper: every upsert rewrites it all.
    scatter_share: float = 0.9


DEFAULT_COSTS = WriteCosts()
MOR_MIN_FILE_GROUPS = 4


@dataclass(frozen=True)
class WriteChoice:
    """The plan of a run and its reason in one line (the run's ``write_strategy`` / ``write_reason``)."""

    strategy: WriteStrategy
    reason: str
    recommend_merge_on_read: bool = False


def rewrite_refusal(config: TableConfig, index: str) -> str | None:
    """Pure: why this table is never rewritten (None: it may be). ``index``: ``HudiTarget.index``.

    Only COPY_ON_WRITE current tables with the record level index. Hudi 1.0.2 keeps the record index right after
    ``insert_overwrite_table`` by reading the keys of the replaced file groups' **base files** and deleting those
    not written again (``HoodieBackedTableMetadataWriter.getRecordIndexReplacedRecords``); a MERGE_ON_READ key
    that lives only in a log file would keep a stale entry. The bucket index is left to its upsert (its file
    groups are the buckets). A historical table appends every change.
    """
    if config.mode is not TableMode.CURRENT:
        return "historical table: every change is appended"
    if config.table_type is not TableType.COPY_ON_WRITE:
        return "MERGE_ON_READ: a rewrite would leave log-file keys in the record index (Hudi 1.0.2)"
    if index != RECORD_INDEX:
        return f"index {index}: only record-index tables are rewritten"
    return None


def worth_sizing(changes: int, costs: WriteCosts = DEFAULT_COSTS) -> bool:
    """Pure: whether a rewrite could save ``min_saving_seconds`` for this many changes at all (else the table's size
    is not read: most runs change a few rows, and reading the size is fixed cost)."""
    return costs.seconds_per_change * changes >= costs.min_saving_seconds


def choose_write(
    stored: StoredTable | None,
    changes: int,
    *,
    refused: str | None = None,
    copy_on_write: bool = True,
    partitions_hit: int | None = None,
    costs: WriteCosts = DEFAULT_COSTS,
) -> WriteChoice:
    """Pure: upsert, rewrite the partitions hit, or rewrite the table, whichever the cost model says is cheaper.

    ``changes``: the run's changes (one per key, deletes included); ``refused``: :func:`rewrite_refusal`'s
    reason; ``copy_on_write``: the table's type (MERGE_ON_READ is recommended to COW tables only);
    ``partitions_hit``: the partitions the changes touch (None: unknown, then no partition rewrite).
    A partition rewrite is priced as its share of the stored rows (partitions of equal size).
    """
    if not worth_sizing(changes, costs):
        fewest = math.ceil(costs.min_saving_seconds / costs.seconds_per_change)
        return WriteChoice(
            WriteStrategy.UPSERT, f"upsert: {changes} changes, fewer than the {fewest} a rewrite needs to pay off"
        )
    if stored is None or stored.rows is None:
        return WriteChoice(WriteStrategy.UPSERT, f"upsert: {changes} changes, the table's size is unknown")
    share = changes / stored.rows if stored.rows else 1.0
    scope = (
        f"{changes} changes into about {stored.rows} rows ({share:.1%}, {stored.bytes} bytes, "
        f"{stored.file_groups} file groups, {stored.partitions} partitions)"
    )
    if refused is not None:
        return _upsert(stored, f"upsert: {scope}; never rewritten: {refused}", costs, copy_on_write=copy_on_write)
    upsert = costs.seconds_per_change * changes
    table = costs.seconds_per_stored_row * (stored.rows + changes)
    options = [(WriteStrategy.REWRITE_TABLE, table, "the table")]
    if partitions_hit is not None and stored.partitions > 1 and partitions_hit < stored.partitions:
        part_rows = stored.rows * partitions_hit / stored.partitions
        options.append(
            (WriteStrategy.REWRITE_PARTITIONS, costs.seconds_per_stored_row * (part_rows + changes), "the partitions")
        )
    strategy, seconds, what = min(options, key=lambda option: option[1])
    estimate = (
        f"upsert about {costs.fixed_seconds + upsert:.1f} s, rewrite of {what} "
        f"about {costs.fixed_seconds + seconds:.1f} s"
    )
    if seconds <= costs.margin * upsert and upsert - seconds >= costs.min_saving_seconds:
        return WriteChoice(strategy, f"{strategy.value}: {scope}: {estimate}")
    return _upsert(stored, f"upsert: {scope}: {estimate}", costs, copy_on_write=copy_on_write)


def _upsert(stored: StoredTable, reason: str, costs: WriteCosts, *, copy_on_write: bool) -> WriteChoice:
    """An upsert, with the MERGE_ON_READ recommendation when the last commit touched (nearly) every file group."""
    scattered = (
        copy_on_write
        and stored.file_groups >= MOR_MIN_FILE_GROUPS
        and stored.last_file_groups >= costs.scatter_share * stored.file_groups
    )
    if not scattered:
        return WriteChoice(WriteStrategy.UPSERT, reason)
    advice = (
        f"; the last commit rewrote {stored.last_file_groups} of {stored.file_groups} file groups: "
        "changes scatter over every file group, table_type MERGE_ON_READ would log them instead"
    )
    return WriteChoice(WriteStrategy.UPSERT, reason + advice, recommend_merge_on_read=True)
