"""The tables of a batch run concurrently: each in its own error boundary, pool, lease and history row."""

from __future__ import annotations

import logging
import threading

import boto3
import pyarrow as pa
import pytest

from etl.file_processor.concurrency import POOL_PROPERTY, effective_concurrency, run_tables, scheduler_pool
from etl.file_processor.cost import dpu_seconds_share
from etl.file_processor.write_budget import RowBudget
from etl.jvm import thread_connection
from odp.contracts.metrics import NAMESPACE, TABLE_DPU_SECONDS_METRIC
from odp.faults import on_fault
from odp.tracker import ProcessingTracker, RunStatus, TableRun
from tests.support.lake import Lake, rows_of, small_table_config

SCHEMA = pa.schema([("Op", pa.string()), ("seq", pa.string()), ("id", pa.int32()), ("n", pa.int32())])


class MeetBeforeCommit:
    """Both good tables must reach their commit at the same time: proof that they run concurrently."""

    def __init__(self, spark, parties: int) -> None:
        self.spark = spark  # SparkSession.getActiveSession() is per thread: None in the pool's threads
        self.barrier = threading.Barrier(parties, timeout=240)
        self.seen: dict[str, tuple[str, str | None]] = {}

    def __call__(self, *, table_id: str) -> None:  # at etl.before_commit
        pool = self.spark.sparkContext.getLocalProperty(POOL_PROPERTY)
        self.seen[table_id] = (threading.current_thread().name, pool)
        self.barrier.wait()  # raises BrokenBarrierError (the table fails) if the other table never comes


@pytest.mark.spark
def test_one_of_several_concurrent_tables_fails_and_the_others_commit(
    spark, lake: Lake, caplog: pytest.LogCaptureFixture
) -> None:
    first = lake.configure(small_table_config("first"))
    second = lake.configure(small_table_config("second", partition_by=("n",)))
    broken = lake.configure(small_table_config("broken"))
    lake.land_parquet(first, "20260101-1.parquet", [{"Op": "I", "seq": "1", "id": 1, "n": 10}], SCHEMA)
    rows = [{"Op": "I", "seq": "1", "id": 1, "n": 1}, {"Op": "D", "seq": "2", "id": 2, "n": 2}]
    lake.land_parquet(second, "20260101-1.parquet", rows, SCHEMA)
    # a table-level failure (a bad file alone is quarantined and its table goes on: test_file_processor_quarantine)
    lake.land_text(broken, "20260101-1.csv", "I,1,1,1\n")
    hooks = MeetBeforeCommit(spark, parties=2)

    with caplog.at_level(logging.ERROR, logger="etl.file_processor"), on_fault("etl.before_commit", hooks):
        outcome = lake.run(spark, broken.table_id, first.table_id, second.table_id, table_concurrency=3, job_dpus=10)

    by_id = {result.table_id: result for result in outcome.tables}
    assert [result.table_id for result in outcome.tables] == [broken.table_id, first.table_id, second.table_id]
    assert by_id[first.table_id].status is RunStatus.COMPLETED, by_id[first.table_id].error
    assert by_id[second.table_id].status is RunStatus.COMPLETED, by_id[second.table_id].error
    assert rows_of(spark, by_id[first.table_id].base_path, ["id", "n"]) == [(1, 10)]
    assert rows_of(spark, by_id[second.table_id].base_path, ["id", "n"]) == [(1, 1)]
    assert [r.table_id for r in outcome.failed] == [broken.table_id]
    assert "src.app.broken: CSV files need the table's columns" in by_id[broken.table_id].error
    assert len(lake.landed(broken.table_id)) == 1
    assert lake.landed(first.table_id) == lake.landed(second.table_id) == []
    # each table ran on a thread named after it, in its own FAIR pool
    assert hooks.seen == {
        first.table_id: (first.table_id, scheduler_pool(first.table_id)),
        second.table_id: (second.table_id, scheduler_pool(second.table_id)),
    }
    # the failure's log line names its table (the job's log format prints the thread name)
    failures = [record for record in caplog.records if "failed" in record.getMessage()]
    assert [record.threadName for record in failures] == [broken.table_id]

    # every table run has its own lease released and its own history row, with its cost
    processing = ProcessingTracker(lake.tables["processing_tracker"], lake.tables["processing_tracker_history"])
    history = [TableRun.from_item(item) for item in lake.tables["processing_tracker_history"].scan()["Items"]]
    assert sorted((run.table_id, run.status) for run in history) == sorted(
        [
            (first.table_id, RunStatus.COMPLETED),
            (second.table_id, RunStatus.COMPLETED),
            (broken.table_id, RunStatus.REFRESH_ERROR),
        ]
    )
    for run in history:
        assert processing.state(run.table_id).lease_owner is None
        assert run.seconds > 0
        # three tables at once on a 10-DPU job: each holds a third of it while it runs
        # (seconds are stored to the millisecond, the share is computed from the unrounded time)
        assert run.dpu_seconds == pytest.approx(dpu_seconds_share(run.seconds, job_dpus=10, concurrency=3), abs=0.01)
        assert run.dpu_seconds == pytest.approx(run.seconds * 10 / 3, abs=0.01)
        assert by_id[run.table_id].dpu_seconds == run.dpu_seconds
    metrics = boto3.client("cloudwatch").list_metrics(Namespace=NAMESPACE)["Metrics"]
    # one statistic set per cadence (per table only with the cadence's table_metrics: tests/unit/etl/test_cost.py)
    costed = [m["Dimensions"] for m in metrics if m["MetricName"] == TABLE_DPU_SECONDS_METRIC]
    assert costed == [[{"Name": "cadence", "Value": "hourly"}]]


