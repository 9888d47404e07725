"""Upsert or rewrite: the cheaper write of one run of a current table, chosen from what is already known (pure).

The inputs are the table as its timeline and file listing describe it (:class:`StoredTable`, read by
:func:`etl.raw_table.table_size.stored_table`) and the run's change count; nothing here reads data. The cost model
(:class:`WriteCosts`) is the estimate of docs/decisions/005 on 2 cores: a table run costs a fixed part (the commit, the
metadata table, the timeline: about 4 s) in either plan; an upsert adds about 70 us per change (the record index
lookup, the merge of the touched file groups); a rewrite adds about 21 us per stored row (measured, see
``WriteCosts.seconds_per_stored_row``; first estimated at 7 us from the naive rewrite's 3 to 4 us per row). The
fixed part is the same in both plans, so the choice compares the variable parts, and a rewrite must save at
least ``1 - margin`` of the upsert's variable part and at least ``min_saving_seconds``: a near tie, and every
small table (where either plan is its fixed part), stays an upsert, which writes fewer bytes.
docs/decisions/005 has the measurements and the machines; etl/hudi/README.md ("Upsert or rewrite") the rules.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from etl.hudi.target import RECORD_INDEX, SIMPLE_INDEX
from etl.hudi.timeline import CommitSummary
from odp.config.models import IndexKind, TableConfig, TableMode, TableType
from odp.tracker.statuses import WriteStrategy


@dataclass(frozen=True)
class StoredTable:
    """The table before the run, from its file listing and its latest commit's write statistics.

    ``rows``: estimated (the table's base-file bytes times the rows per byte of the base files the latest commit
    wrote), None when the latest commit wrote no base file.
    """

    rows: int | None
    bytes: int
    file_groups: int
    partitions: int


@dataclass(frozen=True)
class WriteCosts:
    """The cost model of :func:`choose_write` (seconds on 2 cores; docs/decisions/005).

    Calibrated on 2-core machines, Spark 3.5.6 ``local[2]``, a 2 GiB driver, Hudi 1.0.2: ``fixed_seconds`` and
    ``seconds_per_change`` estimated from issue 12's runs on an AMD EPYC (2026-11-23 to 25);
    ``seconds_per_stored_row`` from ``i27-4x200k`` (an Intel Xeon, 2026-11-25) against ``i12-4x200k`` (the AMD EPYC).
    Not measured on Glue.
    """

    fixed_seconds: float = 4.0  # either plan: the commit, the metadata table, the timeline
    seconds_per_change: float = 70e-6  # upsert: index lookup and merge, per change
    # rewrite: read, merge and write again, per stored row. Measured (i27-4x200k, docs/decisions/005): rewriting
    # 4 x 206,000 rows took 83.7 s where upserting 4 x 36,000 changes took 49.0 s (i12-4x200k): a rewritten row costs
    # about 0.3x an upserted change (first estimated at 0.1x, 7 us); with the 0.8 margin a rewrite is chosen from
    # about 60% of the rows changed.
    seconds_per_stored_row: float = 21e-6
    margin: float = 0.8  # a rewrite's variable part must be at most this share of the upsert's
    # and save at least this much: below it the choice is noise against the fixed part, and the upsert writes less
    min_saving_seconds: float = 0.5


DEFAULT_COSTS = WriteCosts()
# MERGE_ON_READ is recommended to a COPY_ON_WRITE table whose last upsert rewrote at least this many rows per update
# or delete in file groups that took no insert: under MERGE_ON_READ those groups log their updates and deletes (only a
# group that takes inserts is rewritten, and only if under 4 MiB). Why 50: a logged change costs about 9 rows' bytes
# (Avro), and compaction rewrites a base file once its logs reach a fifth of it (etl.hudi.options.COMPACTION_LOG_SHARE),
# about 5 x 9 more: about 54 rows' bytes per change in all (docs/decisions/006).
MOR_MIN_ROWS_PER_CHANGE = 50
# ... and only when those rewrites came to at least this many bytes: below it (a table of one small file) the bytes
# saved do not matter beside the commit's fixed cost (docs/decisions/006).
MOR_MIN_BYTES_REWRITTEN = 4 * 1024 * 1024


@dataclass(frozen=True)
class WriteChoice:
    """The plan of a run and its reason in one line (the run's ``write_strategy`` / ``write_reason``)."""

    strategy: WriteStrategy
    reason: str
    recommend_merge_on_read: bool = False


def rewrite_refusal(config: TableConfig, index: str) -> str | None:
    """Pure: why this table is never rewritten (None: it may be). ``index``: ``HudiTarget.index``.

    Only COPY_ON_WRITE current tables with the record level index or the simple index. Hudi 1.0.2 keeps the record
    index right after ``insert_overwrite_table`` by reading the keys of the replaced file groups' **base files** and
    deleting those not written again (``HoodieBackedTableMetadataWriter.getRecordIndexReplacedRecords``); a
    MERGE_ON_READ key that lives only in a log file would keep a stale entry. The simple index keeps nothing: it
    reads the keys of the latest base files, the rewritten ones. The bucket index is left to its upsert (its file
    groups are the buckets). A historical table appends every change.
    """
    if config.mode is not TableMode.CURRENT:
        return "historical table: every change is appended"
    if config.table_type is not TableType.COPY_ON_WRITE:
        return "MERGE_ON_READ: a rewrite would leave log-file keys in the record index (Hudi 1.0.2)"
    if index not in (RECORD_INDEX, SIMPLE_INDEX):
        return f"index {index}: only record-index and simple-index tables are rewritten"
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
    partitions_hit: int | None = None,
    costs: WriteCosts = DEFAULT_COSTS,
) -> WriteChoice:
    """Pure: upsert, rewrite the partitions hit, or rewrite the table, whichever the cost model says is cheaper.

    ``changes``: the run's changes (one per key, deletes included); ``refused``: :func:`rewrite_refusal`'s
    reason; ``partitions_hit``: the partitions the changes touch (None: unknown, then no partition rewrite).
    A partition rewrite is priced as its share of the stored rows (partitions of equal size).
    """
    if not worth_sizing(changes, costs):
        fewest = math.ceil(costs.min_saving_seconds / costs.seconds_per_change)
        return WriteChoice(
            WriteStrategy.UPSERT, f"upsert: {changes} changes, fewer than the {fewest} a rewrite needs to pay off"
        )
    if stored is None or stored.rows is None:
        # a refused table is never sized (etl.raw_table.rewrite.choose_for_run): its refusal is the reason
        why = f"; never rewritten: {refused}" if refused is not None else ", the table's size is unknown"
        return WriteChoice(WriteStrategy.UPSERT, f"upsert: {changes} changes{why}")
    share = changes / stored.rows if stored.rows else 1.0
    scope = (
        f"{changes} changes into about {stored.rows} rows ({share:.1%}, {stored.bytes} bytes, "
        f"{stored.file_groups} file groups, {stored.partitions} partitions)"
    )
    if refused is not None:
        return WriteChoice(WriteStrategy.UPSERT, f"upsert: {scope}; never rewritten: {refused}")
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
    return WriteChoice(WriteStrategy.UPSERT, f"upsert: {scope}: {estimate}")


