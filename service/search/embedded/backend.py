"""The embedded search backend: hybrid BM25 + exact vector search inside the service process.

Works over either canonical store (SQLite or PostgreSQL). Each profile's index is a cache fed from the
canonical store: before every search it catches up with the profile's change sequence (profiles.fact_seq),
so a search always sees a fact written a moment before, by this process or any other.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from typing import Any

import numpy as np

from service.config import Settings
from service.domain.embed_gate import EmbedGate
from service.domain.models import embedding_text
from service.errors import EmbeddingUnavailable
from service.contract import INACTIVE_SHOWN
from service.domain.ports import Capabilities, Embedder, Hit, SearchHits, SearchRequest
from service.domain.ports.sources import ChangedFact, IndexSource
from service.domain import lexical
from service.search import fusion, readable
from service.search.embedded import ranking
from service.search.embedded.index import ProfileIndex
from service.search.mode import exact, search_mode

log = logging.getLogger(__name__)

EMBED_ON_SEARCH_MAX = 256  # missing vectors embedded inline by one search; the rest wait for reindex/next search
EMBED_IN_BACKGROUND = 32  # missing vectors embedded per step of the background pass (the index is locked meanwhile)


class EmbeddedSearch:
    name = "embedded"

    def __init__(self, source: IndexSource, embedder: Embedder, settings: Settings,
                 gate: EmbedGate | None = None) -> None:
        self.source = source  # the canonical store, through its port (service.store.index_source)
        self.embedder = embedder
        self.settings = settings
        self.gate = gate or EmbedGate(embedder)
        self._indexes: dict[int, ProfileIndex] = {}
        self._guard = threading.Lock()
        self.capabilities = Capabilities(warm=self.warm)

    # --- SearchBackend ----------------------------------------------------------------------------

    def search(self, request: SearchRequest) -> SearchHits:
        index = self._synced(request.profile_id)
        with index.lock:
            return self._search(index, request)

    def closest(self, profile_id: int, profile: str, vectors: np.ndarray) -> np.ndarray:
        index = self._synced(profile_id)
        with index.lock:
            return index.closest(vectors)

    def holding(self, profile_id: int, profile: str, terms: list[str]) -> tuple[int, ...]:
        index = self._synced(profile_id, embed=False)
        with index.lock:
            active = index.active[: index.size]
            return tuple(int(active[index.rows_with(term)].sum()) for term in terms)

    def similar(self, profile_id: int, profile: str, uid: str, limit: int) -> list[Hit]:
        index = self._just_written(profile_id, uid) or self._synced(profile_id)
        with index.lock:
            row = index.row_of_uid.get(uid)
            if row is None:
                return []
            candidates = index.active[: index.size].copy()
            candidates[row] = False
            if index.has_vector[row] and index.matrix is not None:
                sims = index.similarities(index.matrix[row])
                assert sims is not None
                ok = np.nonzero(candidates & (sims >= self.settings.similar_threshold))[0]
                best = ok[np.argsort(-sims[ok], kind="stable")][:limit]
                return [Hit(index.uids[r], index.fact_ids[r], float(sims[r]), vector=float(sims[r]),
                            fact=index.facts[r]) for r in best]
            # No vector (embedder off or failing): near-duplicates share most informative words.
            terms = lexical.informative_terms(" ".join(index.text_of(row)))
            if not terms:
                return []
            counts = index.term_counts(terms)
            ok = np.nonzero(candidates & (counts >= lexical.required_terms(len(terms))))[0]
            scores = index.bm25(terms, ok)
            ranked = sorted(((int(r), float(s)) for r, s in zip(ok, scores)), key=lambda kv: (-kv[1], index.uids[kv[0]]))
            return [Hit(index.uids[r], index.fact_ids[r], s, lexical=s, fact=index.facts[r])
                    for r, s in ranked[:limit]]

    def warm(self) -> None:
        """Build every profile's index now (called in the background by `memory serve`), so the first
        search of a large profile does not pay for it; then embed the facts still lacking a vector of the
        current model (a store written with another model or precision: its searches answer meanwhile, by words
        for those facts, hybrid once all are done; /readyz counts what is left, `facts_without_vector`)."""
        profiles = self.source.profile_ids()
        for profile_id in profiles:
            self._synced(profile_id)
        for profile_id in profiles:
            self._embed_all_missing(profile_id)

    def _embed_all_missing(self, profile_id: int) -> None:
        """Embed the profile's missing vectors in small steps, so searches wait at most one step for its lock."""
        while True:
            index = self._synced(profile_id, embed=False)
            with index.lock:
                if not (index.missing_vectors and self.gate.usable()):
                    return
                before = len(index.missing_vectors)
                self._embed_missing(index, profile_id, EMBED_IN_BACKGROUND)
                if len(index.missing_vectors) >= before:  # nothing embedded (the embedder failed): stop here
                    return

    def changed(self, profile_id: int, profile: str) -> None:
        """Nothing to push: the next search pulls the change (and so do other processes)."""

    def written(self, profile_id: int, fact: ChangedFact, model: str) -> None:
        """This process's memory_write, taken into the profile's index at once when it is the very next change
        (its change number follows the index's): the sync of the write's own `similar` then has nothing to read
        back. Otherwise -- the index not built yet, or another transaction (another writer, another process)
        committed in between -- nothing is done and the next sync reads the changes from the store as always.
        So the index never skips a change: a change number is taken under the profile's write lock and names one
        transaction, and this one added exactly this fact."""
        with self._guard:
            index = self._indexes.get(profile_id)
        if index is None:
            return
        if model != self.embedder.model_id:  # as the store's read would: only vectors of this backend's model
            fact = dataclasses.replace(fact, vector=None)
        with index.lock:
            if fact.change_seq == index.synced_seq + 1:
                index.upsert(fact)
                index.synced_seq = fact.change_seq
                index.pushed = (fact.uid, fact.change_seq)

    def _just_written(self, profile_id: int, uid: str) -> ProfileIndex | None:
        """The profile's index when `uid` is the fact written() pushed last and nothing changed since: it then
        holds every fact committed up to that write, so the write's own `similar` has nothing to sync (one
        read of the store less: ~0.25 ms a write). Facts committed after the write may be missing from its
        `similar`, as they would be had they come a moment later; the next search syncs them."""
        with self._guard:
            index = self._indexes.get(profile_id)
        if index is None:
            return None
        with index.lock:
            return index if index.pushed == (uid, index.synced_seq) else None

    def logged(self, profile_id: int, profile: str) -> None:
        """The query log is not indexed here."""

    def forget_queries(self) -> None:
        with self._guard:
            indexes = list(self._indexes.values())
        for index in indexes:
            index.forget_queries()

    def status(self) -> dict[str, Any]:
        with self._guard:
            indexes = list(self._indexes.values())
        return {
            "backend": self.name,
            "state": "ready",
            "profiles_loaded": sum(index.loaded for index in indexes),  # not one still loading
            "facts_indexed": sum(i.size for i in indexes),
            "facts_without_vector": sum(len(i.missing_vectors) for i in indexes) if self.embedder.enabled else 0,
        }

    def close(self) -> None:
        with self._guard:
            for index in self._indexes.values():
                index.close()
            self._indexes.clear()

    # --- ranking ----------------------------------------------------------------------------------

    def _search(self, index: ProfileIndex, request: SearchRequest) -> SearchHits:
        """The ranking steps of service.search.embedded.ranking in order, and the shared mode rule. A hybrid search
        with exact counts hands its candidate pool to the second stage; the others are fused here."""
        n, s, vectors_on = index.size, self.settings, self.embedder.enabled
        terms = lexical.informative_terms(request.query)
        passes = index.filter_mask(request.kind, request.tags, request.window)
        active = passes & index.active[:n]
        inactive = passes & ~index.active[:n]

        counts = ranking.term_counts(index, terms)
        depth = fusion.depth(s.fusion_depth, request.limit)
        pool_depth = max(s.rerank_depth, request.limit)
        words = ranking.lexical_pass(index, terms, counts, active, max(depth, pool_depth))
        # counts covers every fact of the profile, so "a term occurs in memory" is counts.any().
        semantic = vectors_on and readable.semantic_applies(
            request.query, terms, self.embedder.vocabulary(), lambda _terms: bool(counts.any())
        )
        vector = request.query_vector() if semantic else None  # embedded meanwhile, on another thread
        sims = index.similarities(vector) if vector is not None else None
        meaning = ranking.vector_pass(sims, n, active, s.min_similarity, max(depth, pool_depth))
        matched = words.matched | meaning.matched
        found_mode = search_mode(
            vectors_on=vectors_on, semantic=semantic, query_vector=vector is not None and (sims is not None or n == 0),
            all_embedded=not bool((passes & ~index.has_vector[:n]).any()),
        )
        known = exact(found_mode)
        once_known = np.nonzero(inactive & matched)[0] if known else np.zeros(0, dtype=np.int64)
        closeness = sims[once_known] if sims is not None else counts[once_known].astype(np.float32)
        shown = once_known[np.argsort(-closeness, kind="stable")][:INACTIVE_SHOWN]
        matched_count = int((active & matched).sum()) if known else None
        inactive_matched = int(len(once_known)) if known else None
        inactive_uids = [index.uids[int(r)] for r in shown]
        if known and sims is not None:
            pool = ranking.pool(index, terms, sims, active, words, meaning, pool_depth)
            return SearchHits(matched_count, inactive_matched, [], found_mode, inactive_uids, pool=pool)

        weights = ranking.fusion_weights(vectors_on, s.lexical_weight, s.vector_weight)
        hits = [
            Hit(index.uids[r], index.fact_ids[r], score, lexical=words.top.get(r), vector=meaning.top.get(r),
                fact=index.facts[r])
            for r, score in ranking.fused(ranking.cut(words.top, depth), ranking.cut(meaning.top, depth), vectors_on,
                                          weights, request.limit, index.fact_ids)
        ]
        return SearchHits(matched_count, inactive_matched, hits, found_mode, inactive_uids)

    # --- keeping the cache in step with the canonical store ---------------------------------------

    def _synced(self, profile_id: int, *, embed: bool = True) -> ProfileIndex:
        with self._guard:
            index = self._indexes.get(profile_id)
            if index is None:
                index = self._indexes[profile_id] = ProfileIndex()
        with index.lock:
            seq, changed = self.source.changes(profile_id, index.synced_seq, self.embedder.model_id)
            for fact in changed:
                index.upsert(fact)
                seq = max(seq, fact.change_seq)
            index.synced_seq = max(index.synced_seq, seq)
            index.loaded = True
            if embed and index.missing_vectors and self.gate.usable():
                self._embed_missing(index, profile_id, EMBED_ON_SEARCH_MAX)
        return index

    def _embed_missing(self, index: ProfileIndex, profile_id: int, most: int) -> None:
        rows = sorted(index.missing_vectors)[:most]
        texts = [embedding_text(*index.text_of(r), index.tags_of[r]) for r in rows]
        try:
            embedded = self.embedder.embed_facts(texts)
        except EmbeddingUnavailable as exc:
            self.gate.failed()
            log.warning("could not embed %d facts yet: %s", len(rows), exc)
            return
        made = dict(zip((index.fact_ids[r] for r in rows), embedded))
        self.source.store_vectors(profile_id, self.embedder.model_id, made)
        for r, made_one in zip(rows, embedded):
            index.set_vector(r, made_one.vector, made_one.tokens)

