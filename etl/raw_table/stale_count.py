"""How a run counts the changes its plan drops as stale (``WriteResult.stale_dropped``): upserts not newer than their
key's committed delete, and a MERGE_ON_READ table's deletes older than their key's stored row
(:mod:`etl.raw_table.plan`).

A run that writes tombstones counts them in the tombstone write's own pass: the write reads the marked changes
(``WritePlan.marked``) anyway, and a Spark ``Observation`` on them adds two counts to that pass, read once the write
has returned. No Spark job of its own: 2 to 8% of a warm small table's write (docs/decisions/045). A run that
writes no tombstone (a batch without deletes, whose stored tombstones may still make upserts stale) counts them in one
query of their own, before the table's commit.

An observation's counts reach the driver through Spark's listener bus, after the write. If they have not come within
:data:`OBSERVED_WITHIN_SECONDS` (a listener bus that dropped the event), the same counts are taken by one Spark job
instead: the tombstones written meanwhile change no count (the batch's own deletes are never stale upserts).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from pyspark.sql import Column, Observation
from pyspark.sql import functions as F

from etl.change_frame import DELETE, OP
from etl.raw_table.plan import WritePlan
from etl.raw_table.tombstones import STALE, tombstone_rows

logger = logging.getLogger(__name__)

OBSERVED_WITHIN_SECONDS = 60.0  # from the tombstone write's return; the listener bus takes milliseconds
_UPSERTS, _DELETES = "stale_upserts", "stale_deletes"


def stale_counts() -> list[Column]:
    """The two counts over a marked frame: stale upserts and stale deletes."""
    is_delete = F.col(OP) == F.lit(DELETE)
    return [
        F.count(F.when(F.col(STALE) & ~is_delete, 1)).alias(_UPSERTS),
        F.count(F.when(F.col(STALE) & is_delete, 1)).alias(_DELETES),
    ]


@dataclass(frozen=True)
class StaleCount:
    """The stale changes of one run's plan: ``plan`` is the plan to write (its tombstones observed when
    ``observation`` is set); :meth:`dropped` gives the count, after the tombstone write when observed."""

    plan: WritePlan
    table_id: str
    observation: Observation | None = None

    def dropped(self, *, after_tombstone_write: bool, within_seconds: float = OBSERVED_WITHIN_SECONDS) -> int:
        """The stale changes, each kind logged when any: the observation's counts once the plan's tombstones were
        written (``after_tombstone_write``), else (no observation, no such write, or its counts not in within
        ``within_seconds``) one Spark job's. 0 when the plan drops nothing as stale."""
        marked = self.plan.marked
        if marked is None:
            return 0
        observed = self.observation is not None and after_tombstone_write
        counts = _observed(self.observation, within_seconds) if observed else None
        if counts is None:
            if observed:
                logger.warning("%s: the tombstone write's stale counts did not arrive; counted again", self.table_id)
            row = marked.agg(*stale_counts()).first()
            counts = {_UPSERTS: row[_UPSERTS], _DELETES: row[_DELETES]}
        upserts, deletes = int(counts[_UPSERTS]), int(counts[_DELETES])
        if upserts:
            logger.warning(
                "%s: %d change(s) older than a committed delete of their key dropped", self.table_id, upserts
            )
        if deletes:
            logger.warning("%s: %d delete(s) older than their key's stored row dropped", self.table_id, deletes)
        return upserts + deletes


def count_stale(plan: WritePlan, keys: Sequence[str], table_id: str, *, writes_tombstones: bool) -> StaleCount:
    """How this run counts its stale changes: observed in the tombstone write when the run writes tombstones
    (``writes_tombstones``) and the plan marks stale changes, else by :meth:`StaleCount.dropped`'s own job."""
    if plan.marked is None or not writes_tombstones:
        return StaleCount(plan, table_id)
    observation = Observation()
    observed = plan.marked.observe(observation, *stale_counts())
    # the plan's tombstones (its deletes that are not stale), from the observed frame: every marked row passes the
    # observation once when the tombstone write runs
    tombstones = tombstone_rows(observed.where(~F.col(STALE)), keys)
    return StaleCount(replace(plan, tombstones=tombstones), table_id, observation)


def _observed(observation: Observation, within_seconds: float) -> dict[str, Any] | None:
    """The observation's counts, or None when they have not come within ``within_seconds`` (``Observation.get`` waits
    without a bound, so it waits in a thread of its own)."""
    found: list[dict[str, Any]] = []
    waiter = threading.Thread(target=lambda: found.append(observation.get), name="odp-stale-count", daemon=True)
    waiter.start()
    waiter.join(within_seconds)
    return found[0] if found else None
