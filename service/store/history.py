"""Row access for "memory as of a date": the facts that existed at an instant, and their revisions.

A fact's life is read from its own columns: it exists from created_at; a retired fact stopped being active
at retired_at; a superseded fact at updated_at (the supersession sets it, and nothing changes a superseded
row afterwards). Titles, kinds and tags before an in-place amend are in fact_revisions [valid_from, valid_to).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Session, col, select

from service.contract import FactStatus
from service.store import recalls
from service.store.tables import FactRevision, FactRow


def _ended(at: datetime) -> tuple[sa.ColumnElement[bool], sa.ColumnElement[bool]]:
    retired = sa.and_(col(FactRow.status) == FactStatus.RETIRED.value, col(FactRow.retired_at) <= at)
    superseded = sa.and_(col(FactRow.status) == FactStatus.SUPERSEDED.value, col(FactRow.updated_at) <= at)
    return retired, superseded


def facts_at(session: Session, profile_id: int, at: datetime, *, status: str, before_id: int | None,
             limit: int, recalled: str | None = None, order: str = "newest",
             before_recall: tuple[int, int] | None = None) -> list[FactRow]:
    """Facts created at or before `at` whose status then was `status`, newest first (created_at, id), keyset-paged; or
    in recall order, or only those (never) recalled (the counts now: service.store.recalls.fetch)."""
    retired, superseded = _ended(at)
    ended: dict[str, sa.ColumnElement[bool]] = {FactStatus.RETIRED: retired, FactStatus.SUPERSEDED: superseded}
    then = ended.get(status, sa.not_(sa.or_(retired, superseded)))
    stmt = select(FactRow).where(FactRow.profile_id == profile_id, col(FactRow.created_at) <= at, then)
    return recalls.fetch(session, stmt, recalled=recalled, order=order, before_id=before_id,
                         before_recall=before_recall, limit=limit)


def revisions_by_fact(session: Session, fact_ids: Iterable[int]) -> dict[int, list[FactRevision]]:
    wanted = list(dict.fromkeys(fact_ids))
    out: dict[int, list[FactRevision]] = {i: [] for i in wanted}
    for start in range(0, len(wanted), 500):
        rows = session.exec(select(FactRevision).where(col(FactRevision.fact_id).in_(wanted[start:start + 500]))
                            .order_by(col(FactRevision.fact_id), col(FactRevision.revision))).all()
        for row in rows:
            out[row.fact_id].append(row)
    return out
