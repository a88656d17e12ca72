"""SQL behind the knowledge-gap report: the window's missed searches, aggregated per distinct query text.

Same statements on SQLite and PostgreSQL, each one pass over the window's missed rows through the index
(profile_id, day, matched_count, inactive_matched). The result is bounded: at most `limit` distinct texts (the
most searched; ties by text, byte-wise); the details are read for those texts only.
Sections (a search is in at most one):
- "zero_match": matched_count 0 and no retired/superseded fact matched either (inactive_matched 0 or unknown);
- "retired_only": matched_count 0 and inactive_matched > 0 (summary's retired_only).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import date

import sqlalchemy as sa
from sqlmodel import Session, col, select

from service.domain.gaps import MissedQuery
from service.store import repository as repo
from service.store.aggregates import _name_order
from service.store.engine import Database
from service.store.tables import NEWEST_QUERIES, QueryLogResult, QueryLogRow, QueryLogTag

SECTIONS = ("zero_match", "retired_only")


def _section(name: str) -> sa.ColumnElement[bool]:
    missed, inactive = col(QueryLogRow.matched_count) == 0, col(QueryLogRow.inactive_matched)
    if name == "retired_only":
        return sa.and_(missed, inactive > 0)
    if name == "zero_match":
        return sa.and_(missed, sa.or_(inactive.is_(None), inactive <= 0))
    raise ValueError(f"unknown section {name!r}")


def _window(profile_id: int, first: date, last: date) -> list[sa.ColumnElement[bool]]:
    day = col(QueryLogRow.day)
    return [col(QueryLogRow.profile_id) == profile_id, day >= first, day <= last]


class SqlMissReader:
    """The store side of service.domain.gap_report.MissReader."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.store_name = "postgres" if db.dialect == "postgresql" else db.dialect

    def misses(self, profile_id: int, first: date, last: date, section: str, limit: int
               ) -> tuple[list[MissedQuery], int, int]:
        """(the `limit` most searched missed texts with their details, distinct texts, searches) of a section."""
        where = [*_window(profile_id, first, last), _section(section)]
        with self.db.read() as session:
            n = sa.func.count().label("n")
            query = col(QueryLogRow.query)
            rows = session.execute(
                sa.select(query, n, sa.func.min(QueryLogRow.created_at),
                          sa.func.max(QueryLogRow.created_at), sa.func.count().over(),
                          sa.func.sum(sa.func.count()).over())
                .where(*where)
                .group_by(query)
                .order_by(n.desc(), _name_order(session, query))
                .limit(limit)
            ).all()
            if not rows:
                return [], 0, 0
            distinct, searches = int(rows[0][4]), int(rows[0][5])
            texts = [str(r[0]) for r in rows]
            only: list[sa.ColumnElement[bool]] = [query.in_(texts)] if distinct > len(texts) else []
            kinds = self._kinds(session, where + only)
            tags = self._tags(session, where + only)
            retired = self._retired(session, where + only) if section == "retired_only" else {}
        items = [MissedQuery(query=str(q), count=int(c), first_seen=lo, last_seen=hi,
                             kinds=dict(kinds.get(q, {})), tags=dict(tags.get(q, {})), retired=dict(retired.get(q, {})))
                 for q, c, lo, hi, _, _ in rows]
        return items, distinct, searches

    def _kinds(self, session: Session, where: list[sa.ColumnElement[bool]]) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = defaultdict(dict)
        query, kind_ = col(QueryLogRow.query), col(QueryLogRow.kind)
        for q, kind, n in session.execute(
            sa.select(query, kind_, sa.func.count())
            .where(*where, kind_.is_not(None))
            .group_by(query, kind_)
        ):
            out[str(q)][str(kind)] = int(n)
        return out

    def _tags(self, session: Session, where: list[sa.ColumnElement[bool]]) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = defaultdict(dict)
        query, tag_ = col(QueryLogRow.query), col(QueryLogTag.tag)
        for q, tag, n in session.execute(
            sa.select(query, tag_, sa.func.count())
            .select_from(QueryLogTag)
            .join(QueryLogRow, col(QueryLogRow.id) == QueryLogTag.query_id)
            .where(*where)  # driven from the missed rows (their index), tags found by primary key
            .group_by(query, tag_)
        ):
            out[str(q)][str(tag)] = int(n)
        return out

    def _retired(self, session: Session, where: list[sa.ColumnElement[bool]]) -> dict[str, Counter[str]]:
        """Retired/superseded facts each text's searches matched (from query_log_results.inactive_uids)."""
        out: dict[str, Counter[str]] = defaultdict(Counter)
        for q, uids in session.execute(
            sa.select(col(QueryLogRow.query), col(QueryLogResult.inactive_uids))
            .join(QueryLogResult, col(QueryLogResult.query_id) == QueryLogRow.id)
            .where(*where)
        ):
            out[str(q)].update(set(uids or []))
        return out

    def fact_labels(self, profile_id: int, uids: list[str]) -> dict[str, tuple[str, str]]:
        """uid -> (title now, status now) of the facts that exist in the profile."""
        with self.db.read() as session:
            return {u: (r.title, r.status) for u, r in repo.fact_rows_by_uid(session, profile_id, uids).items()}

    def searches(self, profile_id: int, first: date, last: date, section: str, queries: list[str], limit: int
                 ) -> tuple[list[QueryLogRow], int]:
        """The section's searches of these texts in the window, newest first (at most `limit`), and how many."""
        where = [*_window(profile_id, first, last), _section(section), col(QueryLogRow.query).in_(queries)]
        with self.db.read() as session:
            total = session.execute(sa.select(sa.func.count()).select_from(QueryLogRow).where(*where)).scalar_one()
            rows = session.exec(select(QueryLogRow).where(*where).order_by(*NEWEST_QUERIES).limit(limit))
            return list(rows.all()), int(total)
