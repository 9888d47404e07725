"""odp/warm.py: the warm writer's tick loop, driven by a fake clock (no Spark, no AWS).

Expected tick times and stop points are worked by hand from the named constants: a 10-minute tick (600 s), a
60-minute job timeout, a 5-minute stop margin (STOP_MARGIN_SECONDS = 300): a lifetime of 3,300 s, so ticks at 0, 600,
..., 2,400 (the tick at 3,000 would end at 3,600, past 3,300)."""

from __future__ import annotations

import pytest

from odp.config.models import Cadence
from odp.warm import StopReason, WarmEnd, Watch, next_tick_at, run_ticks, stop_reason, warm_lifetime_seconds


class FakeTime:
    """A clock that moves only when the loop sleeps or a tick works."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def drive(time: FakeTime, *, work: float = 0.0, watches: list[Watch] | None = None, **options: object) -> tuple:
    started_at: list[float] = []
    queue = list(watches or [])

    def tick(number: int) -> None:
        started_at.append(time.now - 1000.0)
        time.now += work

    def watch() -> Watch:
        return queue.pop(0) if queue else Watch("v1")

    settings = {"tick_seconds": 600.0, "lifetime_seconds": 3300.0, "clock": time.clock, "sleep": time.sleep}
    end = run_ticks(tick, watch, **{**settings, **options})  # type: ignore[arg-type]
    return end, started_at


def test_the_lifetime_is_the_timeout_less_the_margin_and_refuses_fewer_than_two_ticks() -> None:
    assert warm_lifetime_seconds(60, 600) == 3300
    assert warm_lifetime_seconds(25, 600) == 1200  # exactly two ticks
    with pytest.raises(ValueError, match="set job_timeout_minutes to at least 25"):
        warm_lifetime_seconds(24, 600)


def test_ticks_run_on_their_slots_until_the_next_would_pass_the_lifetime() -> None:
    end, started_at = drive(FakeTime(), work=90.0)
    assert started_at == [0.0, 600.0, 1200.0, 1800.0, 2400.0]
    assert end == WarmEnd(5, StopReason.LIFETIME)


def test_a_tick_that_overruns_its_interval_skips_the_slots_it_covered() -> None:
    time = FakeTime()
    end, started_at = drive(time, work=700.0)  # each tick takes longer than its interval
    assert started_at == [0.0, 1200.0, 2400.0]
    assert end.reason is StopReason.LIFETIME
    assert next_tick_at(0.0, 1300.0, 600.0) == 1800.0
    assert next_tick_at(0.0, 600.0, 600.0) == 1200.0  # a slot that is now has run: the next one


def test_a_changed_version_stops_the_run_before_its_next_tick() -> None:
    watches = [Watch("v1"), Watch("v1"), Watch("v2")]  # the first is the one the run compares with
    end, started_at = drive(FakeTime(), watches=watches)
    assert started_at == [0.0, 600.0]
    assert end == WarmEnd(2, StopReason.DEPLOYED)


def test_a_stop_request_stops_the_run_and_wins_over_a_deploy() -> None:
    end, started_at = drive(FakeTime(), watches=[Watch("v1"), Watch("v2", stop_requested=True)])
    assert (started_at, end) == ([0.0], WarmEnd(1, StopReason.STOP_REQUESTED))
    assert (
        stop_reason(started=0, tick_at=0, tick_seconds=1, lifetime_seconds=10, first=Watch("a"), now=Watch("a", True))
        is StopReason.STOP_REQUESTED
    )


def test_a_tick_limit_ends_the_run_without_waiting_after_the_last_tick() -> None:
    time = FakeTime()
    end, started_at = drive(time, max_ticks=2)
    assert (started_at, end) == ([0.0, 600.0], WarmEnd(2, StopReason.TICKS_DONE))
    assert time.slept == [600.0]


def test_no_wait_is_spent_when_the_next_tick_would_pass_the_lifetime() -> None:
    time = FakeTime()
    drive(time, work=100.0, lifetime_seconds=1300.0)  # ticks at 0 and 600; one at 1200 would end at 1800
    assert time.slept == [500.0]


def test_an_error_in_a_tick_ends_the_run_with_it() -> None:
    def tick(number: int) -> None:
        raise RuntimeError("DynamoDB throttled the plan")

    with pytest.raises(RuntimeError, match="throttled"):
        run_ticks(tick, lambda: Watch("v"), tick_seconds=1, lifetime_seconds=10, clock=lambda: 0.0, sleep=print)


def test_a_warm_cadence_ships_a_stop_margin_the_model_checks() -> None:
    cadence = Cadence(schedule="rate(10 minutes)", batch_size=5, mode="warm", job_timeout_minutes=25)
    assert cadence.mode == "warm"
    assert Cadence(schedule="rate(10 minutes)", batch_size=5).mode == "scheduled"
