"""``python -m sandbox run`` over a fleet of small tables: its time and memory (issue 47: 1,000 small tables complete).

python -m bench.sandbox_fleet [--tables 1000] [--workdir DIR] [--out bench/results/sandbox-fleet-1000.json]

Sets up ``python -m sandbox onboard``'s generated Debezium source of N small tables (one ``include`` entry, each
table one file of a few rows, onboarded by the File Manager from the defaults) without writing any, then runs
``python -m sandbox run --cadence onboarding`` as a child process: the File Manager onboards and registers every
file, the Batch Manager plans the cadence (runs packed by work), the File Processor writes every table through the
state machine on moto. Measured from outside (bench/measure.py: wall, peak RSS and CPU of the process tree); the
run's own report says how many tables it wrote and whether each is ``completed``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

from bench.measure import child_env, run_step
from sandbox.onboarding_demo import ONBOARD_CADENCE, write_source

REPO_ROOT = Path(__file__).resolve().parents[1]


def measure(tables: int, workdir: Path) -> dict[str, object]:
    load_before = list(os.getloadavg())
    _, layout = write_source(workdir, REPO_ROOT / "config", tables=tables, shards=1)
    report_path = workdir / "report.json"
    command = [
        sys.executable,
        "-m",
        "sandbox",
        "run",
        "--config-dir",
        str(workdir / "config"),
        "--staging",
        str(layout.staging),
        "--lake",
        str(layout.lake),
        "--cadence",
        ONBOARD_CADENCE,
        "--report",
        str(report_path),
    ]
    step = run_step(command, log_path=workdir / "run.log", env=child_env(), cwd=REPO_ROOT)
    report = json.loads(report_path.read_text()) if report_path.is_file() else {"tables": []}
    statuses = Counter(row["status"] for row in report["tables"])
    return {
        "kind": "sandbox_fleet",
        "tables": tables,
        "cadence": ONBOARD_CADENCE,
        "returncode": step.returncode,
        "seconds": round(step.seconds, 1),
        "cpu_seconds": round(step.cpu_seconds, 1),
        "peak_rss_mb": round(step.peak_rss_bytes / 2**20),
        "seconds_per_table": round(step.seconds / max(1, statuses.get("completed", 0)), 2),
        "statuses": dict(statuses),
        "glue_runs": sum(execution.get("glue_runs", 0) for execution in report.get("executions", [])),
        "load_average_before": load_before,
        "log": str(workdir / "run.log"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sandbox_fleet", description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--workdir", type=Path, default=REPO_ROOT / ".cache" / "bench" / "sandbox-fleet")
    parser.add_argument("--out", type=Path, help="write the result here as JSON")
    args = parser.parse_args(argv)
    if args.tables < 1:
        print("--tables must be at least 1", file=sys.stderr)
        return 2
    result = measure(args.tables, args.workdir)
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0 if result["returncode"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
