"""FileTracker and ProcessingTracker on moto: conditional registration, moves to history, leases, states."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from odp.tracker import (
    FileKind,
    FileStatus,
    FileTracker,
    JobRunRef,
    LeaseLostError,
    ProcessingTracker,
    RunStatus,
    TableRun,
    TrackedFile,
)
from tests.support.aws import CallCounter, Clock
from tests.support.trackers import tracked

START = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)


@pytest.fixture
def clock() -> Clock:
    return Clock(START)


@pytest.fixture
def files(tracker_tables: dict[str, Any], clock: Clock) -> FileTracker:
    return FileTracker(tracker_tables["file_tracker"], tracker_tables["file_tracker_history"], clock=clock)


@pytest.fixture
def processing(tracker_tables: dict[str, Any], clock: Clock) -> ProcessingTracker:
    return ProcessingTracker(
        tracker_tables["processing_tracker"], tracker_tables["processing_tracker_history"], clock=clock
    )


def stored(table: Any, tracked_file: TrackedFile) -> dict[str, Any] | None:
    return table.get_item(Key={"table_id": tracked_file.table_id, "file_id": tracked_file.file_id}).get("Item")


# --- FileTracker.register -------------------------------------------------------------------------


def test_register_writes_a_landed_item_once(files: FileTracker, tracker_tables: dict[str, Any]) -> None:
    first = tracked("dms/public/trips/20240501/20240501-110000000.parquet")
    assert files.register(first) is True
    item = stored(tracker_tables["file_tracker"], first)
    assert item is not None
    assert item["status"] == "landed"
    assert item["pending_table_id"] == "dms.public.trips"
    assert item["size"] == 100

    again = tracked(
        "dms/public/trips/20240501/20240501-110000000.parquet", size=999, landed_at="2030-01-01T00:00:00.000Z"
    )
    assert files.register(again) is False
    assert stored(tracker_tables["file_tracker"], first) == item  # the first write stands


def test_a_new_etag_of_the_same_key_is_a_new_file(files: FileTracker) -> None:
    key = "dms/public/trips/20240501/20240501-110000000.parquet"
    assert files.register(tracked(key, etag="aaa")) is True
    assert files.register(tracked(key, etag="bbb")) is True
    assert sorted(f.etag for f in files.landed_files("dms.public.trips")) == ["aaa", "bbb"]


def test_a_processed_file_cannot_come_back(files: FileTracker, tracker_tables: dict[str, Any]) -> None:
    landed = tracked("dms/public/trips/a.parquet")
    files.register(landed)
    files.mark_processed([landed], commit_instant="20240501120000000", run_id="run-1")
    assert files.register(landed) is False
    assert stored(tracker_tables["file_tracker"], landed) is None
    history = stored(tracker_tables["file_tracker_history"], landed)
    assert history is not None
    assert history["status"] == "raw_file_processed"
    assert history["commit_instant"] == "20240501120000000"


def test_unregistered_files_are_kept_but_not_pending(files: FileTracker, tracker_tables: dict[str, Any]) -> None:
    orphan = tracked("new/public/thing/a.parquet", status=FileStatus.UNREGISTERED, table_id="new.public.thing")
    assert files.register(orphan) is True
    item = stored(tracker_tables["file_tracker"], orphan)
    assert item is not None
    assert item["status"] == "unregistered"
    assert "pending_table_id" not in item
    assert files.pending_summary("new.public.thing").files == 0
    assert files.landed_files("new.public.thing") == []


def test_promote_unregistered_makes_files_pending_once(files: FileTracker) -> None:
    table_id = "new.public.thing"
    for name in ("LOAD00000001.json", "b.json"):
        files.register(tracked(f"new/public/thing/{name}", status=FileStatus.UNREGISTERED, table_id=table_id))
    files.register(tracked("new/public/thing/c.json", table_id=table_id))  # already landed: untouched
    assert [f.file_name for f in files.unregistered_files(table_id)] == ["LOAD00000001.json", "b.json"]
    assert files.promote_unregistered(table_id, source_format="debezium") == 2
    assert files.promote_unregistered(table_id, source_format="debezium") == 0
    landed = files.landed_files(table_id)
    assert [(f.file_name, f.file_kind) for f in landed] == [
        ("LOAD00000001.json", FileKind.CDC),  # only DMS names full loads LOAD*
        ("b.json", FileKind.CDC),
        ("c.json", FileKind.CDC),
    ]
    assert files.pending_summary(table_id).files == 3
    assert files.unregistered_files(table_id) == []


# --- FileTracker reads ----------------------------------------------------------------------------


def test_pending_summary_counts_files_bytes_and_the_oldest(files: FileTracker) -> None:
    files.register(tracked("dms/public/trips/b.parquet", size=10, landed_at="2024-05-01T10:00:02.000Z"))
    files.register(tracked("dms/public/trips/a.parquet", size=20, landed_at="2024-05-01T10:00:01.500Z"))
    files.register(tracked("dms/public/trips/c.parquet", size=30, landed_at="2024-05-01T10:00:03.000Z"))
    files.register(tracked("dms/public/zones/a.parquet", size=5, table_id="dms.public.zones"))
    summary = files.pending_summary("dms.public.trips")
    assert (summary.files, summary.bytes, summary.oldest_landed_at) == (3, 60, "2024-05-01T10:00:01.500Z")
    empty = files.pending_summary("dms.public.nothing")
    assert (empty.files, empty.bytes, empty.oldest_landed_at) == (0, 0, None)


def test_pending_summary_follows_pages(files: FileTracker, tracker_tables: dict[str, Any]) -> None:
    # moto returns at most 1 MB per query page, like DynamoDB; 2 KB items need several pages.
    padding = "x" * 4000
    with tracker_tables["file_tracker"].batch_writer() as writer:
        for number in range(400):
            item = tracked(f"dms/public/trips/{number:05d}.parquet", size=1).to_item()
            writer.put_item(Item={**item, "padding": padding})
    counter = CallCounter(tracker_tables["file_tracker"].meta.client)
    summary = files.pending_summary("dms.public.trips")
    assert summary.files == 400
    assert summary.bytes == 400
    assert counter.calls["Query"] >= 2
    assert counter.calls["Scan"] == 0


def test_landed_files_are_in_key_order(files: FileTracker) -> None:
    for name in ("c", "a", "b"):
        files.register(tracked(f"dms/public/trips/{name}.parquet"))
    assert [f.file_name for f in files.landed_files("dms.public.trips")] == ["a.parquet", "b.parquet", "c.parquet"]


# --- FileTracker.mark_processed -------------------------------------------------------------------


def test_mark_processed_moves_files_and_is_idempotent(files: FileTracker, tracker_tables: dict[str, Any]) -> None:
    batch = [tracked(f"dms/public/trips/{number:03d}.parquet") for number in range(70)]  # two transactions
    with tracker_tables["file_tracker"].batch_writer() as writer:
        for landed in batch:
            writer.put_item(Item=landed.to_item())
    assert files.pending_summary("dms.public.trips").files == 70
    assert files.mark_processed(batch, commit_instant="c1", run_id="r1", retention=timedelta(days=30)) == 70
    assert files.landed_files("dms.public.trips") == []
    assert files.pending_summary("dms.public.trips").files == 0
    assert files.processed_ids("dms.public.trips", [f.file_id for f in batch] + ["unknown"]) == {
        f.file_id for f in batch
    }
    history = stored(tracker_tables["file_tracker_history"], batch[0])
    assert history["expires_at"] == int((START + timedelta(days=30)).timestamp())

    # A retry after a crash marks the same files again: same result, nothing duplicated or lost.
    assert files.mark_processed(batch, commit_instant="c1", run_id="r1", retention=timedelta(days=30)) == 70
    assert stored(tracker_tables["file_tracker_history"], batch[0]) == history
    assert tracker_tables["file_tracker_history"].scan(Select="COUNT")["Count"] == 70


def test_mark_processed_accepts_a_file_listed_twice(files: FileTracker, tracker_tables: dict[str, Any]) -> None:
    landed = tracked("dms/public/trips/a.parquet")
    files.register(landed)
    assert files.mark_processed([landed, landed], commit_instant="c1", run_id="r1") == 1
    assert stored(tracker_tables["file_tracker_history"], landed)["run_id"] == "r1"


# --- ProcessingTracker leases ----------------------------------------------------------------------


def test_lease_acquire_is_exclusive_until_released(processing: ProcessingTracker) -> None:
    assert processing.acquire("t", "run-a", lease_seconds=60) is True
    assert processing.acquire("t", "run-b", lease_seconds=60) is False
    assert processing.acquire("t", "run-a", lease_seconds=60) is True  # ours already: re-entrant
    state = processing.state("t")
    assert (state.status, state.lease_owner, state.lease_expires_at) == (
        RunStatus.UPDATING,
        "run-a",
        int(START.timestamp()) + 60,
    )
    assert processing.release("t", "run-b") is False
    assert processing.release("t", "run-a") is True
    assert processing.state("t").lease_owner is None
    assert processing.acquire("t", "run-b", lease_seconds=60) is True


def test_an_expired_lease_can_be_taken_over(processing: ProcessingTracker, clock: Clock) -> None:
    processing.acquire("t", "run-a", lease_seconds=60)
    clock.advance(59)
    assert processing.acquire("t", "run-b", lease_seconds=60) is False
    assert processing.leased_tables(["t"]) == {"t"}
    clock.advance(1)  # expiry reached: the lease no longer counts, for the planner and for acquire alike
    assert processing.leased_tables(["t"]) == set()
    assert processing.acquire("t", "run-b", lease_seconds=60) is True
    assert processing.state("t").lease_owner == "run-b"
    with pytest.raises(LeaseLostError):
        processing.renew("t", "run-a", lease_seconds=60)
    assert processing.release("t", "run-a") is False
    assert processing.state("t").lease_owner == "run-b"


def test_renew_extends_the_lease(processing: ProcessingTracker, clock: Clock) -> None:
    processing.acquire("t", "run-a", lease_seconds=60)
    clock.advance(50)
    processing.renew("t", "run-a", lease_seconds=60)
    clock.advance(50)  # past the first expiry, inside the renewed one
    assert processing.acquire("t", "run-b", lease_seconds=60) is False
    assert processing.state("t").lease_expires_at == int(START.timestamp()) + 110


def test_acquire_records_the_batch(processing: ProcessingTracker) -> None:
    processing.acquire("t", "run-a", lease_seconds=60, run_id="run-a", batch_id="exec-1-1")
    state = processing.state("t")
    assert (state.last_run.batch_id, state.last_run.run_id) == ("exec-1-1", "run-a")
    assert state.last_run.status is RunStatus.UPDATING
    assert state.finished_run() is None
    processing.release("t", "run-a")
    processing.acquire("t", "run-b", lease_seconds=60)  # a run that names no batch
    assert processing.state("t").last_run.batch_id is None


# --- ProcessingTracker outcomes --------------------------------------------------------------------


def run(status: RunStatus, **fields: Any) -> TableRun:
    return TableRun(table_id="t", run_id="run-a", started_at="2024-05-01T12:00:00.000Z", status=status, **fields)


def test_finish_completed_records_counts_releases_and_appends_history(processing: ProcessingTracker) -> None:
    processing.acquire("t", "run-a", lease_seconds=60)
    done = run(
        RunStatus.COMPLETED,
        files=3,
        rows=30,
        inserts=10,
        updates=15,
        deletes=5,
        seconds=12.3456,
        commit_instant="20240501120000123",
        batch_id="exec-1-1",
        step_seconds={"plan": 0.0123, "apply": 9.5, "write.hudi": 7.25},
    )
    processing.finish(done, "run-a", history_retention=timedelta(days=7))
    state = processing.state("t")
    assert state.status is RunStatus.COMPLETED
    assert state.lease_owner is None
    last = state.last_run
    assert (last.files, last.rows, last.inserts, last.updates, last.deletes) == (
        3,
        30,
        10,
        15,
        5,
    )
    assert last.seconds == pytest.approx(12.346)
    assert (last.batch_id, last.commit_instant, last.error) == ("exec-1-1", "20240501120000123", None)
    [history] = processing.history("t")
    assert (history.status, history.inserts, history.batch_id) == (RunStatus.COMPLETED, 10, "exec-1-1")
    # where the run's time went: in its history row only, not in the table's last-run summary
    assert history.step_seconds == {"plan": pytest.approx(0.012), "apply": 9.5, "write.hudi": 7.25}
    assert last.step_seconds is None


def test_the_stored_item_keeps_its_flat_last_attributes(processing: ProcessingTracker, tracker_tables: Any) -> None:
    """Items written by earlier releases read back unchanged: TableState embeds the run, the item stays flat."""
    processing.acquire("t", "run-a", lease_seconds=60, batch_id="exec-1-1")
    processing.finish(run(RunStatus.COMPLETED, files=3, seconds=1.5, commit_instant="c1", batch_id="exec-1-1"), "run-a")
    item = tracker_tables["processing_tracker"].get_item(Key={"table_id": "t"})["Item"]
    assert sorted(item) == [
        "last_batch_id",
        "last_commit_instant",
        "last_deletes",
        "last_files",
        "last_finished_at",
        "last_inserts",
        "last_rows",
        "last_run_at",
        "last_run_id",
        "last_seconds",
        "last_updates",
        "status",
        "table_id",
        "updated_at",
    ]
    state = processing.state("t")
    assert state.to_item() == item  # one mapping, both ways
    assert state.finished_run() == state.last_run
    assert (state.last_run.run_id, state.last_run.files, state.last_run.seconds) == ("run-a", 3, 1.5)
    assert state.last_run.started_at == item["last_run_at"]


def test_finish_with_error_keeps_the_last_good_commit(processing: ProcessingTracker) -> None:
    processing.acquire("t", "run-a", lease_seconds=60)
    processing.finish(run(RunStatus.COMPLETED, commit_instant="c-good"), "run-a")
    processing.acquire("t", "run-b", lease_seconds=60)
    failed = TableRun(
        table_id="t",
        run_id="run-b",
        started_at="2024-05-01T12:10:00.000Z",
        status=RunStatus.REFRESH_ERROR,
        files=2,
        error="column fare missing in dms/public/trips/x.parquet",
        error_trace="Traceback ...",
    )
    processing.finish(failed, "run-b")
    state = processing.state("t")
    assert (state.status, state.last_run.commit_instant, state.last_run.error, state.last_run.files) == (
        RunStatus.REFRESH_ERROR,
        "c-good",
        "column fare missing in dms/public/trips/x.parquet",
        2,
    )
    assert [r.run_id for r in processing.history("t")] == ["run-a", "run-b"]


def test_finish_after_a_takeover_raises_and_records_nothing(processing: ProcessingTracker, clock: Clock) -> None:
    processing.acquire("t", "run-a", lease_seconds=60)
    clock.advance(61)
    processing.acquire("t", "run-b", lease_seconds=60)
    with pytest.raises(LeaseLostError):
        processing.finish(run(RunStatus.COMPLETED), "run-a")
    assert processing.state("t").lease_owner == "run-b"
    assert processing.history("t") == []


def test_states_reads_more_than_100_tables_in_batches(
    processing: ProcessingTracker, tracker_tables: dict[str, Any]
) -> None:
    table_ids = [f"dms.public.t{number:03d}" for number in range(250)]
    for table_id in table_ids[:30]:
        processing.acquire(table_id, "run-a", lease_seconds=60)
    counter = CallCounter(tracker_tables["processing_tracker"].meta.client)
    states = processing.states(table_ids + table_ids[:5])  # duplicates asked once
    assert counter.calls == Counter({"BatchGetItem": 3})
    assert len(states) == 250
    assert all(states[t].lease_owner == "run-a" for t in table_ids[:30])
    assert all(states[t].status is None and states[t].lease_owner is None for t in table_ids[30:])
    assert processing.leased_tables(table_ids) == set(table_ids[:30])


class StaticJobRuns:
    """Job runs whose end is known in advance: run id -> reason it ended."""

    def __init__(self, ended: dict[str, str]) -> None:
        self._ended = ended
        self.asked: list[str] = []

    def ended(self, job_run: JobRunRef) -> str | None:
        self.asked.append(job_run.run_id)
        return self._ended.get(job_run.run_id)


def test_a_lease_records_its_job_run_and_one_of_an_ended_job_run_is_not_held(
    tracker_tables: dict[str, Any], clock: Clock
) -> None:
    job_runs = StaticJobRuns({"jr_dead": "job run jr_dead of job ended FAILED"})
    processing = ProcessingTracker(
        tracker_tables["processing_tracker"],
        tracker_tables["processing_tracker_history"],
        clock=clock,
        job_runs=job_runs,
    )
    assert processing.acquire("a.b.dead", "run-dead", lease_seconds=900, job_run=JobRunRef("job", "jr_dead"))
    assert processing.acquire("a.b.live", "run-live", lease_seconds=900, job_run=JobRunRef("job", "jr_live"))
    assert processing.acquire("a.b.old", "run-old", lease_seconds=900)  # no job run recorded: only expiry frees it
    assert processing.state("a.b.dead").lease_job_run == JobRunRef("job", "jr_dead")
    assert processing.leased_tables(["a.b.dead", "a.b.live", "a.b.old"]) == {"a.b.live", "a.b.old"}
    assert sorted(job_runs.asked) == ["jr_dead", "jr_live"]
    # taking over is conditional on the named owner still holding the lease
    assert not processing.acquire("a.b.dead", "run-new", lease_seconds=900, replacing="someone-else")
    assert processing.acquire("a.b.dead", "run-new", lease_seconds=900, replacing="run-dead")
    taken = processing.state("a.b.dead")
    assert (taken.lease_owner, taken.lease_job_run) == ("run-new", None)
    processing.release("a.b.live", "run-live")
    assert processing.state("a.b.live").lease_job_run is None


# --- failed runs of a table: counted in a row, held at max_table_attempts, released by retry -----------


def test_a_tables_failed_runs_in_a_row_hold_it_until_released(processing: ProcessingTracker) -> None:
    def finish(status: RunStatus, failed_runs: int = 0, *, held: bool = False) -> None:
        processing.acquire("t", "run", lease_seconds=60)
        error = "UntracedReadError: t: no file" if status is RunStatus.REFRESH_ERROR else None
        run = TableRun(table_id="t", run_id="run", started_at="x", status=status, error=error, failed_runs=failed_runs)
        processing.finish(run.model_copy(update={"held": held}), "run")

    finish(RunStatus.REFRESH_ERROR, 1)
    assert (processing.state("t").failed_runs, processing.state("t").held_at) == (1, None)
    assert processing.unavailable_tables(["t"]) == (set(), set())
    finish(RunStatus.REFRESH_ERROR, 2, held=True)
    assert (processing.state("t").failed_runs, processing.state("t").held_at) == (2, "2024-05-01T12:00:00.000Z")
    assert processing.unavailable_tables(["t", "u"]) == (set(), {"t"})
    assert processing.release_hold("t") is True
    assert processing.release_hold("t") is False  # conditional: released once
    assert (processing.state("t").failed_runs, processing.state("t").held_at) == (None, None)
    finish(RunStatus.REFRESH_ERROR, 1)
    finish(RunStatus.COMPLETED)  # a completed run starts the count afresh
    assert processing.state("t").failed_runs is None


# --- quarantine: failures counted per file, set aside at the limit, released as landed ---------------
def test_a_file_is_quarantined_at_its_limit_and_released_as_landed(
    files: FileTracker, tracker_tables: dict[str, Any]
) -> None:
    poison = tracked("dms/public/trips/2.csv")
    good = tracked("dms/public/trips/1.csv", etag="etag-good")
    assert files.register(poison)
    assert files.register(good)

    assert files.record_failure(poison, "ChangeFileError: dms/public/trips/2.csv: row 3: bad", max_attempts=2) is False
    (counted,) = [f for f in files.landed_files(poison.table_id) if f.key == poison.key]
    assert (counted.status, counted.attempts) == (FileStatus.LANDED, 1)
    assert counted.last_error == "ChangeFileError: dms/public/trips/2.csv: row 3: bad"

    assert files.record_failure(poison, "ChangeFileError: dms/public/trips/2.csv: row 3: bad", max_attempts=2) is True
    (held,) = files.files(poison.table_id, FileStatus.QUARANTINED)
    assert held.key == poison.key
    assert held.last_error == (
        "failed 2 runs of its table (max_file_attempts 2): ChangeFileError: dms/public/trips/2.csv: row 3: bad"
    )
    assert held.quarantined_at == "2024-05-01T12:00:00.000Z"
    # out of the pending index and of the run's files, kept in file_tracker (never dropped)
    assert files.pending_summary(poison.table_id).files == 1
    assert [f.key for f in files.landed_files(poison.table_id)] == [good.key]
    assert files.record_failure(poison, "again", max_attempts=2) is False  # not landed: not counted
    assert files.quarantine(poison, "twice") is False

    assert files.release(held) is True
    assert files.release(held) is False  # conditional: released once
    (back,) = [f for f in files.landed_files(poison.table_id) if f.key == poison.key]
    assert (back.status, back.attempts, back.quarantined_at) == (FileStatus.LANDED, None, None)
    assert files.pending_summary(poison.table_id).files == 2


def test_an_operator_quarantines_a_landed_file_with_a_reason(files: FileTracker) -> None:
    landed = tracked("dms/public/trips/9.csv")
    files.register(landed)
    assert files.quarantine(landed, "quarantined by an operator: wrong export") is True
    (held,) = files.files(landed.table_id, FileStatus.QUARANTINED)
    assert held.last_error == "quarantined by an operator: wrong export"
    assert held.attempts is None
