"""Recall counts (table fact_recalls): how many logged searches returned each fact, and the last time one did.

count() runs in the transaction that logs a search, so the counts are the query log's own (migration 0009
filled them from the log written before). The rest reads them for REST's fact bodies and the curation
listings (`?recalled=never`, `order=recalled`), in one indexed join rather than a pass over the log's results.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session

from service.store.tables import FactRecall, FactRow, table_of

_RECALLS = table_of(FactRecall)


def _upsert(dialect: str) -> Any:
    insert = (postgresql.insert if dialect == "postgresql" else sqlite.insert)(_RECALLS)
    later = sa.case((insert.excluded.last_recalled_at > _RECALLS.c.last_recalled_at, insert.excluded.last_recalled_at),
                    else_=_RECALLS.c.last_recalled_at)  # an imported old search does not move it back
    return insert.on_conflict_do_update(index_elements=["uid"], set_={
        "recalled_count": _RECALLS.c.recalled_count + 1, "last_recalled_at": later},
        where=_RECALLS.c.profile_id == insert.excluded.profile_id)  # an imported log's stray uid: no other profile's


_UPSERTS = {name: _upsert(name) for name in ("sqlite", "postgresql")}


def count(conn: sa.Connection | Session, profile_id: int, uids: Iterable[str], at: datetime) -> None:
    """One more recall of each uid (each once, however often listed), at `at`. Sorted: concurrent searches
    returning the same facts lock their rows in one order (no deadlock on PostgreSQL)."""
    distinct = sorted(set(uids))
    if not distinct:
        return
    dialect = (conn.get_bind() if isinstance(conn, Session) else conn).dialect.name
    conn.execute(_UPSERTS[dialect], [
        {"uid": uid, "profile_id": profile_id, "recalled_count": 1, "last_recalled_at": at} for uid in distinct])


_OF = sa.select(_RECALLS.c.uid, _RECALLS.c.recalled_count, _RECALLS.c.last_recalled_at).where(
    _RECALLS.c.profile_id == sa.bindparam("profile_id"), _RECALLS.c.uid.in_(sa.bindparam("uids", expanding=True)))


def of(conn: sa.Connection | Session, profile_id: int, uids: Iterable[str]) -> dict[str, tuple[int, datetime]]:
    """uid -> (recalled_count, last_recalled_at) for the uids ever returned (the others are absent)."""
    wanted = sorted(set(uids))
    if not wanted:
        return {}
    rows = conn.execute(_OF, {"profile_id": profile_id, "uids": wanted})
    return {uid: (int(n), at) for uid, n, at in rows}


def fetch(session: Session, stmt: Any, *, recalled: str | None, order: str, before_id: int | None,
          before_recall: tuple[int, int] | None, limit: int) -> list[Any]:
    """Up to `limit` facts of a SELECT of facts, filtered by `recalled` ("never": no logged search returned them;
    "ever": some did), newest first (keyset before_id: the fact the page ends at) or, with order "recalled",
    most recalled first, ties newest first (keyset before_recall: (count, id)). Newest is by created_at, then
    id: an imported fact keeps its created_at under a newer id.

    In recall order the recalled facts come first, sorted among themselves (an inner join on fact_recalls, so
    only they are sorted), then the never-recalled ones newest first: an index scan by (created_at, id) that
    stops after `limit` rows, however many facts the profile holds (bench/curation.py)."""
    if order != "recalled":
        return _rows(session, _filtered(stmt, recalled), before_id, limit)
    out: list[Any] = []
    if recalled != "never" and (before_recall is None or before_recall[0] > 0):
        recalled_first = stmt.join(_RECALLS, _RECALLS.c.uid == _FACT_UID)
        if before_recall is not None:
            count = _RECALLS.c.recalled_count
            recalled_first = recalled_first.where(sa.or_(
                count < before_recall[0], sa.and_(count == before_recall[0], _after(before_recall[1]))))
        out = list(session.exec(recalled_first.order_by(_RECALLS.c.recalled_count.desc(), *_NEWEST)
                                .limit(limit)).all())
    if len(out) < limit and recalled != "ever":
        tail_before = before_recall[1] if before_recall is not None and before_recall[0] == 0 else None
        out += _rows(session, _filtered(stmt, "never"), tail_before, limit - len(out))
    return out


_FACT_ID = table_of(FactRow).c.id
_FACT_UID = table_of(FactRow).c.uid
_FACT_CREATED = table_of(FactRow).c.created_at
_NEWEST = (_FACT_CREATED.desc(), _FACT_ID.desc())


def _after(fact_id: int) -> Any:
    """The facts after this one in newest-first order: (created_at, id) below its own (a row-value comparison,
    which both databases answer from the (profile_id, [status,] created_at, id) indexes)."""
    created = sa.select(_FACT_CREATED).where(_FACT_ID == fact_id).scalar_subquery()
    return sa.tuple_(_FACT_CREATED, _FACT_ID) < sa.tuple_(created, sa.literal(fact_id))


def _filtered(stmt: Any, recalled: str | None) -> Any:
    if recalled == "never":
        return stmt.where(~sa.exists().where(_RECALLS.c.uid == _FACT_UID))
    if recalled == "ever":
        return stmt.where(sa.exists().where(_RECALLS.c.uid == _FACT_UID))
    return stmt


def _rows(session: Session, stmt: Any, before_id: int | None, limit: int) -> list[Any]:
    if before_id is not None:
        stmt = stmt.where(_after(before_id))
    return list(session.exec(stmt.order_by(*_NEWEST).limit(limit)).all())
