"""What the embedded search backend reads of the canonical store (the IndexSource port of
service.domain.ports.sources): each profile's change sequence, the facts changed since, and the vectors
it makes for facts that had none. Core statements on one connection, no ORM session: every search asks."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlmodel import col

from service.contract import FactStatus
from service.domain.late import Embedding
from service.domain.ports.records import to_fact
from service.domain.ports.sources import ChangedFact
from service.store import repository as repo
from service.store import vectors
from service.store.engine import Database
from service.store.tables import Profile


class SqlIndexSource:
    def __init__(self, db: Database) -> None:
        self.db = db

    def profile_ids(self) -> list[int]:
        with self.db.connect() as conn:
            return [int(i) for i in conn.execute(sa.select(col(Profile.id))).scalars() if i is not None]

    def changes(self, profile_id: int, since: int, model: str) -> tuple[int, list[ChangedFact]]:
        with self.db.connect() as conn:
            seq = repo.fact_seq(conn, profile_id)
            if seq <= since:
                return seq, []
            return seq, [_changed(row, model) for row in repo.facts_changed_since(conn, profile_id, since)]

    def store_vectors(self, profile_id: int, model: str, made: dict[int, Embedding]) -> None:
        vectors.store(self.db, profile_id, model, made)


def _changed(row: Any, model: str) -> ChangedFact:
    """One row of repo.facts_changed_since, with its vector only if it is of `model`."""
    vector, tokens = None, None
    if row.vector_model is not None and row.vector_model == model:
        vector = vectors.from_bytes(row.vector, row.vector_dim)
        tokens = vectors.tokens_from_bytes(row.vector, row.vector_dim)
    present = row.redacted_at is None
    return ChangedFact(
        fact_id=row.id, uid=row.uid, title=row.title, text=row.text, kind=row.kind, tags=tuple(row.tags),
        active=row.status == FactStatus.ACTIVE, present=present, vector=vector,
        change_seq=int(row.change_seq), fact=to_fact(row) if present else None, tokens=tokens,
    )
