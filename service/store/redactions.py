"""Row access for redactions (`memory redact`): the record, and the rows whose words are replaced."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import sqlalchemy as sa
from sqlmodel import Session, col, select

from service.store.tables import FactRedaction, FactRevision, FactRow, FactVector, QueryLogRow

QUERY_PAGE = 2000


def fact_row_any_profile(session: Session, uid: str, *, for_update: bool = False) -> FactRow | None:
    """A fact by uid whatever its profile (uids are unique in the store): the operator names only the uid."""
    stmt = select(FactRow).where(FactRow.uid == uid)
    if for_update:
        stmt = stmt.with_for_update()
    return session.exec(stmt).first()


def record_of(session: Session, fact_id: int) -> FactRedaction | None:
    return session.exec(select(FactRedaction).where(FactRedaction.fact_id == fact_id)).first()


def records_of(session: Session, fact_ids: Iterable[int]) -> dict[int, FactRedaction]:
    wanted = list(dict.fromkeys(fact_ids))
    if not wanted:
        return {}
    rows = session.exec(select(FactRedaction).where(col(FactRedaction.fact_id).in_(wanted))).all()
    return {r.fact_id: r for r in rows}


def mark(session: Session) -> tuple[int, int]:
    """(the newest record's id, searches redacted in all); (0, 0) without any (Redactions.mark)."""
    newest, searches = session.execute(sa.select(sa.func.coalesce(sa.func.max(col(FactRedaction.id)), 0),
                                                 sa.func.coalesce(sa.func.sum(col(FactRedaction.queries)), 0))).one()
    return int(newest), int(searches)


def revision_rows(session: Session, fact_id: int) -> list[FactRevision]:
    return list(session.exec(select(FactRevision).where(FactRevision.fact_id == fact_id)
                             .order_by(col(FactRevision.revision))).all())


def drop_vector(session: Session, fact_id: int) -> bool:
    """The fact's embedding is removed (derived from the words being redacted; the one row ever deleted)."""
    result = session.exec(sa.delete(FactVector).where(col(FactVector.fact_id) == fact_id))  # a CursorResult
    return bool(result.rowcount)


def query_texts(session: Session, profile_id: int) -> Iterator[tuple[int, str]]:
    """(id, query) of every query-log row of the profile, in id order, a page at a time."""
    after = 0
    while True:
        rows = session.execute(
            sa.select(col(QueryLogRow.id), col(QueryLogRow.query))
            .where(col(QueryLogRow.profile_id) == profile_id, col(QueryLogRow.id) > after)
            .order_by(col(QueryLogRow.id)).limit(QUERY_PAGE)
        ).all()
        if not rows:
            return
        for row_id, query in rows:
            yield int(row_id), str(query)
        after = int(rows[-1][0])


def query_rows(session: Session, ids: list[int]) -> list[QueryLogRow]:
    out: list[QueryLogRow] = []
    for start in range(0, len(ids), 500):
        out.extend(session.exec(select(QueryLogRow).where(col(QueryLogRow.id).in_(ids[start:start + 500]))).all())
    return out
