"""The time window's rule (service.domain.window), pure: the forms each end takes, what a date means at either
end, durations back from a given now, and the refusals."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from service.domain import window
from service.errors import InvalidInput

NOW = datetime(2026, 12, 2, 10, 0, tzinfo=timezone.utc)
UTC = timezone.utc


@pytest.mark.parametrize(("since", "expected"), [
    ("2026-11-01T09:00:00Z", datetime(2026, 11, 1, 9, tzinfo=UTC)),
    ("2026-11-01t09:00:00z", datetime(2026, 11, 1, 9, tzinfo=UTC)),
    ("2026-11-01T11:00:00+02:00", datetime(2026, 11, 1, 9, tzinfo=UTC)),
    ("2026-11-01T09:00:00", datetime(2026, 11, 1, 9, tzinfo=UTC)),  # no offset: UTC
    ("2026-11-01 09:00:00.5Z", datetime(2026, 11, 1, 9, 0, 0, 500000, tzinfo=UTC)),
    ("2026-11-01", datetime(2026, 11, 1, tzinfo=UTC)),  # a date: from its first instant
    (" 7d ", NOW - timedelta(days=7)), ("24h", NOW - timedelta(hours=24)), ("2w", NOW - timedelta(weeks=2)),
    ("30m", NOW - timedelta(minutes=30)), ("0d", NOW), ("7D", NOW - timedelta(days=7)),
    ("9999999w", window.EARLIEST),  # before the calendar's start: excludes nothing
])
def test_each_form_of_since(since: str, expected: datetime) -> None:
    assert window.parse(since, None, now=NOW) == window.Window(expected, None)


def test_a_date_as_until_is_that_whole_day() -> None:
    assert window.parse(None, "2026-11-01", now=NOW).until == datetime(2026, 11, 1, 23, 59, 59, 999999, tzinfo=UTC)
    assert window.parse(None, "9999-12-31", now=NOW).until == datetime.max.replace(tzinfo=UTC)
    day = window.parse("2026-11-01", "2026-11-01", now=NOW)
    assert day.holds(datetime(2026, 11, 1, tzinfo=UTC)) and day.holds(datetime(2026, 11, 1, 23, 59, 59, tzinfo=UTC))
    assert not day.holds(datetime(2026, 11, 2, tzinfo=UTC)) and not day.holds(datetime(2026, 10, 31, 23, tzinfo=UTC))


def test_no_window_is_any() -> None:
    assert window.parse(None, None) is window.ANY and not window.ANY
    assert window.ANY.holds(datetime.min.replace(tzinfo=UTC)) and window.ANY.holds(NOW)


@pytest.mark.parametrize(("since", "until", "param", "words"), [
    ("last week", None, "since", "since must be an ISO 8601 date or date-time"),
    ("", None, "since", "since must be"),
    (None, "-3d", "until", "until must be"),
    (None, "3 days", "until", "until must be"),
    (None, "2026-13-01", "until", "until must be"),
    (None, "12345678d", "until", "until must be"),  # at most 7 digits
    ("x" * 65, None, "since", "since must be"),
    (None, 5, "until", "until must be"),  # not a string (REST and MCP send strings; a caller in code may not)
    ("2026-11-02", "2026-11-01", "since", "is after until"),
    ("1d", "2d", "since", "is after until"),
])
def test_refused(since: object, until: object, param: str, words: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        window.parse(since, until, now=NOW)
    assert refused.value.param == param and words in str(refused.value)


def test_micros_is_exact_across_the_calendar() -> None:
    for at in [datetime.min.replace(tzinfo=UTC), datetime.max.replace(tzinfo=UTC), NOW,
               datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)]:
        assert window.EPOCH + timedelta(microseconds=window.micros(at)) == at
