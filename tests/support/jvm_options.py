"""The local JVM's options in a test run (docs/decisions/023): the shared session keeps the options make exported
(``ODP_LOCAL_JVM_OPTIONS``: the class data archive); the child processes a test starts (a run to kill, the benchmark's
ODP contender, the restarted stream) get C1 only as well, since they live for seconds. The benchmark's smoke runs keep
them (a real benchmark drops them: bench/measure.py)."""

from __future__ import annotations

import os

from bench.measure import KEEP_LOCAL_JVM_OPTIONS_ENV
from odp.contracts.spark import LOCAL_JVM_OPTIONS_ENV

SHARED_JVM_OPTIONS_ENV = "ODP_TESTS_SHARED_JVM_OPTIONS"  # the options as make gave them, kept for the shared session
SHORT_LIVED_JVM_OPTIONS = "-XX:TieredStopAtLevel=1"


def give_children_short_lived_options() -> None:
    """Keep the options as they are for the shared session, give the environment (what child processes and
    pytest-xdist's workers inherit) the short-lived ones; the same result when called again."""
    shared = os.environ.setdefault(SHARED_JVM_OPTIONS_ENV, os.environ.get(LOCAL_JVM_OPTIONS_ENV, ""))
    os.environ[LOCAL_JVM_OPTIONS_ENV] = f"{shared} {SHORT_LIVED_JVM_OPTIONS}".strip()
    os.environ[KEEP_LOCAL_JVM_OPTIONS_ENV] = "1"  # a benchmark smoke run measures nothing


def shared_session_options() -> str:
    """The driver JVM options of the test run's shared session."""
    return os.environ.get(SHARED_JVM_OPTIONS_ENV, os.environ.get(LOCAL_JVM_OPTIONS_ENV, ""))
