"""``python -m bench run [--small] [--tables T --rows R --waves W] [--skew recent] [--table-concurrency N]``.

Prints the comparison, writes ``<results-dir>/<date>.json`` and ``<date>.png``. A ``--small`` run
writes its results under the work folder (never into bench/results) unless ``--results-dir`` says.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from datetime import UTC, datetime
from pathlib import Path

from bench.report import markdown, text_table, write_chart, write_json
from bench.runner import CONTENDERS, run_benchmark
from bench.workload import SKEWS, UNIFORM, WorkloadSpec
from odp.contracts.file_processor import DEFAULT_TABLE_CONCURRENCY

RESULTS = Path(__file__).resolve().parent / "results"
DEFAULT_WORK = Path(__file__).resolve().parents[1] / ".cache" / "bench"
SMALL = {"tables": 2, "rows": 1_000, "waves": 1}


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m bench", description="ODP benchmarks")
    commands = top.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="File Processor vs HoodieStreamer vs a naive rewrite")
    run.add_argument("--small", action="store_true", help="a smoke run: 2 tables x 1,000 rows, 1 wave")
    run.add_argument("--tables", type=int, help="tables (default 18)")
    run.add_argument("--rows", type=int, help="initial rows per table (default 200,000)")
    run.add_argument("--waves", type=int, help="CDC waves after the full load (default 3)")
    run.add_argument(
        "--skew",
        choices=SKEWS,
        default=UNIFORM,
        help="which keys a wave's updates and deletes hit: uniform, or recent (80%% on the newest 10%% of keys)",
    )
    run.add_argument(
        "--table-concurrency",
        type=int,
        help=f"ODP: tables of a wave written at once (default {DEFAULT_TABLE_CONCURRENCY}; 1 = one by one)",
    )
    run.add_argument(
        "--table-type",
        choices=("COPY_ON_WRITE", "MERGE_ON_READ"),
        default="COPY_ON_WRITE",
        help="ODP's tables and the scale check's (the other contenders always write COPY_ON_WRITE)",
    )
    run.add_argument(
        "--index-buckets",
        type=int,
        help="ODP: the bucket index with this many buckets per partition (the table setting index_buckets; safe "
        "here, the workload never changes a row's vendorid); default: the record level index",
    )
    run.add_argument("--contenders", default=",".join(CONTENDERS), help="comma-separated, run in this order")
    run.add_argument("--scale-factor", type=int, default=None, help="ODP on a table this many times larger (0: off)")
    run.add_argument("--work-dir", type=Path, default=DEFAULT_WORK, help="staging files and tables")
    run.add_argument("--results-dir", type=Path, help="where the JSON and PNG go")
    run.add_argument("--name", help="results file name without suffix (default: today's date)")
    table = commands.add_parser("markdown", help="print a results file as the README's table")
    table.add_argument("results", type=Path)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "markdown":
        print(markdown(json.loads(args.results.read_text())))
        return 0
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    sizes = {"tables": args.tables, "rows": args.rows, "waves": args.waves}
    defaults = SMALL if args.small else {}
    spec = WorkloadSpec(
        **{**defaults, **{key: value for key, value in sizes.items() if value is not None}}, skew=args.skew
    )
    contenders = [name.strip() for name in args.contenders.split(",") if name.strip()]
    unknown = sorted(set(contenders) - set(CONTENDERS))
    if unknown:
        print(f"unknown contenders {unknown}; choose from {sorted(CONTENDERS)}", file=sys.stderr)
        return 2
    scale_factor = args.scale_factor if args.scale_factor is not None else (0 if args.small else 10)
    results_dir = args.results_dir or (args.work_dir / "results" if args.small else RESULTS)
    name = args.name or datetime.now(UTC).strftime("%Y-%m-%d")

    def save_progress(document: dict) -> None:
        write_json({**document, "partial": True}, results_dir / f"{name}.json")

    document = run_benchmark(
        spec,
        args.work_dir,
        contenders,
        scale_factor=scale_factor,
        on_progress=save_progress,
        odp_table_concurrency=args.table_concurrency or DEFAULT_TABLE_CONCURRENCY,
        odp_table_type=args.table_type,
        odp_index_buckets=args.index_buckets,
    )
    json_path = write_json(document, results_dir / f"{name}.json")
    chart = write_chart(document, results_dir / f"{name}.png")
    print(text_table(document))
    print(f"results: {json_path}" + (f", chart: {chart}" if chart else ""))
    failed = [name for name, result in document["contenders"].items() if result["status"] in ("wrong", "failed")]
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
