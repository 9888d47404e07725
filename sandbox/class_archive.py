"""The class data archive of the local JVM: ``python -m sandbox.class_archive OUT`` (``make setup`` runs it).

A local Spark JVM with the Hudi bundle loads and verifies about 20,000 classes before and while it writes its first
table. Java's class data sharing (CDS) maps them from an archive instead: this module runs a small demo (a DMS
table, a MERGE_ON_READ Debezium table, a DynamoDB table, a full load and a CDC round, the datasets) in a JVM started
with ``-XX:ArchiveClassesAtExit``, so the archive holds the classes the File Processor and the dataset job load.
Every local session then starts with ``-XX:SharedArchiveFile`` (``ODP_LOCAL_JVM_OPTIONS``, set by the Makefile;
etl/spark_session.py). The archive is only valid for the class path it was made with (the venv's Spark jars, the
Hudi bundle, ODP's extensions jar: the Makefile rebuilds it when one changes); a JVM whose class path differs, or
that finds the archive stale, runs without it, as before. Measured: docs/decisions/023.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from odp.contracts.spark import LOCAL_JVM_OPTIONS_ENV
from sandbox.process_group import wait_for_group

TABLES = (
    "taxi_trips_dms.taxi_trips.table_5",
    "inventory_debezium.inventory.products",
    "orders_dynamodb.app.orders",
)
# The archive's own warnings (classes of signed jars, which CDS skips) would fill the log.
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"


def _workload(workdir: Path) -> int:
    """The demo over TABLES, one CDC round, in this process's JVM (which writes the archive when it exits)."""
    from odp.config.loader import load_config
    from sandbox.cli import DEFAULT_CONFIG, _spark, configure_logging
    from sandbox.demo import prepare_workdir, run_demo

    layout = prepare_workdir(workdir)
    configure_logging(layout.log_file)
    spark = _spark(layout.lake)
    result = run_demo(load_config(DEFAULT_CONFIG), layout, spark, table_ids=TABLES, rounds=1, consumer_read=False)
    spark.stop()
    return 0 if result.ok else 1


def build_options(archive: Path, local_options: str) -> str:
    """Pure: the JVM options of the workload that writes ``archive``: the local options (``ODP_LOCAL_JVM_OPTIONS``,
    as the Makefile exports them) without the archive they map, which is the one being built."""
    kept = [option for option in local_options.split() if not option.startswith("-XX:SharedArchiveFile=")]
    return " ".join([f"-XX:ArchiveClassesAtExit={archive}", QUIET, *kept])


def build(out: Path) -> None:
    """Run the workload in a child process with ``-XX:ArchiveClassesAtExit``; move the archive to ``out``.

    Raises:
        RuntimeError: the workload failed or the JVM wrote no archive (the message names the log).
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="odp-class-archive-") as scratch:
        archive = Path(scratch) / "odp-local.jsa"
        log = out.with_suffix(".log")
        env = {**os.environ, LOCAL_JVM_OPTIONS_ENV: build_options(archive, os.environ.get(LOCAL_JVM_OPTIONS_ENV, ""))}
        command = [sys.executable, "-m", "sandbox.class_archive", "--workload", str(Path(scratch) / "demo")]
        with log.open("wb") as sink:
            child = subprocess.Popen(command, env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
            returncode = child.wait()
            wait_for_group(child.pid, deadline_seconds=300)  # the JVM outlives Python while it writes the archive
        if returncode != 0 or not archive.is_file():
            raise RuntimeError(f"the class data archive was not written (exit {returncode}); see {log}")
        shutil.move(archive, out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sandbox.class_archive", description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, nargs="?", help="where the archive goes (.cache/jvm/odp-local.jsa)")
    parser.add_argument("--workload", type=Path, help=argparse.SUPPRESS)  # the child's side
    args = parser.parse_args(argv)
    if args.workload is not None:
        return _workload(args.workload)
    if args.out is None:
        parser.error("OUT is required")
    try:
        build(args.out.resolve())
    except RuntimeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"built {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
