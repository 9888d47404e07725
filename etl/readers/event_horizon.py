"""The event-time horizon: an event time later than the run's start plus the table's
``event_time_tolerance``, or earlier than its ``event_time_floor``, is refused (it would win against
every genuine later change of its key, or is older than the table accepts). Pure: the JSON parsers
(files and stream) check milliseconds here; the DMS / plain-file reader builds the same message in Spark
(:func:`etl.readers.dms.ordering_of`) from :attr:`EventTimeHorizon.later_text` / ``earlier_text``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from odp.config.event_time import DEFAULT_EVENT_TIME_TOLERANCE, parse_floor, parse_tolerance
from odp.config.models import TableConfig

SHOWN = "%Y-%m-%d %H:%M:%S"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_LAST_MILLIS = int((datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC) - _EPOCH).total_seconds() * 1000) + 999


@dataclass(frozen=True)
class EventTimeHorizon:
    """The accepted event times of one run of one table: up to ``latest``, from ``floor`` (None: no floor)."""

    latest: datetime
    tolerance: str = DEFAULT_EVENT_TIME_TOLERANCE
    floor: datetime | None = None

    @property
    def later_text(self) -> str:
        """What follows ``event time <value>`` when the value is past :attr:`latest`."""
        return f" is later than the horizon {self.latest:{SHOWN}} (run start + event_time_tolerance {self.tolerance})"

    @property
    def earlier_text(self) -> str:
        """What follows ``event time <value>`` when the value is before :attr:`floor`."""
        return f" is earlier than event_time_floor {self.floor:{SHOWN}}" if self.floor else ""


def horizon_of(
    run_start: datetime, tolerance: str = DEFAULT_EVENT_TIME_TOLERANCE, floor: str | None = None
) -> EventTimeHorizon:
    """The horizon of a run that started at ``run_start`` (naive = UTC).

    Raises:
        ValueError: a tolerance or floor that does not parse (the config loader refuses them first).
    """
    start = run_start.replace(tzinfo=UTC) if run_start.tzinfo is None else run_start.astimezone(UTC)
    return EventTimeHorizon(
        latest=start + parse_tolerance(tolerance),
        tolerance=tolerance,
        floor=parse_floor(floor) if floor is not None else None,
    )


def table_horizon(config: TableConfig, run_start: datetime) -> EventTimeHorizon:
    """The horizon of ``config``'s table in a run that started at ``run_start``."""
    return horizon_of(run_start, config.event_time_tolerance, config.event_time_floor)


def shown_millis(millis: int) -> str:
    """Milliseconds since the epoch as ``yyyy-MM-dd HH:mm:ss`` UTC (beyond year 9999: said so)."""
    if millis > _LAST_MILLIS:
        return f"beyond 9999-12-31 23:59:59 ({millis} ms)"
    return f"{_EPOCH + timedelta(milliseconds=millis):{SHOWN}}"


def event_time_problem(event_time: datetime, horizon: EventTimeHorizon) -> str | None:
    """``event time <t> is later than the horizon ...`` / ``... is earlier than event_time_floor ...``, or None."""
    moment = event_time.replace(tzinfo=UTC) if event_time.tzinfo is None else event_time.astimezone(UTC)
    if moment > horizon.latest:
        return f"event time {moment:{SHOWN}}{horizon.later_text}"
    if horizon.floor is not None and moment < horizon.floor:
        return f"event time {moment:{SHOWN}}{horizon.earlier_text}"
    return None


def millis_problem(millis: int, horizon: EventTimeHorizon) -> str | None:
    """:func:`event_time_problem` of an event time in milliseconds since the epoch (any size)."""
    if millis > _LAST_MILLIS:
        return f"event time {shown_millis(millis)}{horizon.later_text}"
    return event_time_problem(_EPOCH + timedelta(milliseconds=millis), horizon)
