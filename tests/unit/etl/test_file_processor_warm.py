"""The warm writer (etl/file_processor/warm.py) over two ticks in the tests' one Spark session: files landing between
ticks are applied once, a commit whose tracker update failed in one tick is reconciled (not applied again) in the
next, and a lease left by a killed run is taken over as a scheduled run takes it over."""

from __future__ import annotations

import json
from dataclasses import replace

import pyarrow as pa
import pytest

from etl.file_processor.processor import JobOutcome
from etl.file_processor.warm import RECENT_TICKS, WarmOutcome, WarmSettingsError, run_warm
from odp.config.items import batch_config_item
from odp.config.models import Cadence
from odp.faults import on_fault
from odp.tracker import JobRunRef, RunStatus, TableRun
from odp.warm import StopReason
from tests.support.lake import CrashAfterCommit, Lake, rows_of, table_config

CDC = pa.schema([("Op", pa.string()), ("SEQ", pa.string()), ("ID", pa.int32()), ("NAME", pa.string())])
KILLED = JobRunRef("odp-test-file-processor", "jr_killed")


def _c(op: str, seq: str, key: int, name: str) -> dict:
    return {"Op": op, "SEQ": seq, "ID": key, "NAME": name}


class EndedRuns:
    """Glue's answer for the killed run: it ended."""

    def ended(self, job_run: JobRunRef) -> str | None:
        return "FAILED" if job_run == KILLED else None


class CrashAfterCommitOf(CrashAfterCommit):
    """Fails one table's run between its Hudi commit and its tracker update, once."""

    def __init__(self, table_id: str) -> None:
        super().__init__()
        self.table_id = table_id

    def __call__(self, *, table_id: str, instant: str) -> None:
        if table_id == self.table_id:
            super().__call__(table_id=table_id, instant=instant)


