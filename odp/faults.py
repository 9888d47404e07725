"""Named fault points: where a crash test kills the process for real (SIGKILL), never a simulated error.

A state-changing step calls ``fault_point("<area>.<step>")``. When the environment variable
``ODP_FAULT_POINT`` names that point (or lists it, comma-separated), the process kills itself with
SIGKILL on the spot: its whole process group when it leads one (the local Spark JVM dies with it, as
a Glue worker or a laptop would), else itself. No cleanup, no ``finally``, no atexit runs: exactly a
``kill -9``. Unset, a fault point costs one dictionary lookup. tests/e2e/kill_harness.py runs a
command as a child with the variable set (or kills it from outside when a condition appears).
"""

from __future__ import annotations

import os
import signal

FAULT_POINT_VARIABLE = "ODP_FAULT_POINT"


def armed_points() -> frozenset[str]:
    """The fault points named by ``ODP_FAULT_POINT`` in this process."""
    value = os.environ.get(FAULT_POINT_VARIABLE, "")
    return frozenset(name.strip() for name in value.split(",") if name.strip())


def fault_point(name: str) -> None:
    """SIGKILL this process (its process group when it leads one) if ``ODP_FAULT_POINT`` names ``name``."""
    if name not in armed_points():
        return
    if os.getpgrp() == os.getpid():
        os.killpg(os.getpgrp(), signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)
