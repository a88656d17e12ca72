"""The time window of memory_search and the REST facts listing: `since` and `until`, each optional.

A window bounds the time a fact was written or last changed (its `updated_at`: set when it is written, amended,
retired or superseded), both ends inclusive. Each end is
- an ISO 8601 date-time (service.domain.instants: with or without an offset; none means UTC),
- a date alone, which means that whole UTC day (`since` its first instant, `until` its last), or
- a duration back from now: a whole number and a unit, m(inutes), h(ours), d(ays) or w(eeks): `30m`, `24h`,
  `7d`, `2w` (reaching before the calendar's start is fine: that end then excludes nothing).
`since` after `until` is refused (nothing could ever be inside). Both backends filter by the window before
ranking and before the limit (embedded: the row mask; OpenSearch: a range clause inside every sub-query), so
matched_count counts the matches inside the window.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from service import clock
from service.domain import instants
from service.errors import InvalidInput

DURATION = re.compile(r"^(\d{1,7})([mhdw])$")
UNIT_SECONDS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
EARLIEST = datetime.min.replace(tzinfo=timezone.utc)
FORMS = ("an ISO 8601 date or date-time (2026-11-01, 2026-11-01T09:00:00Z, an offset such as +02:00; none means "
         "UTC) or a duration back from now (30m, 24h, 7d, 2w)")


@dataclass(frozen=True)
class Window:
    """Inclusive bounds on a fact's updated_at; None: that side is open."""

    since: datetime | None = None
    until: datetime | None = None

    def __bool__(self) -> bool:
        return self.since is not None or self.until is not None

    def holds(self, at: datetime) -> bool:
        return (self.since is None or at >= self.since) and (self.until is None or at <= self.until)


ANY = Window()
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def micros(at: datetime) -> int:
    """Microseconds since the epoch, exactly (an index compares these; every instant of the calendar fits)."""
    return (at - EPOCH) // timedelta(microseconds=1)


def _end(value: object, param: str, *, now: datetime) -> datetime:
    text = value.strip().lower() if isinstance(value, str) else ""
    duration = DURATION.match(text)
    if duration is not None:
        try:
            return now - timedelta(seconds=int(duration.group(1)) * UNIT_SECONDS[duration.group(2)])
        except OverflowError:
            return EARLIEST
    try:
        at = instants.read(text)
    except ValueError:
        shown = value[:instants.INSTANT_MAX] if isinstance(value, str) else value
        raise InvalidInput(f"{param} must be {FORMS}, got {shown!r}", param=param) from None
    if instants.is_date(text) and param == "until":  # a date is the whole day: until its last instant
        try:
            return at + timedelta(days=1, microseconds=-1)
        except OverflowError:
            return datetime.max.replace(tzinfo=timezone.utc)
    return at


def parse(since: object = None, until: object = None, *, now: datetime | None = None) -> Window:
    """The window the caller asked for (ANY when neither end is given), or a 400 naming the parameter."""
    if since is None and until is None:
        return ANY
    now = now or clock.utcnow()
    window = Window(None if since is None else _end(since, "since", now=now),
                    None if until is None else _end(until, "until", now=now))
    if window.since is not None and window.until is not None and window.since > window.until:
        raise InvalidInput(f"since ({clock.isoformat(window.since)}) is after until "
                           f"({clock.isoformat(window.until)}): no fact can be inside that window", param="since")
    return window
