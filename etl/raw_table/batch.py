"""What a raw table's write takes and gives: one run's changes (:class:`ChangeBatch`), the job's write settings
(:class:`WriteSettings`, the same for every table of a job) and what the write did (:class:`WriteResult`)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from pyspark.sql import DataFrame

from etl.hudi.options import WriteOperation, WriteProfile
from etl.raw_table.rewrite import RewriteCounts
from etl.raw_table.write_strategy import WriteChoice
from odp.config.models import TableConfig, TableMode
from odp.naming import tombstone_path


@dataclass(frozen=True)
class WriteSettings:
    """The job-level settings of a job's table writes: the write profile, catalog sync, the raw root (tombstones
    beside each table) and the job's fault point area (``etl``: the File Processor, ``streaming``: a micro-batch).
    """

    profile: WriteProfile
    catalog_sync: bool
    raw_root: str
    job: str = "etl"

    def tombstones_of(self, config: TableConfig) -> str | None:
        """Where a current-mode table's tombstones live (None for a historical table: it keeps every delete)."""
        if config.mode is not TableMode.CURRENT:
            return None
        return tombstone_path(self.raw_root, config.database, config.target_table)


@dataclass(frozen=True)
class ChangeBatch:
    """One run's changes of a table (the canonical change frame) and what is known of them before the write:
    ``rows`` (the change count: sizes the local profile's shuffles), whether a full load is among them, and
    whether any change is a delete (none: no tombstone write, so a run without deletes makes one commit), and the
    columns some change leaves as stored (a partial update: filled before the write)."""

    changes: DataFrame
    rows: int
    has_full_load: bool = False
    has_deletes: bool = True
    kept_columns: tuple[str, ...] = ()  # columns some change keeps stored (etl.raw_table.kept_values); none: no fill
    one_task: bool = False  # the changes are one Spark partition (TablePlan.one_task): a small tombstone log too


class WritePhase(StrEnum):
    """The phases of a raw table's write, each timed (:attr:`WriteResult.phase_seconds`)."""

    PREPARE = "prepare"  # the stored tombstones and rows read, the plan, upsert or rewrite
    TOMBSTONES = "tombstones"  # the stored tombstones cleared, the batch's written, the stale changes counted
    HUDI = "hudi"  # Hudi's commit of the table
    AFTER = "after"  # the tombstone log folded, the session catalog


@dataclass(frozen=True)
class WriteResult:
    operation: WriteOperation
    # incoming upserts not newer than their key's committed delete, and deletes older than their key's stored row
    stale_dropped: int = 0
    choice: WriteChoice | None = None  # upsert or rewrite, and why (etl.raw_table.write_strategy); None: not chosen
    counts: RewriteCounts | None = None  # a rewrite: what it applied (Hudi counts its every row as an insert)
    index_reason: str | None = None  # the first write of a table left to its size: which index and why
    phase_seconds: tuple[tuple[WritePhase, float], ...] = ()  # seconds of each phase, in order
