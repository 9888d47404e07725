"""Named fault points: the one seam where a crash is injected into a job, never a second hook mechanism.

A state-changing step calls ``fault_point("<area>.<step>", **context)``. When the environment variable
``ODP_FAULT_POINT`` names that point (or lists it, comma-separated), the process kills itself with
SIGKILL on the spot: its whole process group when it leads one (the local Spark JVM dies with it, as
a Glue worker or a laptop would), else itself. No cleanup, no ``finally``, no atexit runs: exactly a
``kill -9``. Unset, a fault point costs one dictionary lookup. tests/support/kill_harness.py runs a
command as a child with the variable set (or kills it from outside when a condition appears).

In-process tests install an action at a point instead (:func:`on_fault`): it runs with the point's
context (``table_id``, ``instant``, ...) and may raise (a simulated crash), wait or record.

The write path's points (the README's "Crash safety" table lists the others): ``<job>.before_tombstones`` and
``<job>.before_commit`` (etl.raw_table.writer), ``<job>.after_commit`` (etl.hudi.commit) with ``<job>`` ``etl`` (the
File Processor), ``streaming`` (a micro-batch's table) or ``datasets`` (after commit only);
``etl.after_mark_processed``.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

FAULT_POINT_VARIABLE = "ODP_FAULT_POINT"
FaultAction = Callable[..., None]
_actions: dict[str, FaultAction] = {}


def armed_points() -> frozenset[str]:
    """The fault points named by ``ODP_FAULT_POINT`` in this process."""
    value = os.environ.get(FAULT_POINT_VARIABLE, "")
    return frozenset(name.strip() for name in value.split(",") if name.strip())


def fault_point(name: str, **context: Any) -> None:
    """Run the action a test installed at ``name`` (with ``context``); then SIGKILL this process (its process
    group when it leads one) if ``ODP_FAULT_POINT`` names ``name``.

    Raises:
        whatever the installed action raises (a test's simulated crash).
    """
    action = _actions.get(name)
    if action is not None:
        action(**context)
    if name not in armed_points():
        return
    if os.getpgrp() == os.getpid():
        os.killpg(os.getpgrp(), signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)


@contextmanager
def on_fault(name: str, action: FaultAction) -> Iterator[FaultAction]:
    """Tests: run ``action(**context)`` whenever the fault point ``name`` is reached, inside the block (every
    thread of the process). Yields the action.

    Raises:
        ValueError: an action is installed at ``name`` already.
    """
    if name in _actions:
        raise ValueError(f"fault point {name} already has an action")
    _actions[name] = action
    try:
        yield action
    finally:
        del _actions[name]
