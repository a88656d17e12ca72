"""Reading an instant a caller typed (the `as_of` of the REST views, the `since`/`until` of a time window):
every RFC 3339 date-time (lower-case t and z, a leap second :60, more than six fraction digits) and date, and
the ISO 8601 forms Python reads; no offset means UTC. Pure: the callers turn a ValueError into their 400."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

INSTANT_MAX = 64  # characters
LEAP_SECOND = re.compile(r"^(.{10}T\d\d:\d\d:)60")
LONG_FRACTION = re.compile(r"(\.\d{6})\d+")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def read(value: object) -> datetime:
    """An aware UTC datetime, or ValueError. Instants before year 1 or after 9999 in UTC (an offset at the very
    ends of the calendar) are read as the first or last instant there is."""
    text = value.strip().upper() if isinstance(value, str) else ""
    if not text or len(text) > INSTANT_MAX:
        raise ValueError(text)
    leap = LEAP_SECOND.match(text)
    parsed = datetime.fromisoformat(LONG_FRACTION.sub(r"\1", LEAP_SECOND.sub(r"\g<1>59", text)))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    try:
        return parsed.astimezone(timezone.utc) + (timedelta(seconds=1) if leap else timedelta(0))
    except OverflowError:
        return (datetime.min if parsed.year == 1 else datetime.max).replace(tzinfo=timezone.utc)


def is_date(value: str) -> bool:
    """Whether the text is a calendar date alone (2026-11-01), which a window reads as that whole UTC day."""
    return bool(DATE.match(value.strip()))