class WritesAtOnce:
    """Counts the tables inside their write at once. Each waits at its commit for another table to come
    in (up to ``linger`` seconds), so two tables whose writes may overlap are seen overlapping."""

    def __init__(self, linger: float) -> None:
        self.linger = linger
        self.changed = threading.Condition()
        self.inside = 0
        self.peak = 0

    def __call__(self, *, table_id: str) -> None:  # at etl.before_commit
        with self.changed:
            self.inside += 1
            self.peak = max(self.peak, self.inside)
            self.changed.notify_all()
            self.changed.wait_for(lambda: self.inside > 1, timeout=self.linger)
            self.inside -= 1


@pytest.mark.spark
def test_concurrent_tables_write_one_at_a_time_when_their_rows_exceed_the_write_budget(spark, lake: Lake) -> None:
    configs = [lake.configure(small_table_config(name)) for name in ("warm", "left", "right")]
    for number, config in enumerate(configs):
        rows = [{"Op": "I", "seq": "1", "id": number, "n": 1}, {"Op": "I", "seq": "1", "id": 10 + number, "n": 2}]
        lake.land_parquet(config, "20260101-1.parquet", rows, SCHEMA)
    hooks = WritesAtOnce(linger=3.0)

    # two rows per table, three rows of budget: left and right each wait for the other's write to end
    with on_fault("etl.before_commit", hooks):
        outcome = lake.run(spark, *(c.table_id for c in configs), table_concurrency=3, row_budget=RowBudget(3))

    assert [(r.table_id, r.status) for r in outcome.tables] == [(c.table_id, RunStatus.COMPLETED) for c in configs]
    assert hooks.peak == 1
    for number, result in enumerate(outcome.tables):
        assert rows_of(spark, result.base_path, ["id", "n"]) == [(number, 1), (10 + number, 2)]


def test_run_tables_bounds_the_threads_and_keeps_the_order(spark) -> None:
    lock = threading.Lock()
    running, peak = 0, 0

    events: list[tuple[str, str]] = []

    def run_table(table_id: str) -> str:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
            events.append(("start", table_id))
        threading.Event().wait(0.05)
        with lock:
            running -= 1
            events.append(("end", table_id))
        return f"{table_id}@{threading.current_thread().name}"

    ids = [f"t{index}" for index in range(7)]
    assert run_tables(spark, ids, run_table, concurrency=3) == [f"{t}@{t}" for t in ids]
    assert 1 < peak <= 3
    assert events[:2] == [("start", "t0"), ("end", "t0")]  # the first table ran alone (it warms the JVM up)
    assert effective_concurrency(4, 2) == 2
    assert effective_concurrency(0, 5) == 1
    assert run_tables(spark, [], run_table, concurrency=3) == []
    assert threading.current_thread().name == "MainThread"


def _without_delay(spark) -> bool:
    """Whether the JVM's side of this thread's gateway connection has Nagle's algorithm off (etl.jvm)."""
    return bool(thread_connection(spark).getSocket().getTcpNoDelay())


def test_the_session_and_every_table_thread_talk_to_the_jvm_without_nagles_delay(spark) -> None:
    """An answer of more than 8 KB (a wide frame's schema, a commit's metadata) otherwise waits about 40 ms for a
    delayed acknowledgement (docs/decisions/047). Also after a streaming query or a listener replaced the gateway's
    callback client, as the rest of the suite may have done before this test (and does here)."""
    server = spark.sparkContext._gateway.java_gateway_server
    callbacks = server.getCallbackClient()
    server.resetCallbackClient(callbacks.getAddress(), callbacks.getPort())  # as PySpark does for a stream's callbacks
    assert server.getCallbackClient().getPerThreadConnection() is None  # the copy knows no connection
    assert _without_delay(spark)  # the session's thread (etl.jvm.ready_gateway)
    assert run_tables(spark, ["a", "b", "c"], lambda _: _without_delay(spark), concurrency=3) == [True, True, True]
    # a thread of its own keeps Py4J's default: the delay is what the table threads are spared
    plain: list[bool] = []
    thread = threading.Thread(target=lambda: plain.append(_without_delay(spark)))
    thread.start()
    thread.join()
    assert plain == [False]
