"""The File Manager on moto with a source's rule: include onboards a 200-table source from one entry, merged
globs route every shard's files to one table, and a file no rule takes is kept unmatched, counted and listed."""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from lambdas.file_manager import handler as file_manager_handler
from lambdas.file_manager.manager import FileManager
from lambdas.runtime import new_metrics
from odp.config import load_config
from odp.config.manager import load_into_dynamodb
from odp.config.store import TableConfigStore
from odp.operations.status import render_unmatched, unmatched_line, unmatched_prefixes
from odp.tracker import FileStatus, FileTracker
from tests.support.aws import CallCounter, Clock
from tests.support.config_files import valid_files, write_config
from tests.support.lambdas import emf_blobs, object_created, sqs_batch

TABLES = 200
BIG = {
    "source": "big",
    "format": "debezium",
    "defaults": {"primary_key": ["id"], "cadence": "fast", "database": "big_raw"},
    "include": ["public.*"],
    "exclude": ["public.scratch_*"],
    "tables": [{"from": "shard_*.orders", "target_table": "orders", "primary_key": ["order_id"]}],
}


@pytest.fixture
def configured(tmp_path: Path, tracker_tables: dict[str, Any]) -> None:
    """The Configuration Manager has loaded a configuration whose source 'big' is one include entry."""
    files = valid_files()
    files["tables/big.yaml"] = copy.deepcopy(BIG)
    config = load_config(write_config(tmp_path, files))
    load_into_dynamodb(config, "test", tracker_tables["table_config"], tracker_tables["batch_config"])


@pytest.fixture
def files(tracker_tables: dict[str, Any], clock: Clock) -> FileTracker:
    return FileTracker(tracker_tables["file_tracker"], tracker_tables["file_tracker_history"], clock=clock)


@pytest.fixture
def manager(tracker_tables: dict[str, Any], files: FileTracker, clock: Clock, configured: None) -> FileManager:
    return FileManager(files, tracker_tables["table_config"], clock=clock, metrics=new_metrics({}))


Send = Callable[[list[str]], dict[str, Any]]


@pytest.fixture
def send(manager: FileManager, s3_event: dict[str, Any], sqs_event: dict[str, Any]) -> Send:
    """One SQS batch of "Object Created" events for these keys (each key its own ETag) to the File Manager."""

    def run(keys: list[str]) -> dict[str, Any]:
        bodies = [object_created(s3_event, key, etag=key, time="2024-05-01T10:00:00Z") for key in keys]
        return file_manager_handler.handle(sqs_batch(sqs_event, bodies), None, manager)

    return run


def test_a_200_table_source_onboards_from_one_entry(
    send: Send, files: FileTracker, tracker_tables: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    names = [f"table_{n:03d}" for n in range(TABLES)]
    for start in range(0, TABLES, 10):  # SQS batches of 10, as the event source mapping delivers them
        assert send([f"big/public/{name}/0001.json" for name in names[start : start + 10]]) == {"batchItemFailures": []}
    store = TableConfigStore(tracker_tables["table_config"])
    onboarded = [t for t in store.scan() if t.source == "big" and t.onboarded]
    assert len(onboarded) == TABLES
    assert store.active_ids("fast")[:2] == ["big.public.table_000", "big.public.table_001"]
    first = store.get("big.public.table_000")
    assert (first.target_table, first.database, first.primary_key, first.columns) == (
        "public_table_000",
        "big_raw",
        ("id",),
        None,
    )
    assert all(files.pending_summary(f"big.public.{name}").files == 1 for name in names)
    blobs = emf_blobs(capsys.readouterr().out)
    assert sum(sum(blob.get("TablesOnboarded", [])) for blob in blobs) == TABLES
    assert sum(sum(blob.get("FilesRegistered", [])) for blob in blobs) == TABLES


def test_a_second_file_of_an_onboarded_table_reads_one_item_and_writes_none(
    send: Send, tracker_tables: dict[str, Any]
) -> None:
    send(["big/public/accounts/1.json"])
    counter = CallCounter(tracker_tables["table_config"].meta.client)
    send(["big/public/accounts/2.json"])
    assert (counter.calls["GetItem"], counter.calls.get("PutItem", 0)) == (1, 0)


def test_every_shard_writes_the_one_merged_table(
    send: Send, files: FileTracker, tracker_tables: dict[str, Any]
) -> None:
    assert send([f"big/shard_00{n}/orders/1.json" for n in range(1, 5)]) == {"batchItemFailures": []}
    landed = files.landed_files("big.shard_*.orders")
    assert [f.key for f in landed] == [f"big/shard_00{n}/orders/1.json" for n in range(1, 5)]
    assert TableConfigStore(tracker_tables["table_config"]).find("big.shard_001.orders") is None  # not onboarded


def test_a_file_no_rule_takes_is_unmatched_counted_and_listed(
    send: Send, files: FileTracker, capsys: pytest.CaptureFixture[str]
) -> None:
    keys = [
        "big/public/scratch_1/a.json",  # excluded
        "big/audit/log/a.json",  # no glob matches
        "big/audit/log/b.json",
        "nobody/x/y/a.json",  # a source without a tables file
    ]
    assert send(keys) == {"batchItemFailures": []}
    [blob] = emf_blobs(capsys.readouterr().out)
    assert blob["FilesUnmatched"] == [1.0, 1.0, 1.0, 1.0]  # one data point per file
    assert "TablesOnboarded" not in blob
    unmatched = files.unmatched_files()
    assert {f.status for f in unmatched} == {FileStatus.UNMATCHED}
    assert all(files.pending_summary(f.table_id).files == 0 for f in unmatched)
    prefixes = unmatched_prefixes(unmatched)
    assert [(p.prefix, p.files) for p in prefixes] == [
        ("big/audit/log/", 2),
        ("big/public/scratch_1/", 1),
        ("nobody/x/y/", 1),
    ]
    assert unmatched_line(prefixes) == (
        "unmatched: 4 file(s) under 3 prefix(es) no entry or rule takes: big/audit/log/, big/public/scratch_1/, "
        "nobody/x/y/ (python -m odp status --unmatched)"
    )
    now = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    assert render_unmatched(prefixes, now).splitlines()[2].split() == ["big/audit/log/", "2", "2048", "2h", "00m"]


def test_an_entry_added_later_takes_its_unmatched_files(send: Send, files: FileTracker) -> None:
    send(["big/audit/log/a.json"])
    assert files.promote_unregistered("big.audit.log", "debezium") == 1
    assert [f.status for f in files.landed_files("big.audit.log")] == [FileStatus.LANDED]


def test_status_says_so_when_nothing_is_unmatched() -> None:
    assert unmatched_prefixes([]) == []
    assert unmatched_line([]) == "unmatched: none (every landed file's table has an entry or a rule)"
