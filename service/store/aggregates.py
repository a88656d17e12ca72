"""SQL aggregations for the query-log summary and the store's stats: GROUP BYs in the database, never a
scan of rows in Python, so they stay fast on a large log. Windows are whole UTC days [first, last]."""

from __future__ import annotations

from datetime import date
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col

from service.contract import MATCH_BUCKETS, TOP_N
from service.domain.ports.canonical import COUNTERS  # the counters the port names
from service.store.tables import FactRow, FactTag, QueryLogRow, QueryLogTag



def _name_order(session: Session, column: Any) -> Any:
    """Byte-wise ascending order on both databases (PostgreSQL's default collation is locale-aware)."""
    if session.get_bind().dialect.name == "postgresql":
        return sa.collate(column, "C").asc()
    return column.asc()


def _log_window(profile_id: int, first: date, last: date) -> list[sa.ColumnElement[bool]]:
    day = col(QueryLogRow.day)
    return [col(QueryLogRow.profile_id) == profile_id, day >= first, day <= last]




def _in_bucket(column: Any, low: int, high: int | None) -> Any:
    if high is None:
        return column >= low
    return column == low if low == high else sa.and_(column >= low, column <= high)


def summary_by_day(session: Session, profile_id: int, first: date, last: date) -> dict[date, dict[str, int]]:
    """Every counter of the summary per day, in one pass over the covering index (profile_id, day,
    matched_count, inactive_matched); window totals are the sums of the days."""
    mc, day = col(QueryLogRow.matched_count), col(QueryLogRow.day)

    def count_if(condition: Any) -> Any:
        return sa.func.coalesce(sa.func.sum(sa.case((condition, 1), else_=0)), 0)

    rows = session.execute(
        sa.select(
            day,
            sa.func.count(),
            count_if(mc == 0),
            count_if(mc.is_(None)),
            *(count_if(_in_bucket(mc, low, high)) for _, low, high in MATCH_BUCKETS[1:]),
            count_if(sa.and_(mc == 0, col(QueryLogRow.inactive_matched) > 0)),
        )
        .where(*_log_window(profile_id, first, last))
        .group_by(day)
    ).all()
    return {_as_date(row[0]): dict(zip(COUNTERS, (int(v) for v in row[1:]))) for row in rows}


def top_queries(session: Session, profile_id: int, first: date, last: date) -> tuple[list[tuple[str, int, int]], int]:
    """The most frequent queries (with their misses) and, from the same grouping, the exact number of
    distinct queries in the window (a window count over the groups, cheaper than COUNT(DISTINCT))."""
    count = sa.func.count().label("n")
    query = col(QueryLogRow.query)
    zero = sa.func.coalesce(sa.func.sum(sa.case((col(QueryLogRow.matched_count) == 0, 1), else_=0)), 0)
    distinct = sa.func.count().over().label("distinct_queries")
    rows = session.execute(
        sa.select(query, count, zero, distinct)
        .where(*_log_window(profile_id, first, last))
        .group_by(query)
        .order_by(count.desc(), _name_order(session, query))
        .limit(TOP_N)
    ).all()
    return [(str(q), int(n), int(z)) for q, n, z, _ in rows], int(rows[0][3]) if rows else 0


def top_query_tags(session: Session, profile_id: int, first: date, last: date) -> list[tuple[str, int]]:
    count = sa.func.count().label("n")
    tag, day = col(QueryLogTag.tag), col(QueryLogTag.day)
    rows = session.execute(
        sa.select(tag, count)
        .where(col(QueryLogTag.profile_id) == profile_id, day >= first, day <= last)
        .group_by(tag)
        .order_by(count.desc(), _name_order(session, tag))
        .limit(TOP_N)
    ).all()
    return [(str(t), int(n)) for t, n in rows]


def top_facts(session: Session, profile_id: int, first: date, last: date) -> list[tuple[str, int, str]]:
    """Facts that were the best hit most often in the window, with their current title, in
    service.domain.reports.top_fact_order (ties by title, then uid). A uid no fact row holds has the empty
    title."""
    count = sa.func.count().label("n")
    top_uid = col(QueryLogRow.top_uid)
    groups = (
        sa.select(top_uid.label("uid"), count)
        .where(*_log_window(profile_id, first, last), top_uid.is_not(None))
        .group_by(top_uid)
        .subquery()
    )
    title = sa.func.coalesce(col(FactRow.title), "")
    rows = session.execute(
        sa.select(groups.c.uid, groups.c.n, title)
        .join(FactRow, sa.and_(col(FactRow.uid) == groups.c.uid, col(FactRow.profile_id) == profile_id),
              isouter=True)
        .order_by(groups.c.n.desc(), _name_order(session, title), _name_order(session, groups.c.uid))
        .limit(TOP_N)
    ).all()
    return [(str(u), int(n), str(t)) for u, n, t in rows]


# --- stats ---------------------------------------------------------------------------------------


def fact_counts(session: Session, profile_id: int) -> dict[tuple[str, str], int]:
    """(status, kind) -> count, over every fact of the profile."""
    status, kind = col(FactRow.status), col(FactRow.kind)
    rows = session.execute(
        sa.select(status, kind, sa.func.count())
        .where(col(FactRow.profile_id) == profile_id)
        .group_by(status, kind)
    ).all()
    return {(str(s), str(k)): int(n) for s, k, n in rows}


def top_fact_tags(session: Session, profile_id: int) -> list[tuple[str, int]]:
    count = sa.func.count().label("n")
    tag = col(FactTag.tag)
    rows = session.execute(
        sa.select(tag, count)
        .where(col(FactTag.profile_id) == profile_id, col(FactTag.active).is_(True))
        .group_by(tag)
        .order_by(count.desc(), _name_order(session, tag))
        .limit(TOP_N)
    ).all()
    return [(str(t), int(n)) for t, n in rows]


def facts_daily(session: Session, profile_id: int, first: date, last: date) -> dict[date, tuple[int, int]]:
    profile, created_day, retired_day = col(FactRow.profile_id), col(FactRow.created_day), col(FactRow.retired_day)
    created = session.execute(
        sa.select(created_day, sa.func.count())
        .where(profile == profile_id, created_day >= first, created_day <= last)
        .group_by(created_day)
    ).all()
    retired = session.execute(
        sa.select(retired_day, sa.func.count())
        .where(profile == profile_id, retired_day >= first, retired_day <= last)
        .group_by(retired_day)
    ).all()
    out: dict[date, tuple[int, int]] = {}
    for d, n in created:
        out[_as_date(d)] = (int(n), 0)
    for d, n in retired:
        c, _ = out.get(_as_date(d), (0, 0))
        out[_as_date(d)] = (c, int(n))
    return out


def fact_span(session: Session, profile_id: int) -> Any:
    return session.execute(
        sa.select(sa.func.min(FactRow.created_at), sa.func.max(FactRow.created_at)).where(
            col(FactRow.profile_id) == profile_id
        )
    ).one()


def _as_date(value: Any) -> date:
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value)[:10])
