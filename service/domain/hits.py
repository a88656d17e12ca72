"""The facts of a search backend's hits: those the backend handed back with them (the embedded index holds
each fact as of the change it synced to, the one its ranking used), the others read from the canonical store
in one query (the OpenSearch mirror's hits, or a hit without its fact). memory_search and memory_write's
`similar` both hydrate here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from service.domain.models import Fact
from service.domain.ports.canonical import CanonicalStore


class Carrying(Protocol):
    """A hit or a candidate: a uid, and its fact when the backend handed it back."""

    @property
    def uid(self) -> str: ...
    @property
    def fact(self) -> Fact | None: ...


def facts_of(store: CanonicalStore, profile_id: int, hits: Sequence[Carrying]) -> dict[str, Fact]:
    """uid -> fact for each hit whose fact exists (a hit the store no longer knows is left out)."""
    facts = {hit.uid: hit.fact for hit in hits if hit.fact is not None}
    missing = [hit.uid for hit in hits if hit.fact is None]
    if missing:
        facts.update(store.facts_by_uid(profile_id, missing))
    return facts
