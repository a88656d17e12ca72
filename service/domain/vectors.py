"""Keeping fact vectors in step with the configured embedder (reindex, check)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlmodel import col, select

from service.clock import utcnow
from service.domain.facts import embedding_text
from service.domain.ports import Embedder
from service.domain.profiles import ProfileRef
from service.store import repository as repo
from service.store.engine import Database
from service.store.tables import FactRow, FactVector

BATCH = 64


class VectorMaintenance:
    def __init__(self, db: Database, embedder: Embedder) -> None:
        self.db = db
        self.embedder = embedder

    def _needing(self, profile: ProfileRef, everything: bool) -> list[int]:
        with self.db.read() as session:
            # A redacted fact has no vector on purpose (its words are gone).
            stmt = select(FactRow.id).where(FactRow.profile_id == profile.id, col(FactRow.redacted_at).is_(None))
            if not everything:
                current = select(FactVector.fact_id).where(
                    FactVector.profile_id == profile.id, FactVector.model == self.embedder.model_id
                )
                stmt = stmt.where(col(FactRow.id).not_in(current))
            return [int(i) for i in session.exec(stmt.order_by(col(FactRow.id))).all()]

    def embed(
        self, profile: ProfileRef, *, everything: bool = False, progress: Callable[[int, int], None] | None = None
    ) -> dict[str, Any]:
        if not self.embedder.enabled:
            return {"embedded": 0, "note": "MEMORY_EMBEDDER=none: nothing to embed"}
        ids = self._needing(profile, everything)
        done = 0
        if progress:
            progress(0, len(ids))
        for start in range(0, len(ids), BATCH):
            chunk = ids[start : start + BATCH]
            with self.db.read() as session:
                rows = repo.fact_rows_by_id(session, profile.id, chunk)
            ordered = [rows[i] for i in chunk if i in rows]
            vectors = self.embedder.embed_documents([embedding_text(r.title, r.text) for r in ordered])
            now = utcnow()
            with self.db.write() as session:
                for row, vector in zip(ordered, vectors):
                    repo.put_vector(session, row, self.embedder.model_id, vector, now)
            done += len(ordered)
            if progress:
                progress(done, len(ids))
        return {"embedded": done, "model": self.embedder.model_id}

    def check(self, profile: ProfileRef) -> dict[str, Any]:
        """Facts without a vector of the current embedder (empty dict when all is well)."""
        if not self.embedder.enabled:
            return {}
        missing = self._needing(profile, everything=False)
        if not missing:
            return {}
        with self.db.read() as session:
            models = session.execute(
                sa.select(FactVector.model, sa.func.count())
                .where(FactVector.profile_id == profile.id)
                .group_by(FactVector.model)
            ).all()
        return {
            "facts_without_current_vector": len(missing),
            "current_model": self.embedder.model_id,
            "stored_models": {str(m): int(n) for m, n in models},
            "fix": f"memory reindex {profile.name} --reembed",
        }