def merge_on_read_advice(last: CommitSummary | None, *, copy_on_write: bool) -> str | None:
    """Pure: why table_type MERGE_ON_READ would write far less than this COPY_ON_WRITE table's upserts (None: no
    reason), from its last commit's write statistics: an upsert (``commit``) that rewrote at least
    :data:`MOR_MIN_ROWS_PER_CHANGE` stored rows per update or delete, and at least :data:`MOR_MIN_BYTES_REWRITTEN`,
    in file groups that MERGE_ON_READ would have logged instead (:func:`etl.hudi.timeline.rewritten_for_changes`:
    groups that took no insert, and groups too large to take MERGE_ON_READ's inserts). A rewrite (``replacecommit``),
    a first load and an append of inserts only are no evidence."""
    if not copy_on_write or last is None or last.action != "commit" or last.files_rewritten == 0:
        return None
    changes = last.updates + last.deletes
    if changes == 0 or last.rows_rewritten < MOR_MIN_ROWS_PER_CHANGE * changes:
        return None
    if last.bytes_rewritten < MOR_MIN_BYTES_REWRITTEN:
        return None
    return (
        f"the last commit rewrote {last.rows_rewritten} stored rows ({last.bytes_rewritten} bytes) of "
        f"{last.files_rewritten} file groups for {changes} updates and deletes, "
        f"{last.rows_rewritten // changes} rows each: table_type MERGE_ON_READ would log them instead"
    )


