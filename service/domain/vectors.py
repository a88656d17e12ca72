"""`memory reindex` and `memory check` for vectors: embed the facts lacking one of the configured embedder
(service.store.vectors stores them), and report those still lacking one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from service.domain.models import embedding_text
from service.domain.ports import Embedder
from service.domain.profiles import ProfileRef
from service.store import repository as repo
from service.store import vectors
from service.store.engine import Database

BATCH = 64


class VectorMaintenance:
    def __init__(self, db: Database, embedder: Embedder) -> None:
        self.db = db
        self.embedder = embedder

    def _needing(self, profile: ProfileRef, everything: bool) -> list[int]:
        with self.db.read() as session:
            return vectors.needing(session, profile.id, self.embedder.model_id, everything=everything)

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
            made = self.embedder.embed_documents([embedding_text(r.title, r.text) for r in ordered])
            vectors.store(self.db, profile.id, self.embedder.model_id,
                          {int(r.id): v for r, v in zip(ordered, made) if r.id is not None})
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
            models = vectors.models_of(session, profile.id)
        return {
            "facts_without_current_vector": len(missing),
            "current_model": self.embedder.model_id,
            "stored_models": models,
            "fix": f"memory reindex {profile.name} --reembed",
        }
