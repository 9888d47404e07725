"""The local JVM's options in a test run (docs/decisions/023, 042, 043): the shared session keeps the options make
exported (``ODP_LOCAL_JVM_OPTIONS``: the class data archive), evaluates Spark's expressions without generated code and
collects its garbage with the serial collector, as do the child processes a test starts (a run to kill, the
benchmark's ODP contender, the restarted stream), which get C1 only as well, since they live for seconds. The
benchmark's smoke runs keep them (a real benchmark drops them: bench/measure.py). `make demo` keeps Spark's code
generation, the path Glue runs, and the JVM's own choice of collector."""

from __future__ import annotations

import os

from bench.measure import KEEP_LOCAL_JVM_OPTIONS_ENV
from odp.contracts.spark import LOCAL_JVM_OPTIONS_ENV

SHARED_JVM_OPTIONS_ENV = "ODP_TESTS_SHARED_JVM_OPTIONS"  # the options as make gave them, kept for the shared session
SHORT_LIVED_JVM_OPTIONS = "-XX:TieredStopAtLevel=1"
# Spark's interpreted expressions and no whole-stage code generation (Spark settings, read from the driver's system
# properties): a test's tables have tens of rows in shapes no other test repeats, so each query's generated classes were
# compiled by Janino, loaded and compiled again by the JIT to process a few rows. The interpreted path gives the same
# results (Spark's own suites run both); it took about a tenth of the CPU of Hudi-heavy test files (docs/decisions/042).
INTERPRETED_EXPRESSIONS = "-Dspark.sql.codegen.factoryMode=NO_CODEGEN -Dspark.sql.codegen.wholeStage=false"
# The serial collector: a test JVM's heap (2 GiB at most) holds tens of rows and short-lived garbage, and two workers
# share two cores. G1 (the JVM's choice here) spent about a quarter more of the process tree's CPU on a Hudi-heavy file
# (its write barriers, its concurrent refinement and marking threads) than the serial collector's pauses (decision 043).
SERIAL_COLLECTOR = "-XX:+UseSerialGC"


def give_children_short_lived_options() -> None:
    """Keep the options as they are for the shared session (with :data:`INTERPRETED_EXPRESSIONS` and
    :data:`SERIAL_COLLECTOR`), give the environment (what child processes and pytest-xdist's workers inherit) the
    short-lived ones; the same result when called again."""
    made = os.environ.get(LOCAL_JVM_OPTIONS_ENV, "")
    shared = os.environ.setdefault(
        SHARED_JVM_OPTIONS_ENV, f"{made} {INTERPRETED_EXPRESSIONS} {SERIAL_COLLECTOR}".strip()
    )
    os.environ[LOCAL_JVM_OPTIONS_ENV] = f"{shared} {SHORT_LIVED_JVM_OPTIONS}".strip()
    os.environ[KEEP_LOCAL_JVM_OPTIONS_ENV] = "1"  # a benchmark smoke run measures nothing


def shared_session_options() -> str:
    """The driver JVM options of the test run's shared session."""
    return os.environ.get(SHARED_JVM_OPTIONS_ENV, os.environ.get(LOCAL_JVM_OPTIONS_ENV, ""))
