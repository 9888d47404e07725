"""A raw table's write: one run's changes to a raw table's Hudi files (tombstones first, then the table), one commit,
in three stages: prepare (:mod:`etl.raw_table.prepare`: checks, stored reads, plan, schema, strategy; nothing
written), write (the tombstones, the table's commit, the tombstone log folded, the local catalog), result.

:class:`RawTableWriter` is built once per job from its :class:`~etl.raw_table.batch.WriteSettings` (the File
Processor's job scope, the streaming job's target) and writes every table of the job.
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass

from pyspark.sql import SparkSession

from etl.hudi.commit import CommitTag
from etl.hudi.options import hudi_write_options
from etl.hudi.table_version import save_hudi
from etl.hudi.timeline import HudiTableState, cleaning_due, read_table_state
from etl.raw_table.batch import ChangeBatch, WritePhase, WriteResult, WriteSettings
from etl.raw_table.prepare import PreparedWrite, prepare_write
from etl.raw_table.tombstones import clear_tombstones, consolidate_tombstones, write_tombstones
from etl.raw_table.write_strategy import choose_index
from odp.config.models import TableConfig, TableType
from odp.faults import fault_point

logger = logging.getLogger(__name__)
_CATALOG_LOCK = threading.Lock()


class PhaseClock:
    """The seconds of each phase of one write (:class:`~etl.raw_table.batch.WritePhase`), in order: each
    :meth:`lap` ends the phase that began at the previous one (or at the clock's start)."""

    def __init__(self) -> None:
        self.phases: list[tuple[WritePhase, float]] = []
        self._mark = time.monotonic()

    def lap(self, phase: WritePhase) -> None:
        now = time.monotonic()
        self.phases.append((phase, now - self._mark))
        self._mark = now


@dataclass(frozen=True)
class RawTableWriter:
    """Writes the raw tables of one job with its settings; the write :func:`etl.hudi.commit.commit_once` runs for the
    File Processor and the micro-batch."""

    settings: WriteSettings

    def write(
        self,
        spark: SparkSession,
        batch: ChangeBatch,
        config: TableConfig,
        base_path: str,
        tag: CommitTag,
        *,
        state: HudiTableState | None = None,
    ) -> WriteResult:
        """Write one commit (carrying ``tag``) to the table at ``base_path``; returns the operation, the stale changes
        dropped and the upsert-or-rewrite choice.

        Current-mode tables: the stored tombstones filter the batch, then the batch's deletes are added to the
        tombstones (a full load or a new table clears them first), and only then is the table committed (a rerun of
        the same changes writes the same tombstones again); after it, a long tombstone log is folded into one
        folder. Changes that keep a column's stored value get it first (:mod:`etl.raw_table.kept_values`); a
        MERGE_ON_READ table's deletes older than their key's stored row are dropped
        (:mod:`etl.raw_table.late_deletes`). Fault points ``<job>.before_tombstones`` and ``<job>.before_commit``
        (odp.faults) come before each write. Without catalog sync, the table is then registered in the session
        catalog.

        ``state``: the table as the caller read it under the table's lease
        (:func:`etl.hudi.timeline.read_table_state`); None: read here.

        Raises:
            what :func:`etl.raw_table.prepare.prepare_write` refuses, with nothing written.
        """
        clock = PhaseClock()
        state = state if state is not None else read_table_state(spark, base_path)
        # a table left to its size (small_table_rows): its first write chooses the simple or the record index
        config, index_reason = choose_index(config, state.index, batch.rows, exists=state.exists)
        if index_reason is not None:
            logger.info("%s: %s", config.table_id, index_reason)
        with ExitStack() as cached:  # what the reads cached for the write is unpersisted after it
            prepared = prepare_write(spark, batch, config, state, settings=self.settings, cached=cached)
            clock.lap(WritePhase.PREPARE)
            stale_dropped = self._write(spark, prepared, batch, config, tag, state=state, clock=clock)
        return WriteResult(
            prepared.operation,
            stale_dropped,
            prepared.choice,
            prepared.rewrite,
            index_reason,
            phase_seconds=tuple(clock.phases),
        )

    def _write(
        self,
        spark: SparkSession,
        prepared: PreparedWrite,
        batch: ChangeBatch,
        config: TableConfig,
        tag: CommitTag,
        *,
        state: HudiTableState,
        clock: PhaseClock,
    ) -> int:
        """Stage two: the tombstones, the table's commit, the tombstone log folded, the local catalog (each phase
        timed on ``clock``); returns the stale changes dropped (the tombstone write counted them, when there was one:
        :mod:`etl.raw_table.stale_count`)."""
        settings, tombstones, base_path = self.settings, prepared.tombstones_path, state.base_path
        fault_point(f"{settings.job}.before_tombstones", table_id=config.table_id)  # nothing of this batch written yet
        wrote_tombstones = False
        if tombstones is not None:
            if prepared.plan.clear_tombstones:
                clear_tombstones(spark, tombstones)
            if prepared.plan.tombstones is not None and batch.has_deletes:
                write_tombstones(spark, prepared.plan.tombstones, tombstones, run_id=tag.run_id)
                wrote_tombstones = True
        stale_dropped = prepared.stale.dropped(after_tombstone_write=wrote_tombstones)
        clock.lap(WritePhase.TOMBSTONES)
        fault_point(f"{settings.job}.before_commit", table_id=config.table_id)  # tombstones written, no commit yet
        options = hudi_write_options(
            prepared.target,
            operation=prepared.operation,
            profile=settings.profile,
            catalog_sync=settings.catalog_sync,
            input_rows=batch.rows,
            stored_rows=state.rows,  # sizes the record index when this write builds it from the stored files
            metadata=tag.metadata(),
            clean=cleaning_due(state, merge_on_read=prepared.target.table_type is TableType.MERGE_ON_READ),
        )
        save_hudi(prepared.rows, base_path, options)
        clock.lap(WritePhase.HUDI)
        if tombstones is not None and prepared.read_tombstones:
            # after the commit: nothing of this run reads the stored tombstones any more
            consolidate_tombstones(spark, tombstones, config.primary_key, run_id=tag.run_id)
        if not settings.catalog_sync:
            register_in_session_catalog(spark, config, base_path)
        clock.lap(WritePhase.AFTER)
        return stale_dropped


def register_in_session_catalog(spark: SparkSession, config: TableConfig, base_path: str) -> None:
    """Locally (no Glue catalog): make ``SELECT * FROM database.table`` work in this session.

    Serialised: concurrent tables of one database would race on ``CREATE DATABASE`` / ``CREATE TABLE``
    in the embedded metastore (check-then-create is not atomic there).
    """
    register_path_in_session_catalog(spark, config.database, config.target_table, base_path)


def register_path_in_session_catalog(spark: SparkSession, database: str, table: str, base_path: str) -> None:
    """:func:`register_in_session_catalog` of a Hudi table by its catalog name and base path (the canary's dataset)."""
    with _CATALOG_LOCK:
        spark.sql(f"CREATE DATABASE IF NOT EXISTS `{database}`")
        if not spark.catalog.tableExists(f"{database}.{table}"):
            spark.sql(f"CREATE TABLE `{database}`.`{table}` USING hudi LOCATION '{base_path}'")
        else:
            spark.sql(f"REFRESH TABLE `{database}`.`{table}`")
