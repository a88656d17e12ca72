"""Row access for the canonical store. Every query that touches profile data filters by profile_id."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, cast

import sqlalchemy as sa
from sqlmodel import Session, SQLModel, col, select

from service.domain.window import ANY, Window
from service.contract import FactStatus
from service.domain.models import Fact
from service.domain.ports.records import to_fact
from service.store import recalls
from service.store.tables import (
    FactRevision,
    FactRow,
    FactTag,
    FactVector,
    Profile,
    QueryLogResult,
    QueryLogRow,
    QueryLogTag,
    Token,
    table_of,
)


# --- profiles and tokens -------------------------------------------------------------------------


def profile_by_name(session: Session, name: str) -> Profile | None:
    return session.exec(select(Profile).where(Profile.name == name)).first()


def profiles(session: Session) -> Sequence[Profile]:
    return session.exec(select(Profile).order_by(col(Profile.name))).all()


# The statements every search (and every authenticated call) runs are built once, with bind parameters:
# building a SELECT costs more than executing it on SQLite (~80 vs ~60 microseconds, bench/floor.py).
_TOKENS, _PROFILES, _FACTS = table_of(Token), table_of(Profile), table_of(FactRow)
_VECTORS = table_of(FactVector)
_TOKEN_CREDENTIAL = (
    sa.select(_TOKENS.c.token_id, _TOKENS.c.token_hash, _TOKENS.c.revoked_at, _PROFILES.c.id.label("profile_id"),
              _PROFILES.c.name.label("profile_name"), _PROFILES.c.created_at.label("profile_created_at"))
    .join(_PROFILES, _PROFILES.c.id == _TOKENS.c.profile_id)
    .where(_TOKENS.c.token_hash == sa.bindparam("token_hash"))
)
_FACT_SEQ = sa.select(_PROFILES.c.fact_seq).where(_PROFILES.c.id == sa.bindparam("profile_id"))
_FACTS_BY_UID = sa.select(_FACTS).where(
    _FACTS.c.profile_id == sa.bindparam("profile_id"), _FACTS.c.uid.in_(sa.bindparam("uids", expanding=True)))
_FACTS_WITH_VECTORS = (
    sa.select(_FACTS, _VECTORS.c.dim.label("vector_dim"), _VECTORS.c.vector.label("vector_bytes"))
    .select_from(_FACTS.outerjoin(_VECTORS, sa.and_(_VECTORS.c.fact_id == _FACTS.c.id,
                                                    _VECTORS.c.model == sa.bindparam("model"))))
    .where(_FACTS.c.profile_id == sa.bindparam("profile_id"), _FACTS.c.id.in_(sa.bindparam("ids", expanding=True)))
)
_FACTS_CHANGED = (
    sa.select(_FACTS.c.id, _FACTS.c.uid, _FACTS.c.title, _FACTS.c.text, _FACTS.c.kind, _FACTS.c.tags,
              _FACTS.c.status, _FACTS.c.created_at, _FACTS.c.updated_at, _FACTS.c.retired_at,
              _FACTS.c.retire_reason, _FACTS.c.supersedes, _FACTS.c.superseded_by, _FACTS.c.redacted_at,
              _FACTS.c.change_seq, _VECTORS.c.model.label("vector_model"), _VECTORS.c.dim.label("vector_dim"),
              _VECTORS.c.vector)
    .select_from(_FACTS.outerjoin(_VECTORS, _VECTORS.c.fact_id == _FACTS.c.id))
    .where(_FACTS.c.profile_id == sa.bindparam("profile_id"), _FACTS.c.change_seq > sa.bindparam("seq"))
    .order_by(_FACTS.c.id)
)
_INSERT_FACT = sa.insert(_FACTS)
_INSERT_FACT_TAG = sa.insert(table_of(FactTag))
_INSERT_VECTOR = sa.insert(_VECTORS)
_INSERT_QUERY = sa.insert(table_of(QueryLogRow))
_INSERT_QUERY_RESULT = sa.insert(table_of(QueryLogResult))
_INSERT_QUERY_TAG = sa.insert(table_of(QueryLogTag))


def token_credential(conn: sa.Connection | Session, token_hash: str) -> sa.Row[Any] | None:
    """The token with this hash and its profile, as one Core row (token_id, token_hash, revoked_at, profile_id,
    profile_name, profile_created_at): the check every authenticated request makes."""
    return conn.execute(_TOKEN_CREDENTIAL, {"token_hash": token_hash}).first()


def fact_seq(conn: sa.Connection | Session, profile_id: int) -> int:
    """The profile's change sequence number (search indexes sync from it)."""
    return int(conn.execute(_FACT_SEQ, {"profile_id": profile_id}).scalar_one())


