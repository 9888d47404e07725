"""The table run's step list (etl.file_processor.steps): the steps run in order over one context, and a step that
set a file aside after the read sends the run back to the first step that reads the input, not to the start."""

from __future__ import annotations

from typing import Any

import pytest

from etl.file_processor import steps as steps_module
from etl.file_processor.run_context import StepOrderError, TableRunContext, Then
from etl.file_processor.steps import TABLE_RUN_STEPS, Step, run_steps


def _recording(name: str, seen: list[str], answers: list[Then] | None = None) -> Step:
    def run(_: Any) -> Then:
        seen.append(name)
        return answers.pop(0) if answers else Then.NEXT

    return Step(name, run, reads_input=name == "read")


def _context() -> TableRunContext:
    """A run context with nothing set but the step seconds run_steps adds to."""
    context = TableRunContext.__new__(TableRunContext)
    context.step_seconds = {}
    return context


def test_the_steps_run_in_order_and_read_again_returns_to_the_read() -> None:
    seen: list[str] = []
    steps = [
        _recording("plan", seen),
        _recording("read", seen),
        _recording("apply", seen, [Then.READ_AGAIN, Then.NEXT]),  # the write refused one file's change, once
        _recording("record", seen),
    ]
    run_steps(_context(), steps)  # the steps here read nothing of it
    assert seen == ["plan", "read", "apply", "read", "apply", "record"]


def test_each_steps_seconds_are_recorded_and_a_step_run_twice_adds_both(monkeypatch: pytest.MonkeyPatch) -> None:
    ticks = iter(range(100))  # a clock that moves one second each time it is read
    monkeypatch.setattr(steps_module.time, "monotonic", lambda: float(next(ticks)))
    context = _context()
    seen: list[str] = []
    steps = [
        _recording("read", seen),
        _recording("apply", seen, [Then.READ_AGAIN, Then.NEXT]),
        _recording("record", seen),
    ]
    run_steps(context, steps)
    assert seen == ["read", "apply", "read", "apply", "record"]
    assert context.step_seconds == {"read": 2.0, "apply": 2.0, "record": 1.0}


def test_the_file_processors_steps_are_plan_reconcile_read_apply_record() -> None:
    assert [step.name for step in TABLE_RUN_STEPS] == ["plan", "reconcile", "read", "apply", "record"]
    assert [step.name for step in TABLE_RUN_STEPS if step.reads_input] == ["read"]


def test_a_step_that_asks_for_the_plan_before_it_was_made_names_the_defect() -> None:
    context = TableRunContext.__new__(TableRunContext)
    context.plan, context.state = None, None
    context.config = type("Config", (), {"table_id": "src.app.t"})()  # type: ignore[assignment]
    with pytest.raises(StepOrderError, match=r"^src\.app\.t: the plan step has not run$"):
        context.planned()
