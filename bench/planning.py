"""Time and memory of the Batch Manager's planning at fleet size (issue 47: planning 20,000 tables stays well inside
the Lambda's 2 minutes and 512 MB).

python -m bench.planning [--tables 20000] [--out bench/results/planning-20000.json]

Runs the Batch Manager's own steps over items shaped as DynamoDB returns them (deserialised, as boto3's resource
layer hands them over): the pending index's items summarised per table (``summarise_pending``), each pending table's
processing_tracker item parsed (``TableState``), the order, the work estimates, ``plan_runs`` and the plan's JSON.
The DynamoDB round trips are counted, not emulated (moto's per-item cost is not DynamoDB's): Scan pages of at most
1 MB of the index's projected items, BatchGetItem calls of 100 keys.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lambdas.batch_manager.planner import make_batches
from odp.cadence_plan import order_tables, table_work
from odp.config.loader import load_config
from odp.planning import plan_runs
from odp.tracker import RunStatus, TableRun, TableState
from odp.tracker.items import PENDING_ATTRIBUTE
from odp.tracker.repository import summarise_pending

REPO_ROOT = Path(__file__).resolve().parents[1]
CADENCE = "every_10_minutes"
SCAN_PAGE_BYTES = 1024 * 1024  # DynamoDB: a Scan page holds at most 1 MB
BATCH_GET_KEYS = 100
LAMBDA_SECONDS, LAMBDA_MEMORY_MB = 120, 512  # infrastructure/ingest/batch_manager.py, lambda_function.py


def pending_items(tables: list[str], rng: random.Random) -> list[dict[str, Any]]:
    """One to three pending files per table, as the index's projection returns them."""
    items = []
    for table_id in tables:
        for file in range(rng.randint(1, 3)):
            items.append(
                {
                    PENDING_ATTRIBUTE: table_id,
                    "size": rng.randint(2_000, 20_000_000),
                    "landed_at": f"2026-11-29T10:{rng.randint(0, 59):02d}:{file:02d}.000Z",
                }
            )
    return items


def state_items(tables: list[str], rng: random.Random) -> list[dict[str, Any]]:
    """Each table's processing_tracker item after a completed run, as the run ledger stores it: 90% of the runs
    took 1 to 5 s, 9% 5 to 60 s, 1% 60 to 600 s (a fleet mostly of small tables)."""
    items = []
    for n, table_id in enumerate(tables):
        run = TableRun(
            table_id=table_id,
            run_id=f"jr_{n}",
            started_at="2026-11-29T09:49:00.000Z",
            status=RunStatus.COMPLETED,
            files=2,
            seconds=round(rng.choices([rng.uniform(1, 5), rng.uniform(5, 60), rng.uniform(60, 600)], [90, 9, 1])[0], 3),
        )
        items.append(TableState(table_id=table_id, status=RunStatus.COMPLETED, last_run=run).to_item())
    return items


def timed(steps: dict[str, float], name: str, call: Callable[[], Any]) -> Any:
    started = time.perf_counter()
    value = call()
    steps[name] = round(time.perf_counter() - started, 3)
    return value


def measure(tables: int, seed: int = 47) -> dict[str, Any]:
    rng = random.Random(seed)  # noqa: S311 - a reproducible model, not a secret
    table_ids = [f"src{n % 50:02d}.schema.table_{n:05d}" for n in range(tables)]
    items, states_raw = pending_items(table_ids, rng), state_items(table_ids, rng)
    targets = load_config(REPO_ROOT / "config").cadences.cadences[CADENCE].plan_targets
    steps: dict[str, float] = {}
    tracemalloc.start()
    summaries = timed(steps, "summarise_pending", lambda: summarise_pending(table_ids, items))
    states = timed(steps, "parse_states", lambda: {i["table_id"]: TableState.from_item(i) for i in states_raw})
    ready = timed(steps, "order_tables", lambda: order_tables(summaries, set()))
    by_table = {summary.table_id: summary for summary in summaries}
    works = timed(steps, "table_work", lambda: table_work([by_table[t] for t in ready], states))
    runs = timed(steps, "plan_runs", lambda: plan_runs(works, targets))
    batches = timed(steps, "make_batches", lambda: make_batches(runs, "exec", "G.1X"))
    plan = timed(steps, "plan_json", lambda: json.dumps([batch.to_payload() for batch in batches]))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    index_bytes = sum(len(json.dumps(item)) for item in items)
    return {
        "kind": "planning",
        "tables": tables,
        "pending_files": len(items),
        "cadence": CADENCE,
        "runs": len(runs),
        "seconds": steps,
        "seconds_total": round(sum(steps.values()), 3),
        "python_peak_mib": round(peak / 2**20, 1),
        "plan_bytes": len(plan),
        "dynamodb_calls": {
            "scan_pages": max(1, math.ceil(index_bytes / SCAN_PAGE_BYTES)),
            "batch_get_item": math.ceil(tables / BATCH_GET_KEYS),
        },
        "lambda_limits": {"seconds": LAMBDA_SECONDS, "memory_mb": LAMBDA_MEMORY_MB},
        "load_average_before": list(os.getloadavg()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.planning", description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=20_000)
    parser.add_argument("--out", type=Path, help="write the result here (bench/results/planning-<tables>.json)")
    args = parser.parse_args(argv)
    if args.tables < 1:
        print("--tables must be at least 1", file=sys.stderr)
        return 2
    result = measure(args.tables)
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
