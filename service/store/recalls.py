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

from service.store.tables import FactRecall, FactRow

_RECALLS = FactRecall.__table__  # type: ignore[attr-defined]


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


def ordered(stmt: Any, *, recalled: str | None, order: str, before_id: int | None,
            before_recall: tuple[int, int] | None) -> Any:
    """A SELECT of facts filtered by `recalled` ("never": no logged search returned them; "ever": some did),
    ordered newest first (keyset before_id) or, with order "recalled", most recalled first, ties newest first
    (keyset before_recall: (count, id))."""
    fact_id = FactRow.__table__.c.id  # type: ignore[attr-defined]
    if recalled or order == "recalled":
        stmt = stmt.outerjoin(_RECALLS, _RECALLS.c.uid == FactRow.__table__.c.uid)  # type: ignore[attr-defined]
    if recalled == "never":
        stmt = stmt.where(_RECALLS.c.uid.is_(None))
    elif recalled == "ever":
        stmt = stmt.where(_RECALLS.c.uid.is_not(None))
    if order == "recalled":
        count = sa.func.coalesce(_RECALLS.c.recalled_count, 0)
        if before_recall is not None:
            stmt = stmt.where(sa.or_(count < before_recall[0],
                                     sa.and_(count == before_recall[0], fact_id < before_recall[1])))
        return stmt.order_by(count.desc(), fact_id.desc())
    if before_id is not None:
        stmt = stmt.where(fact_id < before_id)
    return stmt.order_by(fact_id.desc())
