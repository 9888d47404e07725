"""The warm writer's tick loop (pure): when the next tick is, and when a long-lived run stops.

A warm cadence (``mode: warm``, docs/decisions/032) runs as one long-lived Glue run that keeps its JVM and runs every
tick itself (etl/file_processor/warm.py). This module decides, from a clock and what the run reads before each tick,
whether to run the tick or to stop; it knows nothing of Spark or AWS, and tests drive it with a fake clock.

A run stops, finishing its tick first (its leases released, its commits recorded), when:
- its lifetime is up: the next tick would end past ``job_timeout_minutes`` less :data:`STOP_MARGIN_SECONDS`, so Glue's
  timeout never kills a tick and a fresh run picks up new code at least that often;
- the deployment changed: the version it watches (the Glue job's ``LastModifiedOn``, which every update of the job
  definition changes, with the cadence's batch_config item, which the Configuration Manager rewrites at deploy)
  differs from the one it started with;
- a stop was requested (SIGTERM: ``glue:BatchStopJobRun``, or a test's flag).
The cadence's schedule starts a new run when none is running (the job allows one run at a time), so a run that
stops, fails or is killed is followed by a fresh one within a tick; its leftover leases are recovered as in a
scheduled run (a lease of an ended job run is not held).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

# Room left before the Glue job timeout once the last tick has had a whole interval: the run's own shutdown (Spark
# stop, logs flushed) and a tick that overran its interval a little.
STOP_MARGIN_SECONDS = 300.0
MIN_TICKS_PER_RUN = 2  # below this a warm run restarts as often as it ticks: that is a scheduled cadence


class StopReason(StrEnum):
    """Why a warm run ended."""

    LIFETIME = "lifetime"  # the next tick would pass the run's lifetime
    DEPLOYED = "deployed"  # the job definition or the cadence's settings changed
    STOP_REQUESTED = "stop_requested"  # SIGTERM (a stop of the job run) or the caller's flag
    TICKS_DONE = "ticks_done"  # the caller's tick limit (the sandbox's and the bench's --warm-ticks)


def warm_lifetime_seconds(job_timeout_minutes: float, tick_seconds: float) -> float:
    """How long a warm run may start ticks: the Glue job timeout less :data:`STOP_MARGIN_SECONDS`.

    Raises:
        ValueError: the lifetime holds fewer than :data:`MIN_TICKS_PER_RUN` ticks, naming the timeout it needs.
    """
    if tick_seconds <= 0:
        raise ValueError(f"a warm cadence needs a positive tick, not {tick_seconds} s")
    lifetime = job_timeout_minutes * 60 - STOP_MARGIN_SECONDS
    if lifetime < MIN_TICKS_PER_RUN * tick_seconds:
        needed = math.ceil((MIN_TICKS_PER_RUN * tick_seconds + STOP_MARGIN_SECONDS) / 60)
        raise ValueError(
            f"job_timeout_minutes {job_timeout_minutes:g} leaves a warm run fewer than {MIN_TICKS_PER_RUN} ticks of "
            f"{tick_seconds / 60:g} minutes (it stops {STOP_MARGIN_SECONDS / 60:g} minutes before the timeout): "
            f"set job_timeout_minutes to at least {needed}"
        )
    return lifetime


def next_tick_at(started: float, now: float, tick_seconds: float) -> float:
    """The next tick's time: the first slot ``started + k * tick_seconds`` after ``now``. A tick that overran its
    interval skips the slots it covered (as the scheduled cadence's overlap guard skips a tick), so ticks never pile
    up and never drift."""
    return started + (math.floor((now - started) / tick_seconds) + 1) * tick_seconds


@dataclass(frozen=True)
class Watch:
    """What the run reads before each tick: the deployment's version and whether a stop was requested."""

    version: str
    stop_requested: bool = False


def stop_reason(
    *, started: float, tick_at: float, tick_seconds: float, lifetime_seconds: float, first: Watch, now: Watch
) -> StopReason | None:
    """Why the run stops instead of running the tick due at ``tick_at``, or ``None`` to run it. A tick is started
    only if a whole interval after it still falls within the lifetime."""
    if now.stop_requested:
        return StopReason.STOP_REQUESTED
    if now.version != first.version:
        return StopReason.DEPLOYED
    if tick_at + tick_seconds > started + lifetime_seconds:
        return StopReason.LIFETIME
    return None


@dataclass(frozen=True)
class WarmEnd:
    """How a warm run ended: the ticks it ran and why it stopped."""

    ticks: int
    reason: StopReason


def run_ticks(
    tick: Callable[[int], None],
    watch: Callable[[], Watch],
    *,
    tick_seconds: float,
    lifetime_seconds: float,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    max_ticks: int | None = None,
) -> WarmEnd:
    """Run ``tick(n)`` at ``started + n * tick_seconds`` (n = 0, 1, ...) until :func:`stop_reason` says stop or
    ``max_ticks`` ran. ``watch`` is read before each tick (the first read is the version the run compares with);
    ``sleep`` waits until the next tick (a stop request may end the wait early: the watch then says so). An error
    raised by ``tick`` ends the run with it: the job run fails, and the schedule starts the next one.
    """
    started = clock()
    first = watch()
    ticks, tick_at, current = 0, started, first
    while True:
        reason = stop_reason(
            started=started,
            tick_at=tick_at,
            tick_seconds=tick_seconds,
            lifetime_seconds=lifetime_seconds,
            first=first,
            now=current,
        )
        if reason is not None:
            return WarmEnd(ticks, reason)
        tick(ticks)
        ticks += 1
        if max_ticks is not None and ticks >= max_ticks:
            return WarmEnd(ticks, StopReason.TICKS_DONE)
        tick_at = next_tick_at(started, clock(), tick_seconds)
        if tick_at + tick_seconds <= started + lifetime_seconds:
            sleep(max(0.0, tick_at - clock()))
        current = watch()
