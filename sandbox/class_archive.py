"""The class data archive of the local JVM: ``python -m sandbox.class_archive OUT`` (``make setup`` runs it).

A local Spark JVM with the Hudi bundle loads and verifies about 19,000 classes before and while it writes its first
table. Java's class data sharing (CDS) maps them from an archive instead. The archive is dumped by a JVM that runs
nothing else (``-Xshare:dump``, about a minute) from :data:`CLASS_LIST`, the classes a JVM loaded while it ran a
small demo (a DMS table, a MERGE_ON_READ Debezium table, a DynamoDB table, a full load and a CDC round):
``python -m sandbox.class_archive --list`` runs that demo with ``-XX:DumpLoadedClassList`` and writes the list again
(when Spark, Hudi or ODP's jar changes: its header names the versions it was made with, and a test compares them
with the pins). Every local session then starts with ``-XX:SharedArchiveFile`` (``ODP_LOCAL_JVM_OPTIONS``, set by
the Makefile; etl/spark_session.py). The archive is only valid for the class path it was dumped with (the bundle and
ODP's extensions jar on the driver's class path, then the venv's Spark jars, as spark-submit starts a local session;
the Makefile dumps it again when one changes); a JVM whose class path differs runs without it, as before; a class the
list names and the class path lacks is left out. Measured: docs/decisions/023, 040.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pyspark

from etl.spark_session import LOCAL_DRIVER_MEMORY, hudi_bundle_jar, hudi_extensions_jar
from odp.contracts.spark import LOCAL_JVM_OPTIONS_ENV
from sandbox.process_group import wait_for_group

CLASS_LIST = Path(__file__).with_name("odp-local.classlist")
TABLES = (
    "taxi_trips_dms.taxi_trips.table_5",
    "inventory_debezium.inventory.products",
    "orders_dynamodb.app.orders",
)
# The archive's own warnings (classes of signed jars, which CDS skips; classes the list names that are not found)
# would fill the log. A static archive has no dynamic part, so `cds+dynamic` needs no switch of its own.
QUIET = "-Xlog:cds=off"
MADE_WITH = "# made with: "


def made_with() -> str:
    """What the class list depends on: pyspark's version (its Spark jars) and the Hudi bundle's file name."""
    return f"pyspark {pyspark.__version__}, {hudi_bundle_jar().name}"


def _workload(workdir: Path) -> int:
    """The demo over TABLES, one CDC round, in this process's JVM (which writes the class list when it exits)."""
    from odp.config.loader import load_config
    from sandbox.cli import DEFAULT_CONFIG, _spark, configure_logging
    from sandbox.demo import prepare_workdir, run_demo

    layout = prepare_workdir(workdir)
    configure_logging(layout.log_file)
    spark = _spark(layout.lake)
    result = run_demo(load_config(DEFAULT_CONFIG), layout, spark, table_ids=TABLES, rounds=1, consumer_read=False)
    spark.stop()
    return 0 if result.ok else 1


def list_options(class_list: Path, local_options: str) -> str:
    """Pure: the JVM options of the workload that writes ``class_list``: the local options (``ODP_LOCAL_JVM_OPTIONS``,
    as the Makefile exports them) without the archive they map, so that every class it loads is listed."""
    kept = [option for option in local_options.split() if not option.startswith("-XX:SharedArchiveFile=")]
    return " ".join([f"-XX:DumpLoadedClassList={class_list}", QUIET, *kept])


def dump_command(class_list: Path, archive: Path, *, bundle: Path, extensions: Path) -> list[str]:
    """Pure: spark-submit starting a driver JVM on the local session's class path (``bundle`` and ``extensions`` on
    the driver's class path, as etl/spark_session.py puts them, before Spark's jars) that dumps ``archive`` from
    ``class_list`` and exits without running anything."""
    spark_submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    java_options = f"-Xshare:dump -XX:SharedClassListFile={class_list} -XX:SharedArchiveFile={archive} {QUIET}"
    return [
        str(spark_submit),
        "--driver-class-path",
        os.pathsep.join([str(bundle), str(extensions)]),
        "--driver-memory",
        LOCAL_DRIVER_MEMORY,
        "--driver-java-options",
        java_options,
        "pyspark-shell",
    ]


def _run_to_log(command: list[str], log: Path, env: dict[str, str] | None = None) -> int:
    """Run ``command`` in a process group of its own, its output to ``log``; wait for every process of the group (a
    JVM outlives the Python that started it while it writes)."""
    with log.open("wb") as sink:
        child = subprocess.Popen(command, env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
        returncode = child.wait()
        wait_for_group(child.pid, deadline_seconds=300)
    return returncode


def build(out: Path, class_list: Path = CLASS_LIST) -> None:
    """Dump the archive from ``class_list`` in a JVM of the local session's class path; move it to ``out``.

    Raises:
        RuntimeError: the JVM wrote no archive (the message names the log).
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="odp-class-archive-") as scratch:
        archive = Path(scratch) / "odp-local.jsa"
        log = out.with_suffix(".log")
        command = dump_command(class_list, archive, bundle=hudi_bundle_jar(), extensions=hudi_extensions_jar())
        returncode = _run_to_log(command, log)
        if returncode != 0 or not archive.is_file():
            raise RuntimeError(f"the class data archive was not written (exit {returncode}); see {log}")
        shutil.move(archive, out)


def write_class_list(out: Path = CLASS_LIST) -> None:
    """Run the workload in a child JVM started with ``-XX:DumpLoadedClassList``; write the list to ``out`` under a
    header that names what it was made with.

    Raises:
        RuntimeError: the workload failed or the JVM listed no class (the message names the log).
    """
    with tempfile.TemporaryDirectory(prefix="odp-class-list-") as scratch:
        listed = Path(scratch) / "odp-local.classlist"
        log = Path(scratch) / "workload.log"
        options = list_options(listed, os.environ.get(LOCAL_JVM_OPTIONS_ENV, ""))
        command = [sys.executable, "-m", "sandbox.class_archive", "--workload", str(Path(scratch) / "demo")]
        returncode = _run_to_log(command, log, env={**os.environ, LOCAL_JVM_OPTIONS_ENV: options})
        if returncode != 0 or not listed.is_file():
            raise RuntimeError(f"the class list was not written (exit {returncode}): {log.read_text()[-3000:]}")
        classes = [line for line in listed.read_text().splitlines() if line and not line.startswith("#")]
    header = [
        "# The classes a local Spark JVM loaded while it ran a small demo; make setup dumps the class data archive",
        "# from them (sandbox/class_archive.py). Written by `python -m sandbox.class_archive --list`: run it again",
        "# when pyspark, the Hudi bundle or ODP's jar changes.",
        f"{MADE_WITH}{made_with()}",
    ]
    out.write_text("\n".join([*header, *classes]) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sandbox.class_archive", description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, nargs="?", help="where the archive goes (.cache/jvm/odp-local.jsa)")
    parser.add_argument("--list", action="store_true", help=f"write {CLASS_LIST.name} again from a demo run")
    parser.add_argument("--workload", type=Path, help=argparse.SUPPRESS)  # the child's side
    args = parser.parse_args(argv)
    if args.workload is not None:
        return _workload(args.workload)
    try:
        if args.list:
            write_class_list()
            print(f"wrote {CLASS_LIST}")
            return 0
        if args.out is None:
            parser.error("OUT is required")
        build(args.out.resolve())
    except RuntimeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"built {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
