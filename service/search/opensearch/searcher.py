"""Running searches against the mirror: hybrid through the pipeline, or plain BM25; similar facts.

Every request names the deployment's shared facts alias, routes to the profile's shard and filters on its id
(service.search.opensearch.queries). A search is one _msearch: one round trip to the cluster (a degraded
hybrid search asks one more, for its hits' raw BM25 scores). A hybrid search also counts the query's names
(SearchRequest.names) in that round trip: the domain embeds a query as written and searches again only when it
names someone no active fact holds (Capabilities.names_with_search), rather than asking first before every
search that names anyone.

Raises BackendUnavailable on any cluster failure; the backend then answers from the canonical store.
Modes and counts follow the one rule of service.search.mode, as the embedded backend does:
- MEMORY_EMBEDDER=none: BM25 only, mode "lexical", exact counts;
- a query vector and the pipeline: hybrid, exact counts from the counting search beside the hybrid query
  (queries.matches; not the hybrid query's hits.total) -- unless a fact passing the filters has no vector
  yet, then "degraded" with unknown counts;
- embedder on but no usable query vector (a failed embedder, vectors of another dimension, no pipeline):
  BM25 only, "degraded", counts unknown.
BM25-only hits are normalised with the shared fusion function over the top fusion-depth list, as the
embedded backend does with its one sub-query.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from opensearchpy import OpenSearch

from service.config import Settings
from service.domain.late import Embedding
from service.domain.models import Fact
from service.domain.ports import Candidate, Embedder, Hit, Pool, SearchHits, SearchRequest
from service.errors import BackendUnavailable
from service.domain import lexical
from service.search import readable
from service.search import fusion
from service.search.fusion import fuse
from service.search.mode import exact, search_mode
from service.search.opensearch import queries as q
from service.search.opensearch.candidates import CandidateCache
from service.search.opensearch.client import translated
from service.search.opensearch.documents import routing
from service.search.opensearch.refusals import explain


def _total(response: dict[str, Any]) -> int | None:
    """hits.total when exact, None when OpenSearch says it is a lower bound."""
    total = response["hits"]["total"]
    if isinstance(total, int):
        return total
    return int(total["value"]) if total.get("relation") == "eq" else None


def _any(response: dict[str, Any]) -> bool:
    """Whether a search (track_total_hits: 1) found anything at all."""
    total = response["hits"]["total"]
    return (total if isinstance(total, int) else int(total["value"])) > 0


def _check(responses: list[dict[str, Any]]) -> None:
    for response in responses:
        if "error" in response:
            raise BackendUnavailable(f"opensearch msearch: {explain(response['error'])}")


def _scores(response: dict[str, Any]) -> dict[str, float]:
    """Document id (the fact's uid) -> score."""
    return {h["_id"]: float(h["_score"]) for h in response["hits"]["hits"]}


def _by_meaning(cosine: float | None, by_words: bool, min_similarity: float) -> bool:
    """Matched by meaning: close enough -- or not matched by words (hybrid found it, so by meaning, whatever the
    last float digit of a cosine right at the threshold says)."""
    return cosine is not None and (cosine >= min_similarity or not by_words)


def _version(hit: dict[str, Any]) -> tuple[int, int]:
    """(fact id, document version) of a hit: one state of the fact (service.search.opensearch.candidates)."""
    return int(hit["_source"]["fact_id"]), int(hit["_version"])


class Searcher:
    def __init__(self, client: OpenSearch, settings: Settings, embedder: Embedder, facts_alias: str,
                 candidates: CandidateCache) -> None:
        self.client = client
        self.settings = settings
        self.embedder = embedder
        self.index = facts_alias
        self.candidates = candidates  # a hit's fact and stored vectors (its cosine is computed here, from them)

    def search(self, request: SearchRequest, *, dimension: int, pipeline_error: str | None) -> SearchHits:
        terms = lexical.informative_terms(request.query)
        vectors_on = self.embedder.enabled
        readable_now = readable.semantic_applies_without_memory(request.query, terms, self.embedder.vocabulary()) \
            if vectors_on else True
        if readable_now is False:  # nothing can match, by words or by meaning
            return SearchHits(0, 0, [], search_mode(vectors_on=True, semantic=False))
        vector = request.query_vector()
        if vector is not None and int(vector.shape[0]) != dimension:
            vector = None  # the index was built for other vectors (`memory reindex`)
        if vectors_on and vector is not None and pipeline_error is None:
            return self._hybrid(request, terms, vector, ask_known=readable_now is None)
        return self._lexical(request, terms, mode=search_mode(vectors_on=vectors_on, query_vector=False),
                             ask_known=readable_now is None)

    def _hybrid(self, request: SearchRequest, terms: list[str], vector: np.ndarray, *, ask_known: bool) -> SearchHits:
        s, pid, values = self.settings, request.profile_id, vector.tolist()
        depth = max(s.rerank_depth, request.limit)  # the pool: the best `depth` by meaning and by words
        bodies = [
            q.hybrid_search(pid, terms, values, kind=request.kind, tags=request.tags, window=request.window,
                            limit=2 * depth, depth=depth, min_similarity=s.min_similarity),
            q.matches(pid, terms, values, kind=request.kind, tags=request.tags, window=request.window,
                      min_similarity=s.min_similarity),
            q.without_vector(pid, kind=request.kind, tags=request.tags, window=request.window),
            q.term_counts(pid, terms, kind=request.kind, tags=request.tags, window=request.window),
        ]
        if request.names:  # the query's names, counted in the same round trip (Capabilities.names_with_search)
            bodies.append(q.term_counts(pid, list(request.names), kind=None, tags=()))
        if ask_known:  # the readability rule: does any term occur in the profile's facts at all?
            bodies.append(q.any_term(pid, terms))
        answers = self._msearch(pid, bodies, check=False)
        named = answers[4] if request.names else None
        names_held = q.term_counts_of(named, request.names) if named is not None and "error" not in named else None
        if ask_known and "error" not in answers[-1] and not _any(answers[-1]):  # no term occurs: an exact miss
            return SearchHits(0, 0, [], search_mode(vectors_on=True, semantic=False))  # whatever the vector
        _check(answers)
        found, matches_answer, unembedded_answer, counts_answer = answers[:4]
        hits = found["hits"]["hits"]
        stored = self.candidates.facts_with_vectors(pid, [_version(h) for h in hits])
        cosines: dict[str, float | None] = {}
        candidates = []
        for h in hits:
            fact_id = int(h["_source"]["fact_id"])
            fact, made = stored.get(fact_id, (None, None))
            cosine = cosines[h["_id"]] = float(np.dot(vector, made.vector)) if made is not None else None
            by_words = q.matched_by_words(h)
            if fact is not None:  # a hit the canonical store does not have (yet) is no candidate
                candidates.append(Candidate(h["_id"], fact_id, cosine, by_words=by_words,
                                            by_meaning=_by_meaning(cosine, by_words, s.min_similarity),
                                            tokens=made.tokens if made is not None else None, fact=fact))
        matched, inactive, inactive_uids = q.match_counts(matches_answer)
        mode = search_mode(vectors_on=True, all_embedded=_total(unembedded_answer) == 0)
        if not exact(mode):
            return SearchHits(None, None, self._fused(request, terms, hits, stored, cosines), mode,
                              names_held=names_held)
        if any(c.cosine is None for c in candidates):  # a vector read back as of another model: fused as before
            return SearchHits(matched, inactive, self._fused(request, terms, hits, stored, cosines), mode,
                              inactive_uids, names_held=names_held)
        pool = Pool(sorted(candidates, key=lambda c: c.fact_id), scope=_total(counts_answer) or 0,
                    term_df=q.term_counts_of(counts_answer, terms), by_words=q.by_words_of(counts_answer, terms))
        return SearchHits(matched, inactive, [], mode, inactive_uids, pool=pool, names_held=names_held)

    def _fused(self, request: SearchRequest, terms: list[str], hits: list[dict[str, Any]],
               stored: dict[int, tuple[Fact, Embedding | None]], cosines: dict[str, float | None]) -> list[Hit]:
        """The hybrid query's own order, for a search the second stage cannot rank (degraded, or a vector of
        another model): each hit with its raw BM25 score when it matched by words (one more search, on this
        rare path only) and its cosine when it matched by meaning."""
        by_words = [h["_id"] for h in hits if q.matched_by_words(h)]
        lexical_raw = _scores(self._msearch(request.profile_id, [q.lexical_scores(
            request.profile_id, terms, kind=request.kind, tags=request.tags, uids=by_words,
            window=request.window)])[0]) if by_words else {}
        out = []
        for h in hits:
            cosine = cosines[h["_id"]]
            meaning = cosine if _by_meaning(cosine, q.matched_by_words(h), self.settings.min_similarity) else None
            fact_id = int(h["_source"]["fact_id"])
            out.append(Hit(h["_id"], fact_id, float(h["_score"]), lexical=lexical_raw.get(h["_id"]), vector=meaning,
                           fact=stored.get(fact_id, (None, None))[0]))
        return fusion.in_rank_order(out)[: request.limit]

    def _lexical(self, request: SearchRequest, terms: list[str], *, mode: str, ask_known: bool = False) -> SearchHits:
        known = exact(mode)
        if not terms:  # nothing can match lexically, and there is no vector to match semantically
            return SearchHits(0 if known else None, 0 if known else None, [], mode)
        pid = request.profile_id
        bodies = [q.lexical_search(pid, terms, kind=request.kind, tags=request.tags, window=request.window,
                                   depth=fusion.depth(self.settings.fusion_depth, request.limit))]
        if known:
            bodies.append(q.inactive_matches(pid, terms, None, kind=request.kind, tags=request.tags,
                                             window=request.window, min_similarity=self.settings.min_similarity))
        if ask_known:  # the readability rule: an unreadable query none of whose terms occurs is an exact miss
            bodies.append(q.any_term(pid, terms))
        answers = self._msearch(pid, bodies)
        if ask_known and not _any(answers.pop()):
            return SearchHits(0, 0, [], search_mode(vectors_on=True, semantic=False))
        found, *inactive_answer = answers
        raw = _scores(found)
        ids = {h["_id"]: int(h["_source"]["fact_id"]) for h in found["hits"]["hits"]}
        ranked = fuse([raw], [1.0], tie=ids.__getitem__)[: request.limit]
        hits = [Hit(uid, ids[uid], score, lexical=raw[uid]) for uid, score in ranked]
        if not known:
            return SearchHits(None, None, hits, mode)
        inactive, matched = _total(inactive_answer[0]), _total(found)
        mode = search_mode(vectors_on=False, counts_known=matched is not None and inactive is not None)
        if not exact(mode):
            return SearchHits(None, None, hits, mode)
        return SearchHits(matched, inactive, hits, mode, inactive_uids=[h["_id"] for h in inactive_answer[0]["hits"]["hits"]])

    def _msearch(self, profile_id: int, bodies: list[dict[str, Any]], *, check: bool = True) -> list[dict[str, Any]]:
        """The answers of several searches of one profile in one round trip; any failed one fails them all
        (`check`; else the caller looks at the answers first, then calls _check)."""
        header = {"routing": routing(profile_id)}
        lines: list[dict[str, Any]] = []
        for body in bodies:
            lines += [header, body]
        with translated("msearch"):
            answer = self.client.msearch(index=self.index, body=lines)
        responses = list(answer["responses"])
        if check:
            _check(responses)
        return responses

    def holding(self, profile_id: int, terms: list[str]) -> tuple[int, ...]:
        """How many active facts of the profile hold each term: the counts a search's pool reads (term_counts)."""
        if not terms:
            return ()
        (answer,) = self._msearch(profile_id, [q.term_counts(profile_id, terms, kind=None, tags=())])
        return q.term_counts_of(answer, terms)

    def closest(self, profile_id: int, vectors: np.ndarray) -> np.ndarray:
        """Each vector's highest cosine to an active fact of the profile, at least 0.0 (one round trip)."""
        answers = self._msearch(profile_id, [q.closest_fact(profile_id, v.tolist()) for v in vectors])
        space = q.vector_space(0.0)
        return np.array([max(0.0, q.score_to_cosine(float(a["hits"]["hits"][0]["_score"]), space))
                         if a["hits"]["hits"] else 0.0 for a in answers], dtype=np.float32)

    def similar(self, profile_id: int, uid: str, limit: int, *, vector: np.ndarray | None, title: str,
                text: str) -> list[Hit]:
        """Active facts near fact `uid`: by vector (cosine >= similar_threshold) or, without one, by words."""
        threshold = self.settings.similar_threshold
        if vector is not None and self.embedder.enabled:
            body = q.similar_by_vector(profile_id, vector.tolist(), uid=uid, limit=limit, threshold=threshold)
            (found,) = self._msearch(profile_id, [body])
            out = []
            for h in found["hits"]["hits"]:
                cosine = q.score_to_cosine(float(h["_score"]), q.vector_space(threshold))
                if cosine >= threshold - 1e-6:
                    out.append(Hit(h["_id"], int(h["_source"]["fact_id"]), cosine, vector=cosine))
            return out
        terms = lexical.informative_terms(f"{title} {text}")
        if not terms:
            return []
        (found,) = self._msearch(profile_id, [q.similar_by_text(profile_id, terms, uid=uid, limit=limit)])
        return [Hit(h["_id"], int(h["_source"]["fact_id"]), float(h["_score"]), lexical=float(h["_score"]))
                for h in found["hits"]["hits"]]
