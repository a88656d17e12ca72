"""Running searches against the mirror: hybrid through the pipeline, or plain BM25; similar facts.

Raises BackendUnavailable on any cluster failure; the backend then answers from the canonical store.
Modes and counts follow the one rule of service.search.mode, as the embedded backend does:
- MEMORY_EMBEDDER=none: BM25 only, mode "lexical", exact counts;
- a query vector and the pipeline: hybrid, exact counts from hits.total (relation eq) -- unless a fact
  passing the filters has no vector yet, then "degraded" with unknown counts;
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
from service.domain.ports import Embedder, Hit, SearchHits, SearchRequest
from service.errors import BackendUnavailable
from service.search import lexical, readable
from service.search.fusion import fuse
from service.search.mode import exact, search_mode
from service.search.opensearch import queries as q
from service.search.opensearch import templates as tpl
from service.search.opensearch.client import translated


def _total(response: dict[str, Any]) -> int | None:
    """hits.total when exact, None when OpenSearch says it is a lower bound."""
    total = response["hits"]["total"]
    if isinstance(total, int):
        return total
    return int(total["value"]) if total.get("relation") == "eq" else None


def _cosine(score: float | None) -> float | None:
    return None if score is None else q.score_to_cosine(score)


class Searcher:
    def __init__(self, client: OpenSearch, settings: Settings, embedder: Embedder) -> None:
        self.client = client
        self.settings = settings
        self.embedder = embedder

    def search(self, request: SearchRequest, *, dimension: int, pipeline_error: str | None) -> SearchHits:
        terms = lexical.informative_terms(request.query)
        index = tpl.alias(tpl.FACTS, request.profile)
        vectors_on = self.embedder.enabled
        if vectors_on and not readable.semantic_applies(
            request.query, terms, self.embedder.vocabulary(), lambda t: self._known(index, t)
        ):  # no term is a model word nor occurs in any fact: nothing can match, by words or by meaning
            return SearchHits(0, 0, [], search_mode(vectors_on=True, semantic=False))
        vector = request.query_vector()
        if vector is not None and int(vector.shape[0]) != dimension:
            vector = None  # the index was built for other vectors (`memory reindex`)
        if vectors_on and vector is not None and pipeline_error is None:
            return self._hybrid(request, terms, vector, index)
        return self._lexical(request, terms, index, mode=search_mode(vectors_on=vectors_on, query_vector=False))

    def _hybrid(self, request: SearchRequest, terms: list[str], vector: np.ndarray, index: str) -> SearchHits:
        s = self.settings
        body = q.hybrid_search(terms, vector.tolist(), kind=request.kind, tags=request.tags, limit=request.limit,
                               depth=s.fusion_depth, min_similarity=s.min_similarity)
        with translated("hybrid search"):
            found = self.client.search(index=index, body=body, params={"search_pipeline": tpl.PIPELINE_ID})
        hits = found["hits"]["hits"]
        uids = [h["_source"]["uid"] for h in hits]
        bodies = [
            q.inactive_matches(terms, vector.tolist(), kind=request.kind, tags=request.tags,
                               min_similarity=s.min_similarity),
            q.without_vector(kind=request.kind, tags=request.tags),
        ]
        if uids:
            bodies += q.hit_scores(uids, terms, vector.tolist(), s.min_similarity)
        answers = self._msearch(index, bodies)
        inactive, unembedded = _total(answers[0]), _total(answers[1])
        once_known = [h["_source"]["uid"] for h in answers[0]["hits"]["hits"]]
        lexical_raw, vector_raw = ({h["_source"]["uid"]: float(h["_score"]) for h in a["hits"]["hits"]}
                                   for a in (answers[2:] if uids else [{"hits": {"hits": []}}] * 2))
        out = [Hit(h["_source"]["uid"], int(h["_source"]["fact_id"]), float(h["_score"]),
                   lexical=lexical_raw.get(h["_source"]["uid"]),
                   vector=_cosine(vector_raw.get(h["_source"]["uid"]))) for h in hits]
        matched = _total(found)
        mode = search_mode(vectors_on=True, all_embedded=unembedded == 0,
                           counts_known=matched is not None and inactive is not None)
        if not exact(mode):
            return SearchHits(None, None, out, mode)
        return SearchHits(matched, inactive, out, mode, inactive_uids=once_known)

    def _lexical(self, request: SearchRequest, terms: list[str], index: str, *, mode: str) -> SearchHits:
        known = exact(mode)
        if not terms:  # nothing can match lexically, and there is no vector to match semantically
            return SearchHits(0 if known else None, 0 if known else None, [], mode)
        body = q.lexical_search(terms, kind=request.kind, tags=request.tags, depth=self.settings.fusion_depth)
        with translated("search"):
            found = self.client.search(index=index, body=body)
        raw = {h["_source"]["uid"]: float(h["_score"]) for h in found["hits"]["hits"]}
        ids = {h["_source"]["uid"]: int(h["_source"]["fact_id"]) for h in found["hits"]["hits"]}
        ranked = fuse([raw], [1.0])[: request.limit]
        hits = [Hit(uid, ids[uid], score, lexical=raw[uid]) for uid, score in ranked]
        if not known:
            return SearchHits(None, None, hits, mode)
        (answer,) = self._msearch(index, [
            q.inactive_matches(terms, None, kind=request.kind, tags=request.tags,
                               min_similarity=self.settings.min_similarity)
        ])
        inactive, matched = _total(answer), _total(found)
        mode = search_mode(vectors_on=False, counts_known=matched is not None and inactive is not None)
        if not exact(mode):
            return SearchHits(None, None, hits, mode)
        return SearchHits(matched, inactive, hits, mode,
                          inactive_uids=[h["_source"]["uid"] for h in answer["hits"]["hits"]])

    def _known(self, index: str, terms: list[str]) -> bool:
        """Whether any of the terms occurs in any fact of the profile (service.search.readable)."""
        with translated("count"):
            found = self.client.search(index=index, body=q.any_term(terms))
        total = found["hits"]["total"]
        return (total if isinstance(total, int) else int(total["value"])) > 0

    def _msearch(self, index: str, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The answers of several searches in one round trip; any failed one fails them all."""
        lines: list[dict[str, Any]] = []
        for body in bodies:
            lines += [{}, body]
        with translated("msearch"):
            answer = self.client.msearch(index=index, body=lines)
        for response in answer["responses"]:
            if "error" in response:
                raise BackendUnavailable(f"opensearch msearch: {response['error']}")
        return list(answer["responses"])

    def similar(self, profile: str, uid: str, limit: int, *, vector: np.ndarray | None, title: str,
                text: str) -> list[Hit]:
        """Active facts near fact `uid`: by vector (cosine >= similar_threshold) or, without one, by words."""
        index = tpl.alias(tpl.FACTS, profile)
        threshold = self.settings.similar_threshold
        if vector is not None and self.embedder.enabled:
            body = q.similar_by_vector(vector.tolist(), uid=uid, limit=limit, threshold=threshold)
            with translated("similar"):
                found = self.client.search(index=index, body=body)
            out = []
            for h in found["hits"]["hits"]:
                cosine = q.score_to_cosine(float(h["_score"]))
                if cosine >= threshold - 1e-6:
                    out.append(Hit(h["_source"]["uid"], int(h["_source"]["fact_id"]), cosine, vector=cosine))
            return out
        terms = lexical.informative_terms(f"{title} {text}")
        if not terms:
            return []
        with translated("similar"):
            found = self.client.search(index=index, body=q.similar_by_text(terms, uid=uid, limit=limit))
        return [Hit(h["_source"]["uid"], int(h["_source"]["fact_id"]), float(h["_score"]),
                    lexical=float(h["_score"])) for h in found["hits"]["hits"]]
