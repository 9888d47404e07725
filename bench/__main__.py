"""``python -m bench run [--small] [--tables T --rows R --waves W] [--skew recent] [--table-concurrency N]``,
``python -m bench fleet [--small] [--fleet 28x10000,...] [--waves N] [--merge-on-read dimension]``,
``python -m bench fixed-cost``, ``python -m bench many-files``, ``python -m bench fleet-model [--tables 100,1000]``.

Prints the comparison, writes ``<results-dir>/<date>.json`` and ``<date>.png``. A ``--small`` run
writes its results under the work folder (never into bench/results) unless ``--results-dir`` says.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

from bench import fleet_model
from bench.contenders.common import DEFAULT_DRIVER_MEMORY, DRIVER_MEMORY_VARIABLE
from bench.fleet import CLASSES, DEFAULT_GROUPS, DIMENSION, FleetSpec, parse_classes, parse_groups
from bench.fleet_runner import run_fixed_cost, run_fleet, run_many_files
from bench.measure import level_jvm_options
from bench.report import (
    fleet_text,
    markdown,
    text_table,
    write_chart,
    write_fleet_chart,
    write_json,
    write_many_files_chart,
)
from bench.runner import CONTENDERS, run_benchmark
from bench.workload import SKEWS, UNIFORM, WorkloadSpec
from odp.contracts.file_processor import DEFAULT_TABLE_CONCURRENCY

RESULTS = Path(__file__).resolve().parent / "results"
DEFAULT_WORK = Path(__file__).resolve().parents[1] / ".cache" / "bench"
SMALL = {"tables": 2, "rows": 1_000, "waves": 1}
SMALL_FLEET = "4x2000"  # one table of each class
DRIVER_MEMORY_HELP = "the heap of every contender's local[2] Spark driver alike (default 2g; in the JSON's machine)"
SMALL_HISTORY_DAYS = 3  # a smoke run's fact and event tables: 3 day partitions in the full load, not 30


def fleet_classes(text: str) -> tuple[str, ...]:
    """``--merge-on-read``'s value: fleet classes (argparse prints the refusal and exits 2)."""
    try:
        return parse_classes(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from error


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
    run.add_argument("--update-fraction", type=float, help="updates per wave, share of R (default 0.10)")
    run.add_argument("--delete-fraction", type=float, help="deletes per wave, share of R (default 0.02)")
    run.add_argument("--insert-fraction", type=float, help="inserts per wave, share of R (default 0.05)")
    run.add_argument("--contenders", default=",".join(CONTENDERS), help="comma-separated, run in this order")
    run.add_argument("--scale-factor", type=int, default=None, help="ODP on a table this many times larger (0: off)")
    run.add_argument("--work-dir", type=Path, default=DEFAULT_WORK, help="staging files and tables")
    run.add_argument("--results-dir", type=Path, help="where the JSON and PNG go")
    run.add_argument("--name", help="results file name without suffix (default: today's date)")
    run.add_argument("--driver-memory", default=DEFAULT_DRIVER_MEMORY, help=DRIVER_MEMORY_HELP)
    fleet = commands.add_parser("fleet", help="tables of many sizes and kinds at real change rates (bench.fleet)")
    fleet.add_argument("--small", action="store_true", help=f"a smoke run: {SMALL_FLEET}, 3 days of history, 1 wave")
    fleet.add_argument("--fleet", help="<tables>x<rows>,... (default 28x10000,8x200000,3x2000000,1x10000000)")
    fleet.add_argument("--waves", type=int, help="CDC waves (default 5; the longevity run: 50)")
    fleet.add_argument(
        "--mix", help="inserts,updates,deletes of a wave's changes for every class but event, e.g. 0.25,0.65,0.1"
    )
    fleet.add_argument("--min-change", type=float, help="least share of a table changed per wave (default 0.001)")
    fleet.add_argument("--max-change", type=float, help="largest share of a table changed per wave (default 0.01)")
    fleet.add_argument(
        "--merge-on-read",
        type=fleet_classes,
        default=(),
        metavar="CLASSES",
        help=f"ODP writes these classes' tables as MERGE_ON_READ (comma-separated from {', '.join(CLASSES)}, e.g. "
        f"{DIMENSION}; default: none, every table COPY_ON_WRITE; the naive rewrite always writes plain files)",
    )
    fleet.add_argument(
        "--merge-on-read-from",
        type=int,
        default=0,
        metavar="ROWS",
        help="only the --merge-on-read classes' tables of at least ROWS rows at their full load (default 0: every "
        "size); ODP's log line recommends MERGE_ON_READ only for a COPY_ON_WRITE table whose upserts rewrite at "
        "least 4 MiB, which a table of 10,000 rows never does",
    )
    fleet.add_argument(
        "--warm-jvm",
        action="store_true",
        help="each contender (odp, naive_rewrite) runs every wave in one JVM, as a warm writer (bench.warm_jvm); "
        "default: a new JVM a wave, as a scheduled Glue run",
    )
    fleet.add_argument(
        "--repeats", type=int, default=1, help="the run again on the same files, contenders' order alternating"
    )
    fixed = commands.add_parser("fixed-cost", help="a wave where N small tables get one file each vs a wave without")
    fixed.add_argument("--tables", type=int, default=28)
    fixed.add_argument("--rows", type=int, default=10_000)
    fixed.add_argument("--changes", type=int, default=20, help="change rows in each table's one file")
    many = commands.add_parser("many-files", help="N one-row files of one table vs the same rows in one file")
    many.add_argument("--files", type=int, default=1_000)
    many.add_argument("--rows", type=int, default=200_000, help="rows of the table before the wave")
    for command in (fleet, fixed, many):
        command.add_argument("--contenders", default="odp,naive_rewrite", help="comma-separated, in this order")
        command.add_argument("--table-concurrency", type=int, help="ODP: tables of a wave written at once")
        command.add_argument("--index-buckets", type=int, help="ODP: the bucket index, N buckets per partition")
        command.add_argument(
            "--simple-index-up-to",
            type=int,
            metavar="ROWS",
            help="ODP: tables of at most ROWS rows at their full load get the table setting index: simple (Hudi's "
            "simple index, no metadata table); default: none, every table the record level index",
        )
        command.add_argument("--work-dir", type=Path, default=DEFAULT_WORK, help="staging files and tables")
        command.add_argument("--results-dir", type=Path, help="where the JSON and PNG go")
        command.add_argument("--name", help="results file name without suffix")
        command.add_argument("--driver-memory", default=DEFAULT_DRIVER_MEMORY, help=DRIVER_MEMORY_HELP)
    commands.add_parser(
        "fleet-model",
        help="the planner over a simulated day of 100 to 5,000 tables (bench.fleet_model)",
        add_help=False,
    )
    table = commands.add_parser("markdown", help="print a results file as the README's table")
    table.add_argument("results", type=Path)
    return top


def fleet_main(args: argparse.Namespace) -> int:
    """The fleet, fixed-cost and many-files commands."""
    contenders = [name.strip() for name in args.contenders.split(",") if name.strip()]
    unknown = sorted(set(contenders) - set(CONTENDERS))
    if unknown:
        print(f"unknown contenders {unknown}; choose from {sorted(CONTENDERS)}", file=sys.stderr)
        return 2
    small = getattr(args, "small", False)
    results_dir = args.results_dir or (args.work_dir / "results" if small else RESULTS)
    name = args.name or f"{args.command}-{datetime.now(UTC).strftime('%Y-%m-%d')}"
    odp_options = {
        "table_concurrency": args.table_concurrency or DEFAULT_TABLE_CONCURRENCY,
        "index_buckets": args.index_buckets,
        "simple_index_up_to": args.simple_index_up_to,
    }
    if args.command == "fleet":
        try:
            groups = parse_groups(args.fleet or SMALL_FLEET) if (args.fleet or small) else DEFAULT_GROUPS
            mix = tuple(float(part) for part in args.mix.split(",")) if args.mix else None
            options = {
                "groups": groups,
                "waves": args.waves if args.waves is not None else (1 if small else 5),
                "mix": mix,
                "merge_on_read": args.merge_on_read,
                "merge_on_read_from": args.merge_on_read_from,
                **({"history_days": SMALL_HISTORY_DAYS} if small else {}),
                **({"min_change_fraction": args.min_change} if args.min_change else {}),
                **({"max_change_fraction": args.max_change} if args.max_change else {}),
            }
            spec = FleetSpec(**options)  # type: ignore[arg-type]
        except ValueError as error:
            print(f"fleet: {error}", file=sys.stderr)
            return 2

        def save_progress(document: dict) -> None:
            write_json({**document, "partial": True}, results_dir / f"{name}.json")

        try:
            document = run_fleet(
                spec,
                args.work_dir,
                contenders,
                odp_options=odp_options,
                on_progress=save_progress,
                warm_jvm=args.warm_jvm,
                repeats=args.repeats,
            )
        except ValueError as error:  # --warm-jvm with a contender of a process per table, --repeats below 1
            print(f"fleet: {error}", file=sys.stderr)
            return 2
        chart = write_fleet_chart(document, results_dir / f"{name}.png")
        print(fleet_text(document))
    elif args.command == "fixed-cost":
        document = run_fixed_cost(
            args.tables, args.rows, args.changes, args.work_dir, contenders, odp_options=odp_options
        )
        chart = write_fleet_chart(document, results_dir / f"{name}.png")
        print(fleet_text(document))
    else:
        document = run_many_files(args.files, args.rows, args.work_dir, contenders, odp_options=odp_options)
        chart = write_many_files_chart(document, results_dir / f"{name}.png")
        print(json.dumps({"cdc_wave_many_over_one": document["cdc_wave_many_over_one"]}))
    json_path = write_json(document, results_dir / f"{name}.json")
    print(f"results: {json_path}" + (f", chart: {chart}" if chart else ""))
    runs = document["runs"].values() if "runs" in document else [document]
    failed = [n for run in runs for n, result in run["contenders"].items() if result["status"] in ("wrong", "failed")]
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    if arguments[:1] == ["fleet-model"]:  # its own options (bench.fleet_model), no JVM
        return fleet_model.main(arguments[1:])
    args = parser().parse_args(arguments)
    if args.command == "markdown":
        document = json.loads(args.results.read_text())
        if document.get("kind") == "many_files":
            print(json.dumps({"cdc_wave_many_over_one": document["cdc_wave_many_over_one"]}))
        else:
            print(fleet_text(document) if document.get("kind") else markdown(document))
        return 0
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    level_jvm_options()
    os.environ[DRIVER_MEMORY_VARIABLE] = args.driver_memory  # every contender's JVM alike (bench.contenders.common)
    if args.command != "run":
        return fleet_main(args)
    sizes = {
        "tables": args.tables,
        "rows": args.rows,
        "waves": args.waves,
        "update_fraction": args.update_fraction,
        "delete_fraction": args.delete_fraction,
        "insert_fraction": args.insert_fraction,
    }
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
