"""The job's write budget: the input rows its concurrent tables may write at once."""

from __future__ import annotations

import threading
import time

import pytest
from pyspark import StorageLevel

from etl.file_processor.table_plan import ONE_TASK_BYTES, TablePlan
from etl.file_processor.write_budget import (
    GIB,
    RowBudget,
    budget_rows,
    input_storage_level,
    job_row_budget,
    memory_bytes,
    task_heap_bytes,
)
from tests.support.trackers import tracked


def test_memory_settings_read_as_spark_reads_them() -> None:
    assert memory_bytes("2g") == 2 * GIB
    assert memory_bytes("2G") == 2 * GIB
    assert memory_bytes("10gb") == 10 * GIB
    assert memory_bytes("512m") == 512 << 20
    assert memory_bytes("4096") == 4 * GIB  # a bare number is MiB for spark.*.memory
    assert memory_bytes("1t") == 1024 * GIB
    assert memory_bytes("2048k") == 2 << 20
    with pytest.raises(ValueError, match="not a Spark memory size: '2 gigs'"):
        memory_bytes("2 gigs")


def test_the_heap_is_the_drivers_locally_and_the_executors_on_a_cluster() -> None:
    assert task_heap_bytes({"spark.master": "local[2]", "spark.driver.memory": "2g"}) == 2 * GIB
    assert task_heap_bytes({"spark.master": "local[*]"}) == GIB  # Spark's default driver memory
    # Glue G.1X, 10 workers: 9 executors of 10 GiB, by dynamic allocation or fixed
    glue = {"spark.master": "jes", "spark.executor.memory": "10g", "spark.dynamicAllocation.enabled": "true"}
    assert task_heap_bytes({**glue, "spark.dynamicAllocation.maxExecutors": "9"}) == 90 * GIB
    fixed = {"spark.master": "yarn", "spark.executor.memory": "10g", "spark.executor.instances": "9"}
    assert task_heap_bytes(fixed) == 90 * GIB
    assert task_heap_bytes({"spark.master": "yarn"}) == GIB


def test_the_budget_follows_the_heap() -> None:
    # one million rows per GiB: the benchmark's 2,000,000-row first load alone fits a 2 GiB JVM, three do not
    assert budget_rows(2 * GIB) == 2_000_000
    assert budget_rows(0) == 1
    assert job_row_budget({"spark.master": "local[2]", "spark.driver.memory": "2g"}).capacity == 2_000_000
    with pytest.raises(ValueError, match="at least one row"):
        RowBudget(0)


class Writes:
    """Records which writes overlapped: each holds its reservation until released by the test."""

    def __init__(self, budget: RowBudget) -> None:
        self.budget = budget
        self.lock = threading.Lock()
        self.inside: set[str] = set()
        self.overlaps: set[frozenset[str]] = set()
        self.order: list[str] = []
        self.release: dict[str, threading.Event] = {}

    def start(self, name: str, rows: int) -> threading.Thread:
        self.release[name] = threading.Event()

        def write() -> None:
            with self.budget.reserve(rows, name):
                with self.lock:
                    self.order.append(name)
                    self.overlaps.update(frozenset({name, other}) for other in self.inside)
                    self.inside.add(name)
                self.release[name].wait(10)
                with self.lock:
                    self.inside.discard(name)

        thread = threading.Thread(target=write, name=name)
        thread.start()
        return thread

    def wait_inside(self, *names: str) -> None:
        deadline = time.monotonic() + 10
        while not set(names) <= self.inside:
            assert time.monotonic() < deadline, f"{names} never started writing; inside: {self.inside}"
            time.sleep(0.01)


def test_writes_that_fit_run_together_and_one_that_does_not_waits() -> None:
    writes = Writes(RowBudget(100))
    threads = [writes.start("a", 40), writes.start("b", 60)]
    writes.wait_inside("a", "b")
    threads.append(writes.start("c", 1))  # does not fit beside a and b: waits
    time.sleep(0.2)
    assert writes.inside == {"a", "b"}
    writes.release["a"].set()
    writes.wait_inside("c")  # fits once a is done
    for event in writes.release.values():
        event.set()
    for thread in threads:
        thread.join(10)
    assert writes.overlaps == {frozenset("ab"), frozenset("bc")}


def test_a_write_larger_than_the_budget_runs_alone_and_is_not_overtaken() -> None:
    writes = Writes(RowBudget(100))
    threads = [writes.start("small", 10)]
    writes.wait_inside("small")
    threads.append(writes.start("huge", 5_000))  # takes the whole budget: waits for small to end
    time.sleep(0.1)
    threads.append(writes.start("later", 10))  # would fit now, but huge came first
    time.sleep(0.2)
    assert writes.inside == {"small"}
    writes.release["small"].set()
    writes.wait_inside("huge")
    time.sleep(0.2)
    assert writes.inside == {"huge"}
    writes.release["huge"].set()
    writes.wait_inside("later")
    writes.release["later"].set()
    for thread in threads:
        thread.join(10)
    assert writes.order == ["small", "huge", "later"]
    assert writes.overlaps == set()


def test_a_failed_write_gives_its_rows_back() -> None:
    budget = RowBudget(10)
    with pytest.raises(RuntimeError, match="write failed"), budget.reserve(10, "t"):
        raise RuntimeError("write failed")
    done = threading.Event()

    def write() -> None:
        with budget.reserve(10, "u"):
            done.set()

    thread = threading.Thread(target=write)
    thread.start()
    assert done.wait(5), "the failed write's rows were never given back"
    thread.join(5)


def test_an_input_waiting_for_the_budget_holds_no_heap_unless_it_is_small() -> None:
    def plan(*sizes: int) -> TablePlan:
        files = tuple(tracked(f"t/{n}.parquet", size=size) for n, size in enumerate(sizes))
        return TablePlan(reconcile=(), apply=files, duplicates=())

    small, large = plan(ONE_TASK_BYTES // 2, ONE_TASK_BYTES // 2), plan(ONE_TASK_BYTES // 2, ONE_TASK_BYTES // 2 + 1)
    assert input_storage_level(small.one_task) == StorageLevel.MEMORY_AND_DISK_DESER
    level = input_storage_level(large.one_task)
    assert level == StorageLevel.DISK_ONLY
    assert not level.useMemory
    assert not level.useOffHeap


def test_a_write_larger_than_the_whole_budget_is_named_in_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    budget = RowBudget(100)
    with caplog.at_level("WARNING", logger="etl.file_processor.write_budget"), budget.reserve(100, "src.app.fits"):
        pass
    assert caplog.records == []
    with caplog.at_level("WARNING", logger="etl.file_processor.write_budget"), budget.reserve(101, "src.app.huge"):
        pass
    (record,) = caplog.records
    assert record.getMessage().startswith(
        "src.app.huge: 101 rows to write, more than the job's whole 100-row write budget: it writes alone"
    )