class RecordingCloudWatch:
    """PutMetricData as CloudWatch receives it: each call's namespace and entries."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[dict]]] = []

    def put_metric_data(self, *, Namespace: str, MetricData: list[dict]) -> None:
        self.calls.append((Namespace, MetricData))

    def values(self, name: str) -> list[tuple[float, list[dict]]]:
        return [(e["Value"], e["Dimensions"]) for _, data in self.calls for e in data if e["MetricName"] == name]


class RecordingEvents:
    """PutEvents as EventBridge receives it: each entry, all accepted."""

    def __init__(self) -> None:
        self.entries: list[dict] = []

    def put_events(self, *, Entries: list[dict]) -> dict:
        self.entries.extend(Entries)
        return {"FailedEntryCount": 0, "Entries": [{"EventId": str(len(self.entries))} for _ in Entries]}


def warm_cadence(lake: Lake, **changes: object) -> None:
    settings = {"schedule": "rate(10 minutes)", "batch_size": 10, "mode": "warm", "job_timeout_minutes": 60}
    lake.tables["batch_config"].put_item(Item=batch_config_item("test", "hourly", Cadence(**{**settings, **changes})))


@pytest.mark.spark
def test_a_warm_run_applies_what_lands_between_ticks_once_and_recovers_what_a_crash_left(spark, lake: Lake) -> None:
    orders = lake.configure(table_config("warm_orders"))
    users = lake.configure(table_config("warm_users"))
    warm_cadence(lake)
    lake.land_parquet(orders, "20260101-000001.parquet", [_c("I", "00001", 1, "ann"), _c("I", "00002", 2, "bob")], CDC)
    lake.land_parquet(users, "20260101-000001.parquet", [_c("I", "00001", 7, "eve")], CDC)
    lake.tables["processing_tracker"].put_item(  # a killed run's lease, hours from expiring
        Item={"table_id": users.table_id, "lease_owner": "killed-run", "lease_expires_at": 4_102_444_800}
        | {"lease_job_name": KILLED.job_name, "lease_job_run_id": KILLED.run_id}
    )

    def land_between_ticks(seconds: float) -> None:
        assert seconds > 0  # the next tick's slot is ahead
        lake.land_parquet(
            orders, "20260101-000002.parquet", [_c("U", "00003", 1, "ann2"), _c("I", "00004", 3, "cy")], CDC
        )
        lake.land_parquet(users, "20260101-000002.parquet", [_c("D", "00002", 7, "eve")], CDC)

    args = replace(lake.args(), mode="warm")
    cloudwatch, events = RecordingCloudWatch(), RecordingEvents()
    with on_fault(CrashAfterCommit.POINT, CrashAfterCommitOf(orders.table_id)):
        outcome = run_warm(
            spark,
            args,
            dynamodb=lake.dynamodb,
            resolve_uri=lake.resolve,
            job_runs=EndedRuns(),
            cloudwatch=cloudwatch,
            events=events,
            sleep=land_between_ticks,
            max_ticks=2,
        )

    assert outcome.end is not None
    assert (outcome.end.ticks, outcome.end.reason) == (2, StopReason.TICKS_DONE)
    first, second = ({t.table_id: t for o in tick for t in o.tables} for tick in outcome.ticks)
    assert first[orders.table_id].status is RunStatus.REFRESH_ERROR  # committed, its tracker update crashed
    assert first[users.table_id].status is RunStatus.COMPLETED  # the killed run's lease taken over
    assert (first[users.table_id].files, first[users.table_id].inserts) == (1, 1)
    assert second[orders.table_id].status is RunStatus.COMPLETED
    assert (second[orders.table_id].files, second[orders.table_id].inserts) == (1, 1)  # the new file only
    assert second[users.table_id].deletes == 1
    assert rows_of(spark, second[orders.table_id].base_path, ["id", "name"]) == [(1, "ann2"), (2, "bob"), (3, "cy")]
    assert rows_of(spark, second[users.table_id].base_path, ["id", "name"]) == []
    assert lake.landed(orders.table_id) == lake.landed(users.table_id) == []
    assert len(lake.processed(orders.table_id)) == len(lake.processed(users.table_id)) == 2
    # Each tick publishes the cadence's metrics a scheduled execution's Batch Manager publishes (the freshness alarm
    # reads OldestPendingFileAgeSeconds): tick 1 found the two first files, tick 2 the crashed table's file (still
    # landed) and the two that landed between the ticks.
    cadence = [{"Name": "cadence", "Value": args.cadence}]
    assert cloudwatch.values("PendingFiles") == [(2.0, cadence), (3.0, cadence)]
    assert cloudwatch.values("TablesWithPendingFiles") == [(2.0, cadence), (2.0, cadence)]
    assert cloudwatch.values("FailedTables") == [(1.0, cadence), (0.0, cadence)]
    assert [value > 0 for value, _ in cloudwatch.values("OldestPendingFileAgeSeconds")] == [True, True]
    assert {namespace for namespace, _ in cloudwatch.calls} == {"ODP"}
    # Each tick names its tables to the datasets state machine, as a scheduled execution's end does.
    details = [json.loads(entry["Detail"]) for entry in events.entries]
    assert [(entry["Source"], entry["DetailType"]) for entry in events.entries] == [
        ("odp.file-processor", "ODP warm tick finished")
    ] * 2
    assert [detail["executionArn"] for detail in details] == ["warm:local:tick-0", "warm:local:tick-1"]
    assert {detail["environment"] for detail in details} == {args.environment}
    tables = [set(json.loads(detail["output"])["summary"]["changed_tables"]) for detail in details]
    assert tables == [{orders.table_id, users.table_id}] * 2


def test_a_warm_run_refuses_a_cadence_that_is_not_warm(lake: Lake) -> None:
    warm_cadence(lake, mode="scheduled")
    with pytest.raises(WarmSettingsError, match="'hourly' is scheduled in batch_config"):
        run_warm(None, replace(lake.args(), mode="warm"), dynamodb=lake.dynamodb)  # type: ignore[arg-type]


def test_a_long_warm_run_keeps_its_recent_ticks_and_every_failure() -> None:
    """A warm run lives for hours: its outcome keeps the last RECENT_TICKS ticks whole, never every tick's tables,
    and every failed table run, which the Glue entry point logs when the run ends."""

    def run(table: str, tick: int, status: RunStatus) -> TableRun:
        return TableRun(table_id=table, run_id=f"tick-{tick}", started_at="2026-11-29T00:00:00Z", status=status)

    outcome = WarmOutcome()
    for tick in range(25):
        failing = run("src.app.bad", tick, RunStatus.REFRESH_ERROR if tick % 5 == 0 else RunStatus.COMPLETED)
        outcome.add([JobOutcome(f"tick-{tick}", [run("src.app.good", tick, RunStatus.COMPLETED), failing])])
    assert RECENT_TICKS == 10
    assert [tick[0].run_id for tick in outcome.ticks] == [f"tick-{n}" for n in range(15, 25)]
    assert len(outcome.tables) == 2 * 10
    assert [table.run_id for table in outcome.failed] == ["tick-0", "tick-5", "tick-10", "tick-15", "tick-20"]
    everything = WarmOutcome(keep_ticks=None)  # a bounded local run (the sandbox's) keeps every tick
    for tick in range(25):
        everything.add([JobOutcome(f"tick-{tick}", [run("src.app.good", tick, RunStatus.COMPLETED)])])
    assert len(everything.ticks) == 25