def tokens_of(session: Session, profile_id: int) -> Sequence[Token]:
    return session.exec(select(Token).where(Token.profile_id == profile_id).order_by(col(Token.id))).all()


def token_by_id(session: Session, token_id: str) -> Token | None:
    return session.exec(select(Token).where(Token.token_id == token_id)).first()


# --- facts -----------------------------------------------------------------------------------------


def fact_row(session: Session, profile_id: int, uid: str, *, for_update: bool = False) -> FactRow | None:
    stmt = select(FactRow).where(FactRow.profile_id == profile_id, FactRow.uid == uid)
    if for_update:
        stmt = stmt.with_for_update()
    return session.exec(stmt).first()


def fact_rows_by_uid(session: Session, profile_id: int, uids: Iterable[str]) -> dict[str, FactRow]:
    wanted = list(dict.fromkeys(uids))
    if not wanted:
        return {}
    rows = session.exec(select(FactRow).where(FactRow.profile_id == profile_id, col(FactRow.uid).in_(wanted))).all()
    return {r.uid: r for r in rows}


def insert_fact(conn: sa.Connection, fields: dict[str, Any], seq: int, vector: dict[str, Any] | None) -> int:
    """A new fact in Core INSERTs (memory_write's transaction, change number `seq` taken by
    service.store.changes): the row with change_seq set, its fact_tags (current; active as the fact is) and
    its vector (model, dim, vector, created_at) when given. Returns the fact's id."""
    profile_id = fields["profile_id"]
    fact_id = _inserted_id(conn.execute(_INSERT_FACT, {**fields, "change_seq": seq}))
    if fields["tags"]:
        active = fields["status"] == FactStatus.ACTIVE
        conn.execute(_INSERT_FACT_TAG, [{"fact_id": fact_id, "tag": tag, "profile_id": profile_id, "current": True,
                                         "active": active} for tag in dict.fromkeys(fields["tags"])])
    if vector is not None:
        conn.execute(_INSERT_VECTOR, {**vector, "fact_id": fact_id, "profile_id": profile_id})
    return fact_id


def _inserted_id(result: sa.Result[Any]) -> int:
    """The id a single-row Core INSERT gave its row. Session.execute types its result a plain Result (an
    INSERT's is a CursorResult), and inserted_primary_key is typed Optional (None: nothing was inserted)."""
    key = cast(sa.CursorResult[Any], result).inserted_primary_key
    assert key is not None
    return int(key[0])


def facts_by_uid(conn: sa.Connection | Session, profile_id: int, uids: Iterable[str]) -> dict[str, Fact]:
    """The facts with these uids (Core rows straight to Fact: what a search hydrates its hits with)."""
    wanted = list(dict.fromkeys(uids))
    if not wanted:
        return {}
    rows = conn.execute(_FACTS_BY_UID, {"profile_id": profile_id, "uids": wanted})
    return {row.uid: to_fact(row) for row in rows}


