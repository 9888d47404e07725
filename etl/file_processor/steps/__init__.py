"""The steps of one File Processor table run, in order, over one run context (etl.file_processor.run_context):
plan, reconcile, read, apply, record (the way HoodieStreamer's StreamSync reads a sync: source, transform, write,
commit, meta sync). A new feature of the table run is one step in :data:`TABLE_RUN_STEPS`, not one more visit to
the others.

A step reads what the steps before it left in the context and leaves what it found. It answers :attr:`Then.NEXT`,
or :attr:`Then.READ_AGAIN` when it set a file aside after the files were read (the write refused a change before
writing anything): the run goes back to the first step that reads the input, without that file.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from etl.file_processor.run_context import TableRunContext, Then
from etl.file_processor.steps.apply import apply_changes
from etl.file_processor.steps.plan import plan_run
from etl.file_processor.steps.read import read_changes_of_plan
from etl.file_processor.steps.reconcile import reconcile_consumed
from etl.file_processor.steps.record import record_applied


@dataclass(frozen=True)
class Step:
    """One step: its name (in logs), what it does, and whether it reads the plan's files (where READ_AGAIN goes)."""

    name: str
    run: Callable[[TableRunContext], Then]
    reads_input: bool = False


TABLE_RUN_STEPS: tuple[Step, ...] = (
    Step("plan", plan_run),
    Step("reconcile", reconcile_consumed),
    Step("read", read_changes_of_plan, reads_input=True),
    Step("apply", apply_changes),
    Step("record", record_applied),
)


def run_steps(run: TableRunContext, steps: Sequence[Step] = TABLE_RUN_STEPS) -> None:
    """Each step in order, its seconds added to the run's (``TableRunContext.step_seconds``); a step that set a file
    aside after the read sends the run back to the read."""
    position = 0
    while position < len(steps):
        step, started = steps[position], time.monotonic()
        then = step.run(run)
        run.add_seconds(step.name, time.monotonic() - started)
        if then is Then.READ_AGAIN:
            position = next(i for i, candidate in enumerate(steps) if candidate.reads_input)
        else:
            position += 1
