"""Run a command as a child process and kill it for real: SIGKILL to its whole process group.

Two ways to choose the moment, usable together:

- ``fault_point="area.step"``: the child kills itself there (``ODP_FAULT_POINT``, see odp/faults.py);
  the points are named at the state-changing steps of the code (``sandbox.after_file_manager``,
  ``etl.before_commit``, ``etl.after_commit``, ``etl.after_mark_processed``).
- ``kill_when=<predicate>``: the parent polls it and sends SIGKILL to the child's process group as
  soon as it holds, e.g. :func:`inflight_instant` (a Hudi commit under way that has not completed).

The child runs in its own session, so its process group holds everything it started (the Spark
JVM too) and nothing of the test process. A later test adds a kill point by naming a new
``fault_point(...)`` in the code, or a new predicate here.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from odp.faults import FAULT_POINT_VARIABLE
from sandbox.process_group import wait_for_group
from tests.support.paths import REPO_ROOT
from tests.support.timeline import instant_of, timeline_dir

COMPLETED_ACTIONS = (".commit", ".deltacommit", ".replacecommit")


class ChildTimeoutError(TimeoutError):
    """The child neither ended nor reached its kill point in time (it was killed)."""


@dataclass(frozen=True)
class ChildRun:
    """How a child process ended: its exit code (``-9`` when killed), whether it was killed, its output."""

    argv: tuple[str, ...]
    returncode: int
    output: str
    seconds: float

    @property
    def killed(self) -> bool:
        return self.returncode == -signal.SIGKILL


def _kill_group(pgid: int, *, deadline_seconds: float = 30) -> None:
    """SIGKILL every process of the group and wait until each has died.

    SIGKILL is delivered asynchronously: a killed process still shows as running while the kernel tears it
    down, which takes longer on a loaded machine. Waiting here keeps the promise that nothing of the group
    survives, for the caller's checks and for the next test's CPU.
    """
    with contextlib.suppress(ProcessLookupError):  # the group has already gone
        os.killpg(pgid, signal.SIGKILL)
    wait_for_group(pgid, deadline_seconds=deadline_seconds)


@contextlib.contextmanager
def killable_spark_dirs() -> Iterator[dict[str, str]]:
    """The environment of a child whose Spark JVM may be killed: Spark's local folders (``SPARK_LOCAL_DIRS``: the
    driver's ``spark-*`` folder with its copy of every jar it serves, about 106 MB with the Hudi bundle, and the block
    manager's files) in a folder of its own, removed when the block ends. A JVM killed with SIGKILL runs no shutdown
    hook, so Spark never removes them itself: every killed child used to leave its folder in /tmp."""
    scratch = Path(tempfile.mkdtemp(prefix="odp-killed-spark-"))
    try:
        yield {"SPARK_LOCAL_DIRS": str(scratch)}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run_child(
    argv: Sequence[str],
    *,
    output: Path,
    fault_point: str | None = None,
    kill_when: Callable[[], bool] | None = None,
    env: Mapping[str, str] | None = None,
    timeout_seconds: float = 900,
    poll_seconds: float = 0.02,
) -> ChildRun:
    """Run ``argv`` from the repository root; kill its process group at the chosen moment.

    ``output`` receives the child's stdout and stderr. Whatever happens, nothing of the child's group
    survives this call, nor Spark's local folders (:func:`killable_spark_dirs`).

    Raises:
        ChildTimeoutError: it ran longer than ``timeout_seconds``.
    """
    variables = {**os.environ, **(env or {})}
    variables.pop(FAULT_POINT_VARIABLE, None)
    if fault_point is not None:
        variables[FAULT_POINT_VARIABLE] = fault_point
    started = time.monotonic()
    output.parent.mkdir(parents=True, exist_ok=True)
    with killable_spark_dirs() as spark_dirs, output.open("wb") as sink:
        variables.update(spark_dirs)
        child = subprocess.Popen(
            list(argv), cwd=REPO_ROOT, env=variables, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
        )
        pgid = child.pid  # start_new_session: the child leads its own group
        try:
            while child.poll() is None:
                if kill_when is not None and kill_when():
                    _kill_group(pgid)
                    child.wait()
                    break
                if time.monotonic() - started > timeout_seconds:
                    _kill_group(pgid)
                    child.wait()
                    raise ChildTimeoutError(f"{' '.join(argv)} still running after {timeout_seconds} s; see {output}")
                time.sleep(poll_seconds)
        finally:
            _kill_group(pgid)  # stragglers (a JVM) of a child that ended or killed itself
    return ChildRun(tuple(argv), child.returncode, output.read_text(errors="replace"), time.monotonic() - started)


def sandbox_run_argv(config_dir: Path, staging: Path, lake: Path) -> list[str]:
    """``python -m sandbox run`` over these folders, with this interpreter."""
    return [
        sys.executable,
        "-m",
        "sandbox",
        "run",
        "--config-dir",
        str(config_dir),
        "--staging",
        str(staging),
        "--lake",
        str(lake),
    ]


def spark_write_in_progress(folder: Path) -> Callable[[], bool]:
    """A predicate: a Spark file write under ``folder`` has started and not committed (a ``_temporary`` folder)."""

    def holds() -> bool:
        return any(folder.glob("*/_temporary"))

    return holds


def inflight_instant(table_dir: Path) -> Callable[[], bool]:
    """A predicate: the Hudi table at ``table_dir`` has an instant inflight that has not completed yet."""

    def holds() -> bool:
        try:
            names = [name for name in os.listdir(timeline_dir(table_dir)) if not name.startswith(".")]
        except FileNotFoundError:
            return False
        inflight = {instant_of(name) for name in names if name.endswith(".inflight")}
        completed = {instant_of(name) for name in names if name.endswith(COMPLETED_ACTIONS)}
        return bool(inflight - completed)

    return holds


def completed_instants(table_dir: Path) -> list[str]:
    """Completed commit instants of the table at ``table_dir`` (file names of its timeline)."""
    timeline = timeline_dir(table_dir)
    if not timeline.is_dir():
        return []
    return sorted(p.name for p in timeline.iterdir() if p.is_file() and p.name.endswith(COMPLETED_ACTIONS))
