"""Exactly once across a crash between a table's Hudi commit and the stream's checkpoint.

The job runs as a real child process and is killed with SIGKILL right after one table's commit in the
second micro-batch; the restarted job (the same local stream, in this process on the test session's Spark: it reads
the checkpoint and the tables from the folders, as a new process would) replays that batch, skips the tables that
already hold it (their commit metadata carries the batch tag) and commits the rest. Nothing is lost, nothing is
doubled.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from etl.hudi.timeline import completed_commits
from etl.streaming.batch import StreamTarget
from etl.streaming.local import run_local_stream
from odp.tracker import RunStatus
from sandbox.validation import read_table
from tests.support.paths import REPO_ROOT
from tests.support.stream_records import StreamFolder, change
from tests.support.streams import CUSTOMERS, EVENTS, ORDERS

CHILD = "tests.unit.etl.streaming.crash_child"


def start_child(job: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", CHILD, str(job), *extra],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


@pytest.mark.slow
def test_a_batch_replayed_after_a_crash_between_commit_and_checkpoint_is_applied_once(
    spark, target: StreamTarget, folder: StreamFolder, tmp_path: Path
) -> None:
    folder.write_documents(
        [
            change("INSERT", "customers", {"id": "c1", "name": "Ann"}, ms=1),
            change("INSERT", "orders", {"id": "o1", "amount": 10, "status": "new"}, ms=2),
            change("INSERT", "order_events", {"id": "e1", "kind": "created"}, ms=3),
        ]
    )
    folder.write_documents(
        [
            change("MODIFY", "customers", {"id": "c1", "name": "Ann Lee"}, ms=10),
            change("INSERT", "orders", {"id": "o2", "amount": 20, "status": "new"}, ms=11),
            change("REMOVE", "orders", {"id": "o1", "amount": 10, "status": "new"}, ms=12),
            change("MODIFY", "order_events", {"id": "e1", "kind": "paid"}, ms=13),
        ]
    )
    marker = tmp_path / "committed-orders"
    job = tmp_path / "job.json"
    job.write_text(
        json.dumps(
            {
                "stream": target.stream,
                "tables": [table.model_dump(mode="json") for table in target.tables],
                "raw_root": target.raw_root,
                "error_root": target.error_root,
                "source": str(folder.root),
                "checkpoint": str(tmp_path / "checkpoint"),
                "marker": str(marker),
                "outcomes": str(tmp_path / "outcomes.json"),
            }
        )
    )

    crashing = start_child(job, "--pause-after", ORDERS.table_id, "2")  # orders' commit of the second batch
    deadline = time.monotonic() + 600
    while not marker.exists():
        assert crashing.poll() is None, crashing.stderr.read().decode()[-3000:]
        assert time.monotonic() < deadline, "the job never reached the second commit of orders"
        time.sleep(1)
    crashing.send_signal(signal.SIGKILL)
    assert crashing.wait(timeout=60) == -signal.SIGKILL
    assert not (tmp_path / "outcomes.json").exists()

    replay = run_local_stream(spark, str(folder.root), str(tmp_path / "checkpoint"), target)
    assert len(replay) == 1  # only the second batch: the first one was checkpointed before the crash
    assert replay[0].batch_tag.endswith(":1")
    assert {t.table_id: t.status for t in replay[0].tables} == {
        CUSTOMERS.table_id: RunStatus.REPLAYED,
        ORDERS.table_id: RunStatus.REPLAYED,
        EVENTS.table_id: RunStatus.COMPLETED,
    }
    for config in (CUSTOMERS, ORDERS, EVENTS):
        tags = [c.run_id for c in completed_commits(spark, target.base_path(config)) if c.run_id]
        assert len(tags) == len(set(tags)) == 2, f"{config.table_id}: {tags}"
    assert [r["name"] for r in read_table(spark, target.base_path(CUSTOMERS), CUSTOMERS)] == ["Ann Lee"]
    assert sorted(r["id"] for r in read_table(spark, target.base_path(ORDERS), ORDERS)) == ["o2"]
    assert sorted(r["kind"] for r in read_table(spark, target.base_path(EVENTS), EVENTS)) == ["created", "paid"]
