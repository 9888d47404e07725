"""Run one contender step as a child process: wall time, peak memory and CPU time of its process tree, exit code.

Memory is the sum of VmRSS over the child and all its descendants (spark-submit starts a JVM under
a shell, pyspark starts one under Python), sampled from /proc every ``interval`` seconds. CPU time is
the sum over the same processes of user + system time, each process's last sample (so at most the
last ``interval`` of each process is not counted): divided by wall time x cores it says how busy the
step kept the machine.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from odp.contracts.spark import LOCAL_JVM_OPTIONS_ENV

PROC = Path("/proc")
# ODP's local JVM options (the class data archive the Makefile exports, docs/decisions/023) would start ODP's JVM
# cheaper than the other contenders' plain spark-submit, and cheaper than Glue starts it: a benchmark drops them,
# unless it is a test's smoke run (tests/support/jvm_options.py sets KEEP_LOCAL_JVM_OPTIONS_ENV), which measures
# nothing.
KEEP_LOCAL_JVM_OPTIONS_ENV = "ODP_BENCH_KEEP_LOCAL_JVM_OPTIONS"


def level_jvm_options() -> None:
    """Every contender's JVM starts alike: drop ``ODP_LOCAL_JVM_OPTIONS`` from this process's environment (its
    children inherit it), unless ``ODP_BENCH_KEEP_LOCAL_JVM_OPTIONS`` is set."""
    if not os.environ.get(KEEP_LOCAL_JVM_OPTIONS_ENV):
        os.environ.pop(LOCAL_JVM_OPTIONS_ENV, None)


@dataclass(frozen=True)
class StepResult:
    """One child process run: what it took and how it ended."""

    command: tuple[str, ...]
    seconds: float
    peak_rss_bytes: int
    returncode: int
    log_path: str
    cpu_seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: the parent id follows the last ")".
        fields = stat[stat.rfind(")") + 2 :].split()
        tree.setdefault(int(fields[1]), []).append(int(entry.name))
    return tree


def _rss_bytes(pid: int) -> int:
    try:
        for line in (PROC / str(pid) / "status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return 0
    return 0


def _cpu_ticks(pid: int) -> int:
    """User + system time of one process in clock ticks (0 when it is gone)."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return 0
    fields = stat[stat.rfind(")") + 2 :].split()
    return int(fields[11]) + int(fields[12])  # utime, stime: fields 14 and 15 of proc(5)


def tree_pids(root: int) -> list[int]:
    """``root`` and every descendant."""
    tree = _children()
    pids, stack = [], [root]
    while stack:
        pid = stack.pop()
        pids.append(pid)
        stack.extend(tree.get(pid, []))
    return pids


def run_step(
    command: list[str],
    *,
    log_path: Path,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    interval: float = 0.25,
    timeout: float | None = None,
) -> StepResult:
    """Run ``command`` to completion, output to ``log_path``; never raises for a failing command.

    Raises:
        subprocess.TimeoutExpired: the command ran longer than ``timeout`` (it is killed first).
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    peak = 0
    cpu_ticks: dict[int, int] = {}  # pid -> its latest user + system ticks
    done = threading.Event()
    with log_path.open("wb") as log:
        started = time.perf_counter()
        child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=cwd)

        def sample() -> None:
            nonlocal peak
            while not done.is_set():
                pids = tree_pids(child.pid)
                peak = max(peak, sum(_rss_bytes(pid) for pid in pids))
                for pid in pids:
                    cpu_ticks[pid] = max(cpu_ticks.get(pid, 0), _cpu_ticks(pid))
                done.wait(interval)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            returncode = child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            raise
        finally:
            seconds = time.perf_counter() - started
            done.set()
            sampler.join()
    cpu_seconds = sum(cpu_ticks.values()) / os.sysconf("SC_CLK_TCK")
    return StepResult(tuple(command), seconds, peak, returncode, str(log_path), cpu_seconds=cpu_seconds)


def child_env(**extra: str) -> dict[str, str]:
    """The current environment plus ``extra`` (small Spark, no pyc files)."""
    env = dict(os.environ)
    env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    env.update(extra)
    return env


def snapshot(root: Path) -> dict[str, tuple[int, float]]:
    """Every file under ``root``: path -> (size, mtime); used to count the files a step wrote."""
    out: dict[str, tuple[int, float]] = {}
    if not root.exists():
        return out
    for dirpath, _, names in os.walk(root):
        for name in names:
            path = os.path.join(dirpath, name)
            try:
                stat = os.stat(path)
            except OSError:
                continue
            out[path] = (stat.st_size, stat.st_mtime)
    return out


def files_written(before: dict[str, tuple[int, float]], after: dict[str, tuple[int, float]]) -> int:
    """Files that are new or changed between two snapshots."""
    return sum(1 for path, state in after.items() if before.get(path) != state)