# Measured (docs/decisions/004, 2-core Intel Xeon, 2026-11-26; upserts of 0.1% to 1% of a
# table, one table at a time): an unpartitioned table's SIMPLE index joins the keys of the base files its upsert
# rewrites anyway and was as fast or faster than the record index at every size up to 1,000,000 rows, and about
# even at 2,000,000; a partitioned table's GLOBAL_SIMPLE joins the keys of every partition and was even at 50,000
# rows, then 1.3x to 1.54x slower from 200,000 rows. Past these, the run's reason says to load the table again.
SIMPLE_INDEX_MAX_ROWS = 1_000_000
SIMPLE_INDEX_MAX_ROWS_PARTITIONED = 50_000


def simple_index_advice(rows: int, table_bytes: int, *, partitioned: bool) -> str | None:
    """Pure: why a table with the simple index has outgrown it (None: it has not). ``rows`` and ``table_bytes``: its
    latest base files, as :class:`etl.hudi.timeline.HudiTableState` counts them; ``partitioned``: the table has
    partition fields (its index is then GLOBAL_SIMPLE, which joins the keys of every partition)."""
    limit = SIMPLE_INDEX_MAX_ROWS_PARTITIONED if partitioned else SIMPLE_INDEX_MAX_ROWS
    if rows < limit:
        return None
    joined = "an unpartitioned table"
    if partitioned:
        joined = "a partitioned table (each run joins the keys of every partition)"
    return (
        f"the table has grown to {rows} rows, {table_bytes} bytes of base files, past the {limit} rows the simple "
        f"index suits on {joined}: load it again with the record level index (index omitted)"
    )


def choose_index(
    config: TableConfig, stored: str | None, rows: int, *, exists: bool = False
) -> tuple[TableConfig, str | None]:
    """Pure: the table with the index this write uses, and why when this write chose it (None: it did not choose).

    Only a table whose ``index`` was left to its size chooses (``small_table_rows`` > 0: a batch current table without
    ``index`` or ``index_buckets``, :func:`odp.config.patterns.small_table_rows`), and only at its first write
    (``stored`` None): the simple index when the write brings fewer than ``small_table_rows`` rows (a partitioned table:
    at most :data:`SIMPLE_INDEX_MAX_ROWS_PARTITIONED`), else the record level index (docs/decisions/004). A later write
    keeps what the first chose (``stored``: the index of the table's last ODP commit), like any table's index.
    ``rows``: the changes this write brings (a first load's rows). ``exists``: the Hudi table exists; one without an ODP
    commit (``stored`` None) keeps the record index, as :func:`etl.hudi.timeline.stored_index` reads an older commit.
    """
    if config.small_table_rows <= 0 or config.index is not IndexKind.RECORD or config.index_buckets is not None:
        return config, None
    if stored is None and exists:
        return config, None
    if stored is not None:
        kept = IndexKind.SIMPLE if stored == SIMPLE_INDEX else IndexKind.RECORD
        return config.model_copy(update={"index": kept}), None
    limit = config.small_table_rows
    if config.partition_by:
        limit = min(limit, SIMPLE_INDEX_MAX_ROWS_PARTITIONED)
    partitioned = " (partitioned)" if config.partition_by else ""
    if rows < limit:
        reason = f"index simple: the first write brings {rows} rows, under small_table_rows {limit}{partitioned}"
        return config.model_copy(update={"index": IndexKind.SIMPLE}), reason
    reason = f"index record: the first write brings {rows} rows, not under small_table_rows {limit}{partitioned}"
    return config, reason
