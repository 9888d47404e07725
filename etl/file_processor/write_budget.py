"""How many input rows the concurrent tables of one job may write at once.

A table's Hudi write holds memory in proportion to its rows: a first write upserts the record-index entry
of every key into the metadata table. Four first loads of 2,000,000 rows at once ran a 2 GiB JVM out of
heap there; one at a time passed (docs/decisions/014). Tables write concurrently
(etl.file_processor.concurrency), so the job bounds the rows in writes at once: a table reserves its input rows from one
:class:`RowBudget` shared by the job's tables before its write, and waits while they would exceed it. A write
larger than the whole budget runs once nothing else writes. Reservations are granted in arrival order,
so a large write waits for the writes before it and is never overtaken by a stream of small ones.

A table reads and persists its input before it reserves (the count of its rows is the reservation), so the input
of a table waiting for the budget must not hold the heap the budget protects: :func:`input_storage_level`.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from pyspark import StorageLevel

logger = logging.getLogger(__name__)

GIB = 1 << 30
# Rows a write may hold per GiB of the heap that runs the job's tasks. Measured on the benchmark's taxi tables
# (21 columns) in one local 2 GiB JVM: a 2,000,000-row first load alone passed, three at once ran out of heap.
ROWS_PER_HEAP_GIB = 1_000_000
_MEMORY = re.compile(r"^\s*(\d+)\s*([kmgtp]?)b?\s*$", re.IGNORECASE)
_BYTES_PER_UNIT = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}


def memory_bytes(setting: str) -> int:
    """Pure: a Spark memory setting (``spark.executor.memory``) in bytes; a bare number is MiB, as in Spark.

    Raises:
        ValueError: not a Spark memory size.
    """
    match = _MEMORY.match(setting)
    if match is None:
        raise ValueError(f"not a Spark memory size: {setting!r}")
    number, unit = match.groups()
    return int(number) * _BYTES_PER_UNIT[(unit or "m").lower()]


def task_heap_bytes(conf: Mapping[str, str]) -> int:
    """Pure: the heap that runs the job's tasks, from the Spark configuration.

    ``local`` masters run every task in the driver's JVM: ``spark.driver.memory`` (default 1g, Spark's
    default too). A cluster (Glue): ``spark.executor.memory`` (default 1g) times the executors,
    ``spark.executor.instances`` or, with dynamic allocation, ``spark.dynamicAllocation.maxExecutors``
    (1 when neither is set).
    """
    if conf.get("spark.master", "").startswith("local"):
        return memory_bytes(conf.get("spark.driver.memory", "1g"))
    executor = memory_bytes(conf.get("spark.executor.memory", "1g"))
    dynamic = conf.get("spark.dynamicAllocation.enabled", "false").lower() == "true"
    count = conf.get("spark.dynamicAllocation.maxExecutors") if dynamic else None
    count = count or conf.get("spark.executor.instances") or "1"
    return executor * max(1, int(count))


def input_storage_level(one_task: bool) -> StorageLevel:
    """Pure: where a table run keeps its persisted input (``TablePlan.one_task``: at most 32 MiB landed).

    A small input stays in memory (spilled to disk when it does not fit): it is cheap to hold, and most runs are
    small. A larger one goes to the local disk only: it waits there while other tables hold the write budget.
    In memory, the first loads of a 10,000,000-row and a 2,000,000-row table waiting beside a 2,000,000-row bulk
    insert ran a 2 GiB JVM out of heap in the write (``python -m bench fleet``, 2026-11-25): the budget bounded
    the rows being written, not the rows waiting.
    """
    return StorageLevel.MEMORY_AND_DISK_DESER if one_task else StorageLevel.DISK_ONLY


def budget_rows(heap_bytes: int) -> int:
    """Pure: the rows the job's tables may write at once on that heap (at least one row: a write always runs)."""
    return max(1, int(heap_bytes / GIB * ROWS_PER_HEAP_GIB))


class RowBudget:
    """A first-come, first-served weighted semaphore of input rows, shared by the tables of one job."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"a row budget holds at least one row, not {capacity}")
        self.capacity = capacity
        self._in_use = 0
        self._queue: deque[object] = deque()
        self._changed = threading.Condition()

    @contextmanager
    def reserve(self, rows: int, table_id: str) -> Iterator[None]:
        """Hold ``rows`` of the budget (all of it when more) for the block; wait first while they do not fit."""
        weight = max(0, min(rows, self.capacity))
        if rows > self.capacity:
            logger.warning(
                "%s: %d rows to write, more than the job's whole %d-row write budget: it writes alone and may still "
                "run out of memory (a first load puts every key's record-index entry into one metadata-table "
                "commit); larger workers (G.2X) or more of them raise the budget",
                table_id,
                rows,
                self.capacity,
            )
        ticket = object()
        with self._changed:
            self._queue.append(ticket)

            def granted() -> bool:
                return self._queue[0] is ticket and self._in_use + weight <= self.capacity

            if not granted():
                logger.info(
                    "%s: waiting to write %d rows: %d of the job's %d-row write budget in use, %d write(s) queued",
                    table_id,
                    rows,
                    self._in_use,
                    self.capacity,
                    len(self._queue) - 1,
                )
                self._changed.wait_for(granted)
            self._queue.popleft()
            self._in_use += weight
            self._changed.notify_all()  # the next in line may fit beside this one
        try:
            yield
        finally:
            with self._changed:
                self._in_use -= weight
                self._changed.notify_all()


def job_row_budget(conf: Mapping[str, str]) -> RowBudget:
    """The budget of one job run, from its Spark configuration (see :func:`task_heap_bytes`)."""
    budget = RowBudget(budget_rows(task_heap_bytes(conf)))
    logger.info("write budget: %d input rows at once", budget.capacity)
    return budget
