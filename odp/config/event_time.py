"""The event-time horizon settings of a table, parsed strictly (pure; the readers apply the horizon).

``event_time_tolerance``: how far past the run's start an event time may be, a whole number and a unit
(``1d``, ``6h``, ``30m``, ``90s``). ``event_time_floor``: the earliest event time accepted, an ISO date or
date-time (no offset = UTC), or none.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

DEFAULT_EVENT_TIME_TOLERANCE = "1d"
_DURATION = re.compile(r"^([0-9]{1,9})([dhms])$")
_UNITS = {"d": "days", "h": "hours", "m": "minutes", "s": "seconds"}


def parse_tolerance(text: str) -> timedelta:
    """``1d`` / ``6h`` / ``30m`` / ``90s`` as a duration.

    Raises:
        ValueError: anything else (``1 day``, ``1.5h``, ``-1d``, ``1w``).
    """
    match = _DURATION.match(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"{text!r} is not a duration: use a whole number and a unit d, h, m or s (1d, 6h, 30m, 90s)")
    return timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})


def parse_floor(text: str) -> datetime:
    """An ISO date or date-time as an aware UTC time (no offset = UTC).

    Raises:
        ValueError: text that is not an ISO date or date-time.
    """
    try:
        moment = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        raise ValueError(f"{text!r} is not an ISO date or date-time (2020-01-01, 2020-01-01T00:00:00Z)") from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
