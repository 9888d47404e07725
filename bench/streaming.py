"""Streaming micro-batch timing: ``python -m bench.streaming [--changes 1000] [--batches 3]``.

Writes the streaming demo's three tables (COW current, MOR current, historical) through the local
stand-in for Kinesis: one warm-up micro-batch, then ``--batches`` measured ones of about ``--changes``
DynamoDB changes each across the three tables (inserts, updates, REMOVEs). Reports each batch's commit
time (``BatchOutcome.seconds``: routing, parsing, the Hudi commits of every table) and validates the
tables against the source model. Results: ``bench/results/streaming-<date>.json``. Not run by tests
(it is a measurement: run it on an idle machine).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 20.0  # issue 14: a 1,000-change micro-batch across 3 tables commits in under 20 s after warm-up


def rows_per_table(changes: int, tables: int = 3) -> int:
    """Inserts per table so that a batch holds about ``changes`` changes (inserts + half as many updates + a REMOVE)."""
    return max(1, round((changes / tables - 1) / 1.5))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.streaming", description=__doc__)
    parser.add_argument("--changes", type=int, default=1000, help="changes per micro-batch (default 1000)")
    parser.add_argument("--batches", type=int, default=3, help="measured micro-batches after the warm-up")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "bench" / "results")
    args = parser.parse_args(argv)

    from etl.spark_session import local_spark_session
    from sandbox.streaming_demo import run_stream_demo

    workdir = Path(tempfile.mkdtemp(prefix="odp-stream-bench-"))
    spark = local_spark_session("odp-stream-bench", warehouse_dir=str(workdir / "warehouse"))
    spark.sparkContext.setLogLevel("ERROR")
    result = run_stream_demo(
        spark, workdir / "run", REPO_ROOT / "config", rounds=args.batches + 1, rows=rows_per_table(args.changes)
    )
    measured = result.outcomes[1:]
    seconds = [round(o.seconds, 2) for o in measured]
    summary = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "changes_per_batch": [o.records for o in result.outcomes],
        "warm_up_seconds": round(result.outcomes[0].seconds, 2),
        "batch_seconds": seconds,
        "median_seconds": statistics.median(seconds) if seconds else None,
        "target_seconds": TARGET_SECONDS,
        "tables_valid": result.ok,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"streaming-{datetime.now(UTC).date().isoformat()}.json"
    path.write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    print(f"written: {path}")
    return 0 if result.ok and all(s < TARGET_SECONDS for s in seconds) else 1


if __name__ == "__main__":
    sys.exit(main())
