"""``--warm-jvm``: a contender's job serves every wave in one long-lived process (one JVM), as a warm writer does.

Without it each wave is a new process (``bench.measure.run_step``): a new JVM, Spark context and Hudi write client,
what a scheduled Glue run pays. With it, :class:`WarmJob` starts ``python -m <job> --serve`` once; each wave writes
its spec path on the job's stdin and waits for the job's ``done <exit status>`` line on its stdout. A wave's
measurement is what the process did meanwhile: wall time, the CPU time its process tree added, the peak memory seen.
The job's start (JVM, Spark session) falls in the first wave (the full load), its process counted there only: what a
warm writer pays once per lifetime. Both contenders get the same treatment (issue 47: a warm JVM on both sides).

The serving loop (:func:`serve`) is shared by the jobs: it reads one spec path a line and runs ``run_wave(path)``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, cast

from bench.measure import StepResult, _cpu_ticks, _rss_bytes, child_env, tree_pids

SERVE_FLAG = "--serve"
DONE = "done"


class WarmJobError(RuntimeError):
    """The serving job ended or answered something other than ``done <status>``; the message names its log."""


class WarmJob:
    """One contender job process serving waves; ``close()`` ends it (the contender calls it after its last wave)."""

    def __init__(self, module: str, log_path: Path, *, interval: float = 0.25) -> None:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self.command = (sys.executable, "-m", module, SERVE_FLAG)
        self.log_path = log_path
        self.interval = interval
        self._log = log_path.open("ab")
        self._child = subprocess.Popen(
            self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, env=child_env(), text=True
        )

    def _cpu_seconds(self) -> float:
        return sum(_cpu_ticks(pid) for pid in tree_pids(self._child.pid)) / os.sysconf("SC_CLK_TCK")

    def run_wave(self, spec_path: Path) -> StepResult:
        """Send one wave's spec and wait for it; the wave's own time, CPU and peak memory.

        Raises:
            WarmJobError: the job died or its answer is not ``done <status>``.
        """
        stdin, stdout = cast(IO[str], self._child.stdin), cast(IO[str], self._child.stdout)  # both pipes (Popen)
        peak, done = 0, threading.Event()

        def sample() -> None:
            nonlocal peak
            while not done.is_set():
                peak = max(peak, sum(_rss_bytes(pid) for pid in tree_pids(self._child.pid)))
                done.wait(self.interval)

        cpu_before = self._cpu_seconds()
        sampler = threading.Thread(target=sample, daemon=True)
        started = time.perf_counter()
        sampler.start()
        try:
            stdin.write(f"{spec_path}\n")
            stdin.flush()
            answer = _answer(stdout)
        finally:
            seconds = time.perf_counter() - started
            done.set()
            sampler.join()
        if len(answer) != 2:
            raise WarmJobError(f"the warm job {' '.join(self.command)} answered {answer!r}: see {self.log_path}")
        cpu = self._cpu_seconds() - cpu_before
        return StepResult(self.command, seconds, peak, int(answer[1]), str(self.log_path), cpu_seconds=cpu)

    def close(self) -> int:
        """End the job (stdin closed: it stops Spark and exits; what it still prints is drained); its exit status."""
        self._child.communicate()
        self._log.close()
        return self._child.returncode


def _answer(stdout: IO[str]) -> list[str]:
    """The job's ``done <status>`` line; other lines (anything else the JVM printed) are passed over."""
    for line in stdout:
        words = line.split()
        if words[:1] == [DONE]:
            return words
    return []  # the job ended


def job_arguments(description: str, argv: list[str] | None) -> argparse.Namespace:
    """A contender job's command line: one wave's spec file (``spec``), or :data:`SERVE_FLAG` to serve a spec path a
    line on stdin (:func:`serve`).

    Raises:
        SystemExit: neither was given (argparse's usage error).
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("spec", type=Path, nargs="?")
    parser.add_argument(SERVE_FLAG, action="store_true", help="serve one spec path a line on stdin (bench.warm_jvm)")
    options = parser.parse_args(argv)
    if options.spec is None and not options.serve:
        parser.error("a spec file, or --serve")
    return options


def serve(run_wave: Callable[[Path], int], lines: IO[str] = sys.stdin, out: IO[str] = sys.stdout) -> int:
    """The job side: one spec path a line, ``run_wave(path)`` (its exit status) then ``done <status>``; 0 at the
    end of input. An error in a wave is the wave's failure (status 1, its trace in the log), not the job's end."""
    for line in lines:
        path = Path(line.strip())
        try:
            status = run_wave(path)
        except Exception:  # noqa: BLE001 - reported as the wave's failure; the next wave still runs
            import traceback

            traceback.print_exc()
            status = 1
        out.write(f"{DONE} {status}\n")
        out.flush()
    return 0
