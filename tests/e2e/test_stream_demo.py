"""The streaming demo, small: three tables through the local Kinesis stand-in, every table validated."""

from __future__ import annotations

from pathlib import Path

from odp.tracker import RunStatus
from sandbox.demo_data import DemoGenerator
from sandbox.streaming_demo import render_stream_demo, run_stream_demo, write_demo_config


def test_the_stream_demo_validates_every_table(spark, tmp_path: Path, repo_root: Path) -> None:
    result = run_stream_demo(spark, tmp_path / "stream", repo_root / "config", rounds=3, rows=4)

    assert [c.table_id for c in result.checks] == [
        "demo_dynamodb.app.customers",
        "demo_dynamodb.app.order_events",
        "demo_dynamodb.app.orders",
    ]
    assert all(c.ok for c in result.checks), render_stream_demo(result)
    # Rounds 1 and 2 each hold a late record, a duplicate, an unknown table and a poison line.
    assert (result.bad_records, result.expected_bad_records) == (4, 4)
    assert (result.duplicates, result.expected_duplicates) == (2, 2)
    assert {t.status for o in result.outcomes for t in o.tables} == {RunStatus.COMPLETED}
    assert result.ok


def test_the_batch_demo_leaves_streamed_tables_to_the_stream_demo(tmp_path: Path, repo_root: Path) -> None:
    config = write_demo_config(tmp_path / "config", repo_root / "config")
    streamed = {t.table_id for t in config.tables if t.stream is not None}
    assert streamed == {"demo_dynamodb.app.customers", "demo_dynamodb.app.order_events", "demo_dynamodb.app.orders"}
    generator = DemoGenerator(config, tmp_path / "staging")
    assert set(generator.tables) == {t.table_id for t in config.tables} - streamed
