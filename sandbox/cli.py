"""The sandbox's command line: ``run``, ``demo``, ``stream`` and ``onboard`` (see sandbox/README.md)."""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
from functools import partial
from pathlib import Path
from typing import Any

from odp.config.loader import ConfigError, load_config
from sandbox.account import SandboxLayout
from sandbox.report import render_report
from sandbox.spark_on_demand import SparkOnDemand

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CONFIG = REPO_ROOT / "config"
DEFAULT_DEMO_DIR = REPO_ROOT / ".demo"
DEFAULT_STREAM_DIR = REPO_ROOT / ".demo" / "stream"
QUIET_LOGGERS = ("py4j", "moto", "botocore", "boto3", "urllib3", "aws_lambda_powertools")


def positive_int(text: str) -> int:
    """An argument of at least 1 (argparse prints the refusal and exits 2)."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m sandbox", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="announce new staging files, run the File Processor, report per table")
    run.add_argument("--config-dir", type=Path, default=DEFAULT_CONFIG, help="configuration folder (default: config/)")
    run.add_argument("--staging", type=Path, required=True, help="the staging bucket: <source>/<schema>/<table>/<file>")
    run.add_argument("--lake", type=Path, required=True, help="the lake folder: raw bucket, tracker state, log")
    run.add_argument("--cadence", help="run only this cadence's state machine (default: every cadence)")
    run.add_argument("--report", type=Path, help="write the report as JSON here (default: <lake>/report.json)")
    run.add_argument(
        "--warm-ticks",
        type=positive_int,
        default=1,
        help="ticks of a warm cadence's run in this JVM (default 1)",
    )
    run.add_argument(
        "--warm-tick-seconds",
        type=float,
        default=5.0,
        help="seconds between warm ticks (default 5)",
    )
    demo = commands.add_parser("demo", help="generate demo CDC data, run every round, validate every table")
    demo.add_argument("--scale", type=int, default=1, help="multiplies the rows per table (default 1)")
    demo.add_argument("--config-dir", type=Path, default=DEFAULT_CONFIG, help="configuration folder (default: config/)")
    demo.add_argument("--workdir", type=Path, default=DEFAULT_DEMO_DIR, help="emptied, then holds staging/ and lake/")
    stream = commands.add_parser("stream", help="stream DynamoDB changes of 3 tables through a local Kinesis stand-in")
    stream.add_argument("--rounds", type=int, default=4, help="micro-batches (default 4)")
    stream.add_argument("--rows", type=int, default=20, help="inserts per table per micro-batch (default 20)")
    stream.add_argument(
        "--config-dir", type=Path, default=DEFAULT_CONFIG, help="configuration folder (default: config/)"
    )
    stream.add_argument(
        "--workdir", type=Path, default=DEFAULT_STREAM_DIR, help="emptied, then holds config/, kinesis/, lake/"
    )
    onboard = commands.add_parser(
        "onboard", help="a generated Debezium source from one include entry, shards merged, an unmatched prefix"
    )
    onboard.add_argument("--tables", type=int, default=200, help="tables of the generated source (default 200)")
    onboard.add_argument("--shards", type=int, default=4, help="shards of its orders table (default 4)")
    onboard.add_argument("--write", type=int, default=1, help="onboarded tables the File Processor writes (default 1)")
    onboard.add_argument(
        "--config-dir", type=Path, default=DEFAULT_CONFIG, help="configuration folder (default: config/)"
    )
    onboard.add_argument(
        "--workdir",
        type=Path,
        default=DEFAULT_DEMO_DIR / "onboard",
        help="emptied, then holds config/, staging/, lake/",
    )
    return parser


def _progress_filter(record: logging.LogRecord) -> bool:
    """Console lines: the sandbox's, the job's per-table results in short form, and errors."""
    if record.name == "etl.file_processor.processor" and isinstance(record.args, tuple) and len(record.args) == 2:
        result = record.args[1]
        if hasattr(result, "table_id") and hasattr(result, "status"):
            from sandbox.runner import describe_outcome

            # The file handler ran first and logged the full result; the console gets one line.
            record.msg, record.args = "    %s", (describe_outcome(result),)
            return True
    return record.name.split(".")[0] == "sandbox" or record.levelno >= logging.ERROR


def configure_logging(log_file: Path) -> None:
    """Progress on the console, everything (INFO and up) in the lake's log file."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    for handler in list(root.handlers):
        root.removeHandler(handler)
    to_file = logging.FileHandler(log_file, encoding="utf-8")
    to_file.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(to_file)
    console = logging.StreamHandler(sys.stdout)
    console.setFormatter(logging.Formatter("%(asctime)s %(message)s", datefmt="%H:%M:%S"))
    console.addFilter(_progress_filter)
    root.addHandler(console)
    logging.captureWarnings(True)  # library warnings go to the log file, not between the progress lines
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    # moto logs every caught Step Functions failure (a Catch that works) with the whole state at ERROR.
    logging.getLogger("moto.stepfunctions").setLevel(logging.CRITICAL)


