"""The write plan of one run, pure: which rows a run writes to a raw table and with which Hudi operation, per mode
and full load, with the tombstones it records and the changes it drops as stale."""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from etl.change_frame import for_current_table, for_historical_table, latest_per_key, surviving_rows
from etl.hudi.options import WriteOperation
from etl.raw_table.late_deletes import mark_late_deletes
from etl.raw_table.tombstones import STALE, mark_stale, tombstone_rows
from odp.config.models import TableConfig, TableMode


@dataclass(frozen=True)
class WritePlan:
    """What a run writes and how: the rows in table shape and the Hudi operation.

    Current-mode tables also carry their delete tombstones: the batch's deletes to record
    (``tombstones``), the latest change per key marked ``_odp_stale`` when the run drops some as stale (``marked``:
    upserts not newer than a committed delete, and in a MERGE_ON_READ table deletes older than their key's stored
    row; ``rows`` and ``tombstones`` are then its changes that are not stale), and whether the stored tombstones are
    cleared first (``clear_tombstones``: a full load, a new table).
    """

    rows: DataFrame
    operation: WriteOperation
    tombstones: DataFrame | None = None
    marked: DataFrame | None = None
    clear_tombstones: bool = False

    @property
    def stale(self) -> DataFrame | None:
        """The changes the run drops as stale (None: it drops none, nothing was marked)."""
        return None if self.marked is None else self.marked.where(F.col(STALE)).drop(STALE)


def plan_write(
    changes: DataFrame,
    config: TableConfig,
    *,
    has_full_load: bool,
    exists: bool,
    tombstones: DataFrame | None = None,
    stored_order: DataFrame | None = None,
) -> WritePlan:
    """Pure: the rows and operation of one run.

    current: last change per key; deletes travel as ``_hoodie_is_deleted`` in the same upsert. An
    insert / update not newer than its key's stored tombstone (``tombstones``: a delete already
    committed) is dropped, so a late change never resurrects a deleted row. A delete older than its key's
    stored row (``stored_order``: the stored ``_odp_seq`` of the keys the batch deletes, read for a MERGE_ON_READ
    table, :mod:`etl.raw_table.late_deletes`) is dropped too, and records no tombstone. A first full load is a
    bulk_insert; a full load of an existing table replaces its contents (insert_overwrite_table) with
    what survives of the batch. A full load, or the first write of a new table, ignores and clears the
    stored tombstones (the batch's own deletes become the new ones).
    historical: every change, upserted by (key, ``_odp_seq``) so a retried change is not doubled;
    a first full load is a bulk_insert.
    """
    if config.mode is TableMode.HISTORICAL:
        first_load = has_full_load and not exists
        operation = WriteOperation.BULK_INSERT if first_load else WriteOperation.UPSERT
        return WritePlan(for_historical_table(changes), operation)
    keys = tuple(config.primary_key)
    latest = changes.transform(latest_per_key(keys))
    deletes = tombstone_rows(latest, keys)
    if has_full_load:
        rows = for_current_table(surviving_rows(latest))
        operation = WriteOperation.INSERT_OVERWRITE_TABLE if exists else WriteOperation.BULK_INSERT
        return WritePlan(rows, operation, tombstones=deletes, clear_tombstones=True)
    if not exists:
        # A new (or recreated) table starts without tombstones: any left from an earlier table go.
        return WritePlan(for_current_table(latest), WriteOperation.UPSERT, tombstones=deletes, clear_tombstones=True)
    if tombstones is None and stored_order is None:
        return WritePlan(for_current_table(latest), WriteOperation.UPSERT, tombstones=deletes)
    flagged = latest if tombstones is None else mark_stale(latest, tombstones, keys)
    if stored_order is not None:
        flagged = mark_late_deletes(flagged, stored_order, keys)
        deletes = tombstone_rows(flagged.where(~F.col(STALE)), keys)  # a delete that lost is no tombstone
    kept = flagged.where(~F.col(STALE)).drop(STALE)
    return WritePlan(for_current_table(kept), WriteOperation.UPSERT, tombstones=deletes, marked=flagged)
