"""The processes of a process group: which are alive, and waiting until none is (a child and the JVM it started)."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path


def living_members(pgid: int) -> list[int]:
    """Processes of group ``pgid`` that have not yet died (a zombie has died; it waits only to be reaped)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):  # the process ended while we looked
            # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so split after the last ")"
            state, _ppid, group = stat.read_text().rpartition(")")[2].split()[:3]
            if int(group) == pgid and state not in ("Z", "X"):
                members.append(int(stat.parent.name))
    return members


def wait_for_group(pgid: int, *, deadline_seconds: float) -> None:
    """Wait until no process of group ``pgid`` is alive.

    Raises:
        RuntimeError: one still is after ``deadline_seconds`` (the message names them).
    """
    started = time.monotonic()
    while members := living_members(pgid):
        if time.monotonic() - started > deadline_seconds:
            raise RuntimeError(f"processes {members} of group {pgid} still alive after {deadline_seconds} s")
        time.sleep(0.01)
