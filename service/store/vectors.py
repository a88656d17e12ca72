"""Fact vectors, one owner: how they are stored and read, which facts still lack one of the current model,
and storing a batch made after the facts were written (by the write path, a search's catch-up, the mirror's
worker or `memory reindex`). What is embedded for a fact is service.domain.models.embedding_text."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import sqlalchemy as sa
from sqlmodel import Session, col, select

from service.clock import utcnow
from service.contract import FactStatus
from service.domain.late import Embedding, TokenVectors
from service.domain.ports.records import FactRecord
from service.store import repository as repo
from service.store.engine import Database
from service.store import changes
from service.store.changes import Outbox
from service.store.tables import FactRow, FactVector


def put(session: Session, row: FactRecord, model: str, embedding: Embedding, now: datetime) -> None:
    """The fact's vector (and token vectors) of `model`, replacing any earlier one (one vector per fact)."""
    assert row.id is not None
    data, dim = to_bytes(embedding), int(embedding.vector.shape[0])
    existing = session.get(FactVector, row.id)
    if existing is None:
        session.add(
            FactVector(fact_id=row.id, profile_id=row.profile_id, model=model, dim=dim, vector=data, created_at=now)
        )
    else:
        existing.model, existing.dim, existing.vector, existing.created_at = model, dim, data, now
        session.add(existing)


def to_bytes(embedding: Embedding) -> bytes:
    """The stored form: the vector's float32 bytes, then the token vectors' (service.domain.late) when there are
    any. A reader of the vector reads its `dim` floats and ignores what follows."""
    vector = np.asarray(embedding.vector, dtype=np.float32).tobytes()
    return vector if embedding.tokens is None else vector + embedding.tokens.to_bytes()


def decode(vec: FactVector) -> np.ndarray:
    return from_bytes(vec.vector, vec.dim)


def from_bytes(data: bytes, dim: int) -> np.ndarray:
    """A stored vector's bytes as float32 (read-only, sharing the buffer)."""
    return np.frombuffer(data, dtype=np.float32, count=dim)


def tokens_from_bytes(data: bytes, dim: int) -> TokenVectors | None:
    """The token vectors stored after the vector; None for a vector stored without them."""
    return TokenVectors.from_bytes(data[4 * dim:], dim) if len(data) > 4 * dim else None


def embedding_from_bytes(data: bytes, dim: int) -> Embedding:
    return Embedding(from_bytes(data, dim), tokens_from_bytes(data, dim))


def store(db: Database, profile_id: int, model: str, vectors: dict[int, Embedding], *,
          requeue: Outbox | None = None) -> None:
    """Save vectors (fact id -> vector) made after the facts were written, in one transaction. `requeue`:
    also enqueue the facts for the search mirror again, under the profile lock, so the new outbox ids are
    larger than any earlier change of those facts (their external versions)."""
    with db.write() as session:
        store_in(session, profile_id, model, vectors, requeue=requeue)


def store_in(session: Session, profile_id: int, model: str, vectors: dict[int, Embedding], *,
             requeue: Outbox | None = None) -> None:
    """`store` inside a transaction the caller holds (a unit of work of service.store.sql)."""
    now = utcnow()
    if requeue is not None:  # the lock first: the new outbox ids are larger than any earlier change's
        changes.lock_profile(session, profile_id)
    rows = repo.fact_rows_by_id(session, profile_id, list(vectors))
    for fact_id, vector in vectors.items():
        row = rows.get(fact_id)
        if row is not None:
            put(session, row, model, vector, now)
            if requeue is not None:  # sent again, with the vector; its change number stays (the embedded
                changes.record(session, requeue, profile_id, "fact", fact_id)  # indexes stored it themselves)


def models(session: Session) -> dict[str, int]:
    """Stored vectors per model, every profile."""
    model = col(FactVector.model)
    rows = session.execute(sa.select(model, sa.func.count()).group_by(model)).all()
    return {str(m): int(n) for m, n in rows}


def models_of(session: Session, profile_id: int) -> dict[str, int]:
    model = col(FactVector.model)
    rows = session.execute(
        sa.select(model, sa.func.count()).where(col(FactVector.profile_id) == profile_id)
        .group_by(model)
    ).all()
    return {str(m): int(n) for m, n in rows}


def needing(session: Session, profile_id: int, model: str, *, everything: bool) -> list[int]:
    """Ids of the profile's facts without a vector of `model` (all of its facts with `everything`); a redacted
    fact has no vector on purpose (its words are gone)."""
    stmt = select(FactRow.id).where(FactRow.profile_id == profile_id, col(FactRow.redacted_at).is_(None))
    if not everything:
        current = select(FactVector.fact_id).where(FactVector.profile_id == profile_id, FactVector.model == model)
        stmt = stmt.where(col(FactRow.id).not_in(current))
    ids = session.exec(stmt.order_by(col(FactRow.id))).all()
    return [int(i) for i in ids if i is not None]  # the primary key: None only in the model's Python type


def unembedded(db: Database, limit: int) -> list[FactRow]:
    """Facts (any profile) with no vector at all, oldest first: written while the embedder was loading or
    failing (redacted facts have none on purpose). A vector of another model is not this: OpenSearch mode
    leaves those to `memory reindex --reembed`, as it says at start-up and in /readyz (another model may give
    vectors of another dimension, which need a new index)."""
    embedded = sa.select(col(FactVector.fact_id))
    with db.read() as session:
        return [r[0] for r in session.execute(
            sa.select(FactRow).where(col(FactRow.id).not_in(embedded), col(FactRow.redacted_at).is_(None))
            .order_by(col(FactRow.id)).limit(limit)
        ).all()]


def active_of(session: Session, profile_id: int, model: str) -> tuple[list[str], np.ndarray, int]:
    """The profile's active facts with a vector of `model`: their uids (oldest first) and vectors (one row
    each); and how many active facts have none of this model (not embedded yet, or redacted)."""
    rows = session.execute(
        sa.select(col(FactRow.uid), col(FactVector.dim), col(FactVector.vector))
        .join(FactVector, col(FactVector.fact_id) == col(FactRow.id))
        .where(col(FactRow.profile_id) == profile_id, col(FactRow.status) == FactStatus.ACTIVE.value,
               col(FactVector.model) == model)
        .order_by(col(FactRow.id))
    ).all()
    active = session.execute(sa.select(sa.func.count()).select_from(FactRow).where(
        col(FactRow.profile_id) == profile_id, col(FactRow.status) == FactStatus.ACTIVE.value)).scalar_one()
    if not rows:
        return [], np.zeros((0, 0), dtype=np.float32), int(active)
    matrix = np.vstack([from_bytes(data, dim) for _, dim, data in rows])
    return [uid for uid, _, _ in rows], matrix, int(active) - len(rows)