def _spark(lake: Path) -> Any:
    from etl.spark_session import local_spark_session

    # No stage progress bars between the progress lines (read when the JVM starts).
    os.environ.setdefault("PYSPARK_SUBMIT_ARGS", "--conf spark.ui.showConsoleProgress=false pyspark-shell")
    session = local_spark_session("odp-sandbox", warehouse_dir=str((lake / "_sandbox" / "warehouse").resolve()))
    session.sparkContext.setLogLevel("ERROR")
    return session


def _run(args: argparse.Namespace) -> int:
    from sandbox.runner import SandboxRunError, WarmTicks, cadences_to_run, run_sandbox

    config = load_config(args.config_dir)
    layout = SandboxLayout(lake=args.lake.resolve(), staging=args.staging.resolve())
    try:
        cadences_to_run(config, layout, args.cadence)  # fail fast, before Spark starts
    except SandboxRunError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    configure_logging(layout.log_file)
    spark = SparkOnDemand(partial(_spark, layout.lake))  # the JVM starts with the first job, if any
    warm = WarmTicks(ticks=args.warm_ticks, tick_seconds=args.warm_tick_seconds)
    report = run_sandbox(config, layout, spark, cadence=args.cadence, refresh_datasets=True, warm=warm)
    report_path = args.report or layout.lake / "report.json"
    report.write(report_path)
    print(render_report(report))
    print(f"report: {report_path}; log: {layout.log_file}")
    return 0 if report.ok else 1


def _demo(args: argparse.Namespace) -> int:
    from sandbox.demo import prepare_workdir, render_demo, run_demo

    if args.scale < 1:
        print("error: --scale must be at least 1", file=sys.stderr)
        return 2
    config = load_config(args.config_dir)
    layout = prepare_workdir(args.workdir.resolve())
    configure_logging(layout.log_file)
    spark = _spark(layout.lake)
    result = run_demo(config, layout, spark, scale=args.scale, config_dir=args.config_dir.resolve())
    print(render_demo(result))
    print(f"staging: {layout.staging}; lake: {layout.lake}; log: {layout.log_file}")
    return 0 if result.ok else 1


def _stream(args: argparse.Namespace) -> int:
    from sandbox.streaming_demo import render_stream_demo, run_stream_demo

    if args.rounds < 1 or args.rows < 1:
        print("error: --rounds and --rows must be at least 1", file=sys.stderr)
        return 2
    load_config(args.config_dir)  # fail fast on a broken configuration, before Spark starts
    workdir = args.workdir.resolve()
    if workdir.exists():
        shutil.rmtree(workdir)
    configure_logging(workdir / "stream.log")
    spark = _spark(workdir)
    result = run_stream_demo(spark, workdir, args.config_dir.resolve(), rounds=args.rounds, rows=args.rows)
    print(render_stream_demo(result))
    print(f"kinesis records: {workdir / 'kinesis'}; lake: {workdir / 'lake'}; log: {workdir / 'stream.log'}")
    return 0 if result.ok else 1


def _onboard(args: argparse.Namespace) -> int:
    from sandbox.onboarding_demo import render_onboarding, run_onboarding_demo

    if args.tables < 1 or args.shards < 1 or not 0 <= args.write <= args.tables:
        print("error: --tables and --shards must be at least 1, --write between 0 and --tables", file=sys.stderr)
        return 2
    load_config(args.config_dir)  # fail fast on a broken configuration, before Spark starts
    workdir = args.workdir.resolve()
    configure_logging(workdir.parent / f"{workdir.name}.log")
    result = run_onboarding_demo(
        _spark(workdir), workdir, args.config_dir.resolve(), tables=args.tables, shards=args.shards, write=args.write
    )
    print(render_onboarding(result))
    return 0 if result.ok else 1


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    commands = {"run": _run, "demo": _demo, "stream": _stream, "onboard": _onboard}
    try:
        return commands[args.command](args)
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
