"""The one fault seam: an action a test installs at a named point runs there, with the point's context."""

from __future__ import annotations

import pytest

from odp.faults import FAULT_POINT_VARIABLE, armed_points, fault_point, on_fault


def test_an_action_runs_at_its_point_only_inside_the_block() -> None:
    seen: list[dict[str, str]] = []
    with on_fault("etl.after_commit", lambda **context: seen.append(context)):
        fault_point("etl.after_commit", table_id="src.app.orders", instant="20260101")
        fault_point("etl.before_commit", table_id="src.app.orders")  # another point: nothing
    fault_point("etl.after_commit", table_id="src.app.orders", instant="20260102")  # removed: nothing
    assert seen == [{"table_id": "src.app.orders", "instant": "20260101"}]


def test_a_raising_action_is_a_simulated_crash_and_is_removed_after_it() -> None:
    def crash(**context: str) -> None:
        raise RuntimeError(f"crash at {context['table_id']}")

    with pytest.raises(RuntimeError, match="crash at t1"), on_fault("datasets.after_commit", crash):
        fault_point("datasets.after_commit", table_id="t1", instant="1")
    fault_point("datasets.after_commit", table_id="t1", instant="1")


def test_one_action_per_point() -> None:
    with on_fault("streaming.after_commit", lambda **_: None), pytest.raises(ValueError, match="already has"):  # noqa: SIM117
        with on_fault("streaming.after_commit", lambda **_: None):
            pass


def test_armed_points_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FAULT_POINT_VARIABLE, "etl.after_commit, datasets.after_commit ,")
    assert armed_points() == frozenset({"etl.after_commit", "datasets.after_commit"})
