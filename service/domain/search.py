"""memory_search: embed the query once, ask the configured backend, hydrate the facts, log the search.

Every search that runs is written to the profile's query log, misses included; input refused by
validation writes nothing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from service.contract import SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX
from service.domain import validation
from service.domain.embed_gate import EmbedGate
from service.domain.hits import facts_of
from service.domain.models import ScoredFact, SearchOutcome
from service.errors import EmbeddingUnavailable, InvalidInput
from service.domain.ports import Embedder, SearchBackend, SearchHits, SearchRequest
from service.domain.profiles import ProfileRef
from service.domain.ports.canonical import CanonicalStore
from service.domain.querylog import QueryLog

log = logging.getLogger(__name__)



class SearchService:
    def __init__(
        self,
        store: CanonicalStore,
        embedder: Embedder,
        backend: SearchBackend,
        query_log: QueryLog,
        gate: EmbedGate | None = None,
        *,
        embedder_wait_s: float = 0.0,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.backend = backend
        self.query_log = query_log
        self.gate = gate or EmbedGate(embedder)
        self.embedder_wait_s = embedder_wait_s  # how long a search waits for a model still loading
        # One thread: the model serialises encodes anyway. A search's backend runs its lexical pass
        # while the query is embedded here (both release the GIL), then waits for the vector.
        self._embedding = ThreadPoolExecutor(max_workers=1, thread_name_prefix="query-embedding")

    def close(self) -> None:
        self._embedding.shutdown(wait=True)

    def prefetch(self, query: object) -> None:
        """Start embedding a search's query as soon as the call is known, before the MCP layer has framed
        it. Nothing waits for it: the search's own embedding job runs after it on the same one-worker thread
        and finds the vector in the embedder's query cache. Input the search would refuse starts nothing."""
        if not isinstance(query, str) or not self.embedder.ready():
            return
        try:
            text = validation.query(query)
        except InvalidInput:
            return
        self._embedding.submit(self.embedder.embed_query, text)

    def _embed_in_background(self, query: str) -> Callable[[], np.ndarray | None]:
        """Start embedding the query on the embedding thread; the returned function waits for the vector
        (None when the embedder failed: the search then runs degraded, as the backends say)."""
        future = self._embedding.submit(self.embedder.embed_query, query)
        outcome: list[np.ndarray | None] = []

        def wait() -> np.ndarray | None:
            if not outcome:
                try:
                    outcome.append(future.result())
                except EmbeddingUnavailable as exc:
                    self.gate.failed()
                    log.warning("searching without a query vector: %s", exc)
                    outcome.append(None)
            return outcome[0]

        return wait

    def search(
        self,
        profile: ProfileRef,
        query: str,
        *,
        limit: int = SEARCH_LIMIT_DEFAULT,
        kind: str | None = None,
        tags: list[str] | None = None,
    ) -> SearchOutcome:
        query = validation.query(query)
        limit = validation.bounded_int(limit, low=1, high=SEARCH_LIMIT_MAX, param="limit")
        kind = validation.kind(kind) if kind is not None else None  # "" is an error, not 'any kind'
        tag_filter = tuple(validation.tags(tags, search=True))
        started = time.perf_counter()

        request = SearchRequest(
            profile_id=profile.id, profile=profile.name, query=query, limit=limit, kind=kind, tags=tag_filter,
            pending_vector=self._embed_in_background(query) if self.gate.usable(self.embedder_wait_s) else None,
        )
        found = self.backend.search(request)
        scored = self.hydrate(profile, found)
        latency_ms = (time.perf_counter() - started) * 1000.0
        query_id = self.query_log.record(
            profile, request=request, found=found, returned=scored, latency_ms=latency_ms
        )
        self.backend.logged(profile.id, profile.name)
        return SearchOutcome(
            query=query,
            matched_count=found.matched_count,
            returned_count=len(scored),
            facts=scored,
            mode=found.mode,
            query_id=query_id,
        )

    def hydrate(self, profile: ProfileRef, found: SearchHits) -> list[ScoredFact]:
        """The hits as facts (service.domain.hits), in the backend's order, with their scores."""
        if not found.hits:
            return []
        facts = facts_of(self.store, profile.id, found.hits)
        return [
            ScoredFact(fact=facts[h.uid], score=h.score, lexical=h.lexical, vector=h.vector)
            for h in found.hits
            if h.uid in facts
        ]
