"""`memory reindex` and `memory check` for vectors: embed the facts lacking one of the configured embedder
(the store's vectors member keeps them; service.store.vectors is their one owner), and report those still
lacking one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from service.domain import validation
from service.errors import InvalidInput
from service.domain.models import embedding_text
from service.domain.ports import Embedder
from service.domain.ports.canonical import CanonicalStore
from service.domain.profiles import ProfileRef

BATCH = 64


class VectorMaintenance:
    def __init__(self, store: CanonicalStore, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder

    def _needing(self, profile: ProfileRef, everything: bool) -> list[int]:
        with self.store.read() as uow:
            return uow.vectors.needing(profile.id, self.embedder.model_id, everything=everything)

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
            with self.store.read() as uow:
                rows = uow.facts.by_ids(profile.id, chunk)
            ordered = [rows[i] for i in chunk if i in rows]
            made = self.embedder.embed_facts([embedding_text(r.title, r.text, r.tags) for r in ordered])
            with self.store.unit_of_work() as uow:
                uow.vectors.store(profile.id, self.embedder.model_id,
                                  {int(r.id): v for r, v in zip(ordered, made) if r.id is not None})
            done += len(ordered)
            if progress:
                progress(done, len(ids))
        return {"embedded": done, "model": self.embedder.model_id}

    def embed_document(self, document: dict[str, Any], progress: Callable[[int, int], None] | None = None
                       ) -> dict[str, Any]:
        """The vectors of an export document's facts (uid in the document -> vector), made in batches before
        `memory import` writes anything, so the import stores each fact with its vector and the search mirror
        receives it once. Redacted facts have no words to embed; none without an embedder."""
        if not self.embedder.enabled:
            return {}
        facts = [f for f in document.get("facts") or [] if isinstance(f, dict) and not f.get("redaction")
                 and isinstance(f.get("title"), str) and isinstance(f.get("text"), str) and f.get("uid")]
        made: dict[str, Any] = {}
        if progress:
            progress(0, len(facts))
        for start in range(0, len(facts), BATCH):
            chunk = facts[start : start + BATCH]
            vectors = self.embedder.embed_facts([embedding_text(f["title"], f["text"], _tags(f)) for f in chunk])
            made.update({str(f["uid"]): v for f, v in zip(chunk, vectors)})
            if progress:
                progress(len(made), len(facts))
        return made

    def check(self, profile: ProfileRef) -> dict[str, Any]:
        """Facts without a vector of the current embedder (empty dict when all is well)."""
        if not self.embedder.enabled:
            return {}
        missing = self._needing(profile, everything=False)
        if not missing:
            return {}
        with self.store.read() as uow:
            models = uow.vectors.models_of(profile.id)
        return {
            "facts_without_current_vector": len(missing),
            "current_model": self.embedder.model_id,
            "stored_models": models,
            "fix": f"memory reindex {profile.name} --reembed",
        }


def _tags(fact: dict[str, Any]) -> list[str]:
    """An export document's fact's tags as the import will store them (service.domain.validation); none when they
    are not valid, as the import then refuses the document anyway."""
    try:
        return validation.tags(fact.get("tags") or [])
    except InvalidInput:
        return []
