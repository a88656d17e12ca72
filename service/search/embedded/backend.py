"""The embedded search backend: hybrid BM25 + exact vector search inside the service process.

Works over either canonical store (SQLite or PostgreSQL). Each profile's index is a cache fed from the
canonical store: before every search it catches up with the profile's change sequence (profiles.fact_seq),
so a search always sees a fact written a moment before, by this process or any other.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import numpy as np
import sqlalchemy as sa

from service.clock import utcnow
from service.config import Settings
from service.domain.embed_gate import EmbedGate
from service.domain.facts import embedding_text
from service.domain.ports import Embedder, EmbeddingUnavailable, Hit, INACTIVE_SHOWN, SearchHits, SearchRequest
from service.search import lexical, readable
from service.search.embedded.index import IndexedFact, ProfileIndex
from service.search.fusion import fuse
from service.store import repository as repo
from service.store.engine import Database
from service.store.tables import FactRow, Profile

log = logging.getLogger(__name__)

EMBED_ON_SEARCH_MAX = 256  # missing vectors embedded inline by one search; the rest wait for reindex/next search


class EmbeddedSearch:
    name = "embedded"

    def __init__(self, db: Database, embedder: Embedder, settings: Settings, gate: EmbedGate | None = None) -> None:
        self.db = db
        self.embedder = embedder
        self.settings = settings
        self.gate = gate or EmbedGate(embedder)
        self._indexes: dict[int, ProfileIndex] = {}
        self._guard = threading.Lock()

    # --- SearchBackend ----------------------------------------------------------------------------

    def search(self, request: SearchRequest) -> SearchHits:
        index = self._synced(request.profile_id)
        with index.lock:
            return self._search(index, request)

    def similar(self, profile_id: int, profile: str, uid: str, limit: int) -> list[Hit]:
        index = self._synced(profile_id)
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
                return [Hit(index.uids[r], index.fact_ids[r], float(sims[r]), vector=float(sims[r])) for r in best]
            # No vector (embedder off or failing): near-duplicates share most informative words.
            terms = lexical.informative_terms(" ".join(index.text_of(row)))
            if not terms:
                return []
            counts = index.term_counts(terms)
            ok = np.nonzero(candidates & (counts >= lexical.required_terms(len(terms))))[0]
            scores = index.bm25(terms, ok)
            ranked = sorted(((int(r), float(s)) for r, s in zip(ok, scores)), key=lambda kv: (-kv[1], index.uids[kv[0]]))
            return [Hit(index.uids[r], index.fact_ids[r], s, lexical=s) for r, s in ranked[:limit]]

    def warm(self) -> None:
        """Build every profile's index now (called in the background by `memory serve`), so the first
        search of a large profile does not pay for it."""
        with self.db.read() as session:
            profile_ids = [int(i) for i in session.execute(sa.select(Profile.id)).scalars()]
        for profile_id in profile_ids:
            self._synced(profile_id)

    def changed(self, profile_id: int, profile: str) -> None:
        """Nothing to push: the next search pulls the change (and so do other processes)."""

    def status(self) -> dict[str, Any]:
        with self._guard:
            indexes = list(self._indexes.values())
        return {
            "backend": self.name,
            "state": "ready",
            "profiles_loaded": len(indexes),
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
        n = index.size
        terms = lexical.informative_terms(request.query)
        need = lexical.required_terms(len(terms))
        passes = index.filter_mask(request.kind, request.tags)
        active = passes & index.active[:n]
        inactive = passes & ~index.active[:n]

        counts = index.term_counts(terms) if terms else np.zeros(n, dtype=np.int32)
        lexical_ok = counts >= need if terms else np.zeros(n, dtype=bool)
        depth = self.settings.fusion_depth
        lex_rows = np.nonzero(active & lexical_ok)[0]
        lex_scores = index.bm25(terms, lex_rows)
        best = np.argsort(-lex_scores, kind="stable")[:depth]
        lex_top = {int(lex_rows[i]): float(lex_scores[i]) for i in best}
        # counts covers every fact of the profile, so "a term occurs in memory" is counts.any().
        semantic = self.embedder.enabled and readable.semantic_applies(
            request.query, terms, self.embedder.vocabulary(), lambda _terms: bool(counts.any())
        )
        vector = request.query_vector() if semantic else None  # embedded meanwhile, on another thread
        sims = index.similarities(vector) if vector is not None else None
        vector_ok = sims >= self.settings.min_similarity if sims is not None else np.zeros(n, dtype=bool)
        matched = lexical_ok | vector_ok

        notes: list[str] = []
        if not self.embedder.enabled:
            mode = "lexical"
        elif not semantic:  # the vectors play no part: the count is exact whatever their state
            mode, notes = "hybrid", [readable.NOTE]
        elif vector is None or sims is None and n > 0:
            mode, notes = "degraded", ["no query vector: lexical matches only, matched_count unknown"]
        elif bool((passes & ~index.has_vector[:n]).any()):
            mode, notes = "degraded", ["some facts are not embedded yet: matched_count unknown"]
        else:
            mode = "hybrid"

        sub_queries: list[dict[int, float]] = [lex_top]
        weights = [self.settings.lexical_weight]
        vec_top: dict[int, float] = {}
        if self.embedder.enabled:
            if sims is not None:
                vec_rows = np.nonzero(active & vector_ok)[0]
                order = vec_rows[np.argsort(-sims[vec_rows], kind="stable")][:depth]
                vec_top = {int(r): float(sims[r]) for r in order}
            sub_queries.append(vec_top)
            weights.append(self.settings.vector_weight)
        else:
            weights = [1.0]
        if sum(weights) <= 0:
            weights = [1.0] * len(weights)

        ranked = fuse(sub_queries, weights)[: request.limit]
        hits = [
            Hit(index.uids[r], index.fact_ids[r], score, lexical=lex_top.get(r), vector=vec_top.get(r))
            for r, score in ranked
        ]
        exact = mode != "degraded"
        once_known = np.nonzero(inactive & matched)[0] if exact else np.zeros(0, dtype=np.int64)
        closeness = sims[once_known] if sims is not None else counts[once_known].astype(np.float32)
        shown = once_known[np.argsort(-closeness, kind="stable")][:INACTIVE_SHOWN]
        return SearchHits(
            matched_count=int((active & matched).sum()) if exact else None,
            inactive_matched=int(len(once_known)) if exact else None,
            hits=hits,
            mode=mode,
            notes=notes,
            inactive_uids=[index.uids[int(r)] for r in shown],
        )

    # --- keeping the cache in step with the canonical store ---------------------------------------

    def _synced(self, profile_id: int) -> ProfileIndex:
        with self._guard:
            index = self._indexes.get(profile_id)
            if index is None:
                index = self._indexes[profile_id] = ProfileIndex()
        with index.lock:
            with self.db.read() as session:
                seq = session.execute(sa.select(Profile.fact_seq).where(Profile.id == profile_id)).scalar_one()
                if seq > index.synced_seq:
                    changed = repo.facts_changed_since(session, profile_id, index.synced_seq)
                    for row, vec in changed:
                        index.upsert(self._indexed(row, vec))
                        seq = max(seq, row.change_seq)
                    index.synced_seq = seq
            if index.missing_vectors and self.gate.usable():
                self._embed_missing(index, profile_id)
        return index

    def _indexed(self, row: FactRow, vec: Any) -> IndexedFact:
        vector = None
        if vec is not None and vec.model == self.embedder.model_id:
            vector = repo.decode_vector(vec)
        assert row.id is not None
        return IndexedFact(
            fact_id=row.id, uid=row.uid, title=row.title, text=row.text, kind=row.kind, tags=tuple(row.tags),
            active=row.status == "active", vector=vector, present=row.redacted_at is None,
        )

    def _embed_missing(self, index: ProfileIndex, profile_id: int) -> None:
        rows = sorted(index.missing_vectors)[:EMBED_ON_SEARCH_MAX]
        texts = [embedding_text(*index.text_of(r)) for r in rows]
        try:
            vectors = self.embedder.embed_documents(texts)
        except EmbeddingUnavailable as exc:
            self.gate.failed()
            log.warning("could not embed %d facts yet: %s", len(rows), exc)
            return
        now = utcnow()
        with self.db.write() as session:
            facts = repo.fact_rows_by_id(session, profile_id, [index.fact_ids[r] for r in rows])
            for r, vector in zip(rows, vectors):
                fact = facts.get(index.fact_ids[r])
                if fact is not None:
                    repo.put_vector(session, fact, self.embedder.model_id, vector, now)
        for r, vector in zip(rows, vectors):
            index.set_vector(r, vector)
