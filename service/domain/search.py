"""memory_search: embed the query once, ask the configured backend, hydrate the facts, log the search.

Every search that runs is written to the profile's query log, misses included; input refused by
validation writes nothing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

import numpy as np

from service.contract import SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX
from service.domain import names, validation, window
from service.domain.embed_gate import EmbedGate
from service.domain.hits import facts_of
from service.domain.late import Embedding
from service.domain.ranking import features, stage
from service.domain.ranking import level as store_level
from service.domain.ranking.level import StoreLevels
from service.domain.ranking.weights import Weights, shipped
from service.domain.models import Fact, ScoredFact, SearchOutcome
from service.errors import BackendUnavailable, EmbeddingUnavailable, InvalidInput
from service.domain.ports import Embedder, Hit, Pool, SearchBackend, SearchHits, SearchRequest
from service.domain.profiles import ProfileRef
from service.domain.ports.canonical import CanonicalStore
from service.domain.querylog import QueryLog

log = logging.getLogger(__name__)

# Names counted within the search (Capabilities.names_with_search) pay off while few searches must be made again
# (a search again costs a whole search; asking first, a round trip of a few term counts): a profile where more than
# this share of recent searches naming someone named someone it never mentions asks first. Measured by
# bench/opensearch_scale.py: one profile of 10,000 facts (~1 in 10) gains, 1,000 profiles of ten facts (most) lose.
UNHELD_SHARE = 1 / 3
UNHELD_WEIGHT = 0.2  # the moving average's weight of the latest search
UNHELD_KEPT = 65_536  # profiles whose share is kept; past it every profile starts again at the line


def _vector(embedding: Embedding | None) -> np.ndarray | None:
    return None if embedding is None else embedding.vector


@dataclass(frozen=True)
class Staged:
    """A pool as the second ranking stage reads it: the query, the candidates, and their facts (pool order)."""

    query: features.QueryView
    pool: Pool
    facts: list[Fact]



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
        weights: Weights | None = None,
        names_with_search: bool = False,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.backend = backend
        self.query_log = query_log
        self.gate = gate or EmbedGate(embedder)
        self.embedder_wait_s = embedder_wait_s  # how long a search waits for a model still loading
        self._weights = weights  # the second ranking stage's (service.domain.ranking); None: the shipped ones
        self.names_with_search = names_with_search  # the backend's Capabilities.names_with_search
        # Per profile, the share of its recent searches naming someone that named someone no active fact holds
        # (a moving average): where it is high (a store of ten facts holds few names) a search asks the backend
        # first rather than search twice, even when the backend could count the names within the search. A
        # profile starts at the line: it asks first until a search names only whom it holds.
        self._unheld: dict[int, float] = {}
        # the probes in one batch (one call to a remote embedder), as facts are: unit vectors, like a query's
        self.levels = StoreLevels(lambda texts: np.stack([e.vector for e in embedder.embed_facts(texts)]),
                                  backend.closest, self._probe_texts)
        # One thread: the model serialises encodes anyway. A search's backend runs its lexical pass
        # while the query is embedded here (both release the GIL), then waits for the vector.
        self._embedding = ThreadPoolExecutor(max_workers=1, thread_name_prefix="query-embedding")

    @property
    def weights(self) -> Weights:
        return self._weights or shipped()

    def close(self) -> None:
        self._embedding.shutdown(wait=True)

    def warm_levels(self, wait_s: float = 120.0) -> None:
        """Embed the probe questions of the stores' off-topic level now (`memory serve` does, in the
        background), so that no search waits for them: once the model is ready (waiting for it to load up to
        `wait_s`); a model that cannot load is left to the searches, which say why. They are embedded on the
        queries' own thread: on another one the model's buffers took ~10-15 MB more of the server's memory."""
        if self.gate.usable(wait_s) and self.embedder.ready():
            # the probes as a store that holds none of their names reads them (most stores)
            self._embedding.submit(self.levels.warm, [names.keeping(p, ()) for p in store_level.probes()])

    def prefetch(self, query: object) -> None:
        """Start embedding a search's query as soon as the call is known, before the MCP layer has framed
        it. Nothing waits for it: the search's own embedding job runs after it on the same one-worker thread
        and finds the vector in the embedder's query cache -- unless the query names someone the store never
        mentions (the search then embeds it without the name). Input the search would refuse starts nothing."""
        if not isinstance(query, str) or not self.embedder.ready():
            return
        try:
            text = validation.query(query)
        except InvalidInput:
            return
        self._embedding.submit(self.embedder.embed_query_tokens, text)

    def _meaning(self, profile: ProfileRef, query: str) -> str:
        """The text the query is embedded as: without the names no active fact of the profile holds
        (service.domain.names); the query itself when the backend cannot say. Asked on the search's own
        thread before the backend searches (the embedded backend's search holds the profile's index while it
        waits for the query's vector: the embedding thread must not need that index)."""
        try:
            return names.meaning_text(query, lambda terms: self.backend.holding(profile.id, profile.name, terms))
        except BackendUnavailable as exc:
            log.warning("embedding the whole query: the names profile %s holds are unknown: %s", profile.name, exc)
            return query

    def _probe_texts(self, profile_id: int, profile: str) -> list[str]:
        """The level's probe questions as this profile's searches would embed them (one count of their names)."""
        probes = store_level.probes()
        asked = names.terms(" ".join(probes))
        held = {term for term, count in zip(asked, self.backend.holding(profile_id, profile, asked)) if count > 0}
        return [names.keeping(p, held) for p in probes]

    def _embed_in_background(self, meaning: str) -> Callable[[], Embedding | None]:
        """Start embedding `meaning` (the query as embedded, `_meaning`) on the embedding thread; the returned
        function waits for its vector and token vectors (None when the embedder failed: the search then runs
        degraded, as the backends say)."""
        future = self._embedding.submit(self.embedder.embed_query_tokens, meaning)
        outcome: list[Embedding | None] = []

        def wait() -> Embedding | None:
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
        since: str | None = None,
        until: str | None = None,
    ) -> SearchOutcome:
        started = time.perf_counter()
        names_later = self.names_with_search and self._unheld.get(profile.id, UNHELD_SHARE) < UNHELD_SHARE
        request, embedding = self._request(profile, query, limit, kind, tags, window.parse(since, until),
                                           names_later=names_later)
        found = self.backend.search(request)
        if request.names and found.names_held is not None:
            meaning = names.keeping(request.query, {t for t, n in zip(request.names, found.names_held) if n > 0})
            unheld = meaning != request.query
            self._heard(profile.id, unheld=unheld)
            if unheld:  # a name no active fact holds: searched again, embedded without it
                again = embedding = self._embed_in_background(meaning)
                request = replace(request, names=(), pending_vector=lambda: _vector(again()))
                found = self.backend.search(request)
        if found.pool is not None:
            found = self._ranked(self._staged(profile, request, embedding, found.pool), found, request.limit)
        scored = self.hydrate(profile, found)
        latency_ms = (time.perf_counter() - started) * 1000.0
        query_id = self.query_log.record(
            profile, request=request, found=found, returned=scored, latency_ms=latency_ms
        )
        self.backend.logged(profile.id, profile.name)
        return SearchOutcome(
            query=request.query,
            matched_count=found.matched_count,
            returned_count=len(scored),
            facts=scored,
            mode=found.mode,
            query_id=query_id,
            since=request.window.since,
            until=request.window.until,
        )

    def candidates(self, profile: ProfileRef, query: str, *, limit: int = SEARCH_LIMIT_DEFAULT,
                   kind: str | None = None, tags: list[str] | None = None) -> tuple[SearchHits, Staged | None]:
        """What the backend found and, for a hybrid search, the pool as the second stage reads it -- without
        ranking it or logging the search (bench/fit_ranking.py fits the stage's weights on these)."""
        request, embedding = self._request(profile, query, limit, kind, tags, window.ANY)
        found = self.backend.search(request)
        return found, None if found.pool is None else self._staged(profile, request, embedding, found.pool)

    def _request(self, profile: ProfileRef, query: str, limit: int, kind: str | None, tags: list[str] | None,
                 scope: window.Window, *, names_later: bool = False
                 ) -> tuple[SearchRequest, Callable[[], Embedding | None] | None]:
        """The validated request and its query's embedding, started. Embedded as `_meaning` says -- or, with
        `names_later` (a backend that counts the names within its search), as written, its names asked of the
        search itself (`search` then searches again when the embedding should have left one out)."""
        query = validation.query(query)
        limit = validation.bounded_int(limit, low=1, high=SEARCH_LIMIT_MAX, param="limit")
        kind = validation.kind(kind) if kind is not None else None  # "" is an error, not 'any kind'
        tag_filter = tuple(validation.tags(tags, search=True))
        embedding: Callable[[], Embedding | None] | None = None
        asked: tuple[str, ...] = ()
        if self.gate.usable(self.embedder_wait_s):
            if names_later:
                asked, meaning = tuple(names.terms(query)), query
            else:
                meaning = self._meaning(profile, query)
                if self.names_with_search and names.terms(query):
                    self._heard(profile.id, unheld=meaning != query)
            embedding = self._embed_in_background(meaning)
        request = SearchRequest(
            profile_id=profile.id, profile=profile.name, query=query, limit=limit, kind=kind, tags=tag_filter,
            window=scope, pending_vector=None if embedding is None else lambda: _vector(embedding()), names=asked,
        )
        return request, embedding

    def _heard(self, profile_id: int, *, unheld: bool) -> None:
        """A search naming someone learnt whether it named someone no active fact of the profile holds."""
        if len(self._unheld) >= UNHELD_KEPT and profile_id not in self._unheld:
            self._unheld.clear()
        self._unheld[profile_id] = (1 - UNHELD_WEIGHT) * self._unheld.get(profile_id, UNHELD_SHARE) + \
            UNHELD_WEIGHT * unheld

    def _staged(self, profile: ProfileRef, request: SearchRequest, embedding: Callable[[], Embedding | None] | None,
                pool: Pool) -> Staged:
        """The pool with its facts (a candidate the store no longer has is left out) and the query as the second
        stage reads them, with the store's off-topic level when there is anything to weigh."""
        facts = facts_of(self.store, profile.id, pool.candidates)
        kept = Pool([c for c in pool.candidates if c.uid in facts], pool.scope, pool.term_df, pool.by_words)
        made = embedding() if embedding is not None else None
        level = self._level(profile, request, pool) if kept.candidates else 0.0
        view = features.query_view(request.query, made.tokens if made is not None else None, level)
        return Staged(view, kept, [facts[c.uid] for c in kept.candidates])

    def _level(self, profile: ProfileRef, request: SearchRequest, pool: Pool) -> float:
        """The store's off-topic level (service.domain.ranking.level); an unfiltered search's scope is the
        profile's active facts, which say when to measure it again."""
        unfiltered = request.kind is None and not request.tags and request.window == window.ANY
        try:
            return self.levels.level(profile.id, profile.name, pool.scope if unfiltered else None)
        except (BackendUnavailable, EmbeddingUnavailable) as exc:
            log.warning("searching with the last off-topic level of profile %s: %s", profile.name, exc)
            return self.levels.last(profile.id)

    def _ranked(self, staged: Staged, found: SearchHits, limit: int) -> SearchHits:
        """The pool ordered by the second ranking stage (service.domain.ranking), cut to the limit; when its gate
        says memory does not know, nothing matched."""
        if not staged.pool.candidates:  # nothing active matched: the backend's counts stand (inactive ones too)
            return replace(found, hits=[], pool=None)
        ranked = stage.rank(self.weights, staged.query, staged.pool, staged.facts)
        if not ranked.knows:  # the gate: memory does not know, whatever a stray word or neighbour matched
            return SearchHits(0, 0, [], found.mode)
        hits = []
        for index, score in ranked.order[:limit]:
            c = staged.pool.candidates[index]
            hits.append(Hit(c.uid, c.fact_id, score, lexical=ranked.lexical[index] if c.by_words else None,
                            vector=c.cosine if c.by_meaning else None, fact=staged.facts[index]))
        return replace(found, hits=hits, pool=None)

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