def facts_with_vectors(conn: sa.Connection, profile_id: int, model: str,
                       ids: Iterable[int]) -> dict[int, tuple[Fact, sa.Row[Any]]]:
    """The facts with these ids, each with its row (whose `vector_dim` / `vector_bytes` are its vector of `model`,
    None when it has none): one statement for what a search's candidates need of the canonical store."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return {}
    rows = conn.execute(_FACTS_WITH_VECTORS, {"profile_id": profile_id, "model": model, "ids": wanted})
    return {int(row.id): (to_fact(row), row) for row in rows}


def fact_rows_by_id(session: Session, profile_id: int, ids: Iterable[int]) -> dict[int, FactRow]:
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return {}
    rows = session.exec(select(FactRow).where(FactRow.profile_id == profile_id, col(FactRow.id).in_(wanted))).all()
    return {r.id: r for r in rows if r.id is not None}


def sync_fact_tags(session: Session, row: FactRow) -> None:
    """Keep fact_tags in step with row.tags and row.status. Rows are flagged, never removed: a tag taken
    off a fact by an in-place amend becomes current=False (its old tag list also survives as a revision)."""
    assert row.id is not None
    existing = {t.tag: t for t in session.exec(select(FactTag).where(FactTag.fact_id == row.id)).all()}
    active = row.status == FactStatus.ACTIVE
    for tag in set(row.tags) | set(existing):
        current = tag in row.tags
        entry = existing.get(tag)
        if entry is None:
            session.add(FactTag(fact_id=row.id, tag=tag, profile_id=row.profile_id, current=True, active=active))
        elif entry.current != current or entry.active != (active and current):
            entry.current, entry.active = current, active and current
            session.add(entry)


def next_revision(session: Session, fact_id: int) -> int:
    current = session.execute(
        sa.select(sa.func.max(FactRevision.revision)).where(col(FactRevision.fact_id) == fact_id)
    ).scalar_one()
    return int(current or 0) + 1


def recent_facts(session: Session, profile_id: int, *, limit: int, kind: str | None) -> list[FactRow]:
    stmt = select(FactRow).where(FactRow.profile_id == profile_id, FactRow.status == FactStatus.ACTIVE.value)
    if kind:
        stmt = stmt.where(FactRow.kind == kind)
    stmt = stmt.order_by(col(FactRow.updated_at).desc(), col(FactRow.id).desc()).limit(limit)
    return list(session.exec(stmt).all())


def list_facts(
    session: Session,
    profile_id: int,
    *,
    status: str | None,
    kind: str | None,
    tag: str | None,
    limit: int,
    before_id: int | None,
    recalled: str | None = None,
    order: str = "newest",
    before_recall: tuple[int, int] | None = None,
    window: Window = ANY,
) -> list[FactRow]:
    """Newest first (by created_at, then id), keyset-paged with before_id (the fact the page ends at); or, with order "recalled", most
    recalled first (ties newest first), keyset-paged with before_recall (count, id). recalled "never" / "ever":
    only the facts no logged search returned / some did."""
    stmt = select(FactRow).where(FactRow.profile_id == profile_id)
    if status:
        stmt = stmt.where(FactRow.status == status)
    if kind:
        stmt = stmt.where(FactRow.kind == kind)
    if tag:
        stmt = stmt.where(
            col(FactRow.id).in_(select(FactTag.fact_id).where(
                FactTag.profile_id == profile_id, FactTag.tag == tag, col(FactTag.current).is_(True)
            ))
        )
    if window.since is not None:  # the time window (service.domain.window): updated_at, both ends included
        stmt = stmt.where(col(FactRow.updated_at) >= window.since)
    if window.until is not None:
        stmt = stmt.where(col(FactRow.updated_at) <= window.until)
    return recalls.fetch(session, stmt, recalled=recalled, order=order, before_id=before_id,
                         before_recall=before_recall, limit=limit)


def facts_changed_since(conn: sa.Connection | Session, profile_id: int, seq: int) -> list[sa.Row[Any]]:
    """The profile's facts changed after change `seq`, oldest first, each a Core row with the fact's columns
    (a search index keeps the fact) and its vector (vector_model, vector_dim, vector; None without one)."""
    return list(conn.execute(_FACTS_CHANGED, {"profile_id": profile_id, "seq": seq}))


def count_facts(session: Session, profile_id: int, status: str | None = "active") -> int:
    stmt = sa.select(sa.func.count()).select_from(FactRow).where(col(FactRow.profile_id) == profile_id)
    if status:
        stmt = stmt.where(col(FactRow.status) == status)
    return int(session.execute(stmt).scalar_one())


def advance_id_sequence(session: Session, table: type[SQLModel]) -> None:
    """After rows were inserted with explicit ids: PostgreSQL's id sequence moves past the largest id (SQLite
    picks max(rowid) + 1 by itself)."""
    if session.get_bind().dialect.name != "postgresql":
        return
    name = table.__tablename__
    session.execute(sa.text(f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), "
                            f"GREATEST((SELECT MAX(id) FROM {name}), 1))"))


def insert_query_log(session: sa.Connection | Session, row: dict[str, Any], results: list[dict[str, object]],
                     inactive_uids: list[str]) -> int:
    """One search's query-log row, its results and its tags; returns the row's id.

    Core INSERTs rather than ORM objects: the unit of work (flush, identity map, three mapped objects)
    cost more than the rest of a lexical search (bench/breakdown.py, py-spy).
    """
    values = {("result_limit" if key == "limit" else key): value for key, value in row.items()}
    query_id = _inserted_id(session.execute(_INSERT_QUERY, values))
    session.execute(_INSERT_QUERY_RESULT, {
        "query_id": query_id, "profile_id": row["profile_id"], "results": results, "inactive_uids": inactive_uids})
    tags = list(row["tags"])
    if tags:
        session.execute(_INSERT_QUERY_TAG, [
            {"query_id": query_id, "tag": tag, "profile_id": row["profile_id"], "day": row["day"]} for tag in tags])
    returned = (item.get("uid") for item in results)
    recalls.count(session, int(row["profile_id"]), (uid for uid in returned if isinstance(uid, str)),
                  row["created_at"])
    return query_id
