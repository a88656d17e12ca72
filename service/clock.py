"""Time in one place: aware UTC datetimes, ISO 8601 with offset."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def today() -> date:
    return utcnow().date()


def isoformat(value: datetime | None) -> str | None:
    """`2026-11-22T07:30:00.123456+00:00` (always with microseconds and UTC offset), or None."""
    if value is None:
        return None
    return value.astimezone(timezone.utc).isoformat(timespec="microseconds")


def window(days: int, *, end: date | None = None) -> tuple[date, date]:
    """The calendar-day window [to - (days - 1), to] in UTC, `to` being today by default."""
    last = end or today()
    return last - timedelta(days=days - 1), last


def day_of(value: datetime) -> date:
    """The UTC calendar day of an aware datetime."""
    return value.astimezone(timezone.utc).date()
