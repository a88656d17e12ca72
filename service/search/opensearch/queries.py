"""Search request bodies (pure functions; the tests assert them as JSON).

The match rule is the one of service.search.lexical, so both backends count the same facts:
- lexical: `match` on `search_text` (title + text + tags, copy_to) with the informative terms as the query
  text and minimum_should_match = required_terms(n): a fact must contain that many of the n terms;
- semantic: exact cosine (the k-NN plugin's `knn_score` script) at cosine >= MEMORY_MIN_SIMILARITY. For
  cosinesimil OpenSearch scores (1 + cos) / 2, hence min_score = (1 + min_similarity) / 2;
- filters (kind, every tag, status) sit INSIDE each sub-query: hybrid has no top-level filter on 2.19, and
  the script only scores the facts that pass them.
hits.total of the hybrid query is then |lexical matches U semantic matches| among the filtered facts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from service.contract import INACTIVE_SHOWN
from service.search import lexical

Status = Literal["active", "inactive", "any"]
SOURCE_FIELDS = ["uid", "fact_id"]


def cosine_to_score(cosine: float) -> float:
    """OpenSearch's cosinesimil score for a cosine similarity."""
    return (1.0 + cosine) / 2.0


def score_to_cosine(score: float) -> float:
    return 2.0 * score - 1.0


def filters(kind: str | None, tags: Sequence[str], status: Status) -> list[dict[str, Any]]:
    """Filter clauses: the kind, every tag (a fact must carry all of them), the status."""
    out: list[dict[str, Any]] = []
    if status == "active":
        out.append({"term": {"status": "active"}})
    elif status == "inactive":
        out.append({"bool": {"must_not": [{"term": {"status": "active"}}]}})
    if kind is not None:
        out.append({"term": {"kind": kind}})
    out.extend({"term": {"tags": tag}} for tag in tags)
    return out


def lexical_match(terms: Sequence[str]) -> dict[str, Any]:
    """The lexical match rule as one clause (match_none when the query has no informative term)."""
    if not terms:
        return {"match_none": {}}
    return {
        "match": {
            "search_text": {
                "query": " ".join(terms),
                "operator": "or",
                "minimum_should_match": lexical.required_terms(len(terms)),
            }
        }
    }


def lexical_subquery(terms: Sequence[str], filter_clauses: list[dict[str, Any]]) -> dict[str, Any]:
    """Matches by the rule; a title hit adds score (title weighs most, as in the embedded backend)."""
    body: dict[str, Any] = {"must": [lexical_match(terms)], "filter": filter_clauses}
    if terms:
        body["should"] = [{"match": {"title": {"query": " ".join(terms)}}}]
    return {"bool": body}


def knn_subquery(vector: Sequence[float], min_similarity: float,
                 filter_clauses: list[dict[str, Any]]) -> dict[str, Any]:
    """Every filtered fact at cosine >= min_similarity, scored by EXACT cosine: the k-NN plugin's
    `knn_score` script over the filtered facts, cut at min_score. Not the `knn` query's radial search: on
    the Lucene HNSW graph that is approximate, and on a real 2.19 node it missed 5-25 % of the facts at
    cosine 0.30-0.56 on the labelled set (bench/retrieval.py --backend opensearch), so hits.total would not
    be the matched count. The script scores (1 + cos) / 2 for cosinesimil, like the `knn` query."""
    return {
        "script_score": {
            "query": {"bool": {"filter": filter_clauses}},
            "min_score": cosine_to_score(min_similarity),
            "script": {
                "source": "knn_score",
                "lang": "knn",
                "params": {"field": "embedding", "query_value": [float(x) for x in vector],
                           "space_type": "cosinesimil"},
            },
        }
    }


def hybrid_search(
    terms: Sequence[str], vector: Sequence[float], *, kind: str | None, tags: Sequence[str], limit: int,
    depth: int, min_similarity: float,
) -> dict[str, Any]:
    """BM25 + k-NN through the search pipeline; pagination_depth is the fusion depth of each sub-query."""
    active = filters(kind, tags, "active")
    return {
        "size": limit,
        "track_total_hits": True,
        "_source": SOURCE_FIELDS,
        "query": {
            "hybrid": {
                "pagination_depth": depth,
                "queries": [lexical_subquery(terms, active), knn_subquery(vector, min_similarity, active)],
            }
        },
    }


def hit_scores(uids: Sequence[str], terms: Sequence[str], vector: Sequence[float] | None,
               min_similarity: float) -> list[dict[str, Any]]:
    """The raw per-sub-query scores of the given hits (for the query-log detail): the lexical sub-query and
    the radial k-NN, each restricted to those uids. The pipeline's hybrid_score_explanation cannot give them
    on 2.19: it drops the sub-queries a hit is missing from and reports radial k-NN as "Score above
    threshold" (1.0), not the similarity."""
    only = [{"terms": {"uid": list(uids)}}]
    bodies = [{"size": len(uids), "_source": ["uid"], "query": lexical_subquery(terms, only)}]
    if vector is not None:
        bodies.append({"size": len(uids), "_source": ["uid"], "query": knn_subquery(vector, min_similarity, only)})
    return bodies


def lexical_search(terms: Sequence[str], *, kind: str | None, tags: Sequence[str], depth: int) -> dict[str, Any]:
    """Plain BM25 (no pipeline: a two-weight pipeline cannot serve one sub-query). `depth` hits come back so
    that the scores are min-max normalised over the same list as in the embedded backend."""
    return {
        "size": depth,
        "track_total_hits": True,
        "_source": SOURCE_FIELDS,
        "query": lexical_subquery(terms, filters(kind, tags, "active")),
        "sort": [{"_score": "desc"}, {"uid": "asc"}],
    }


def inactive_matches(
    terms: Sequence[str], vector: Sequence[float] | None, *, kind: str | None, tags: Sequence[str],
    min_similarity: float,
) -> dict[str, Any]:
    """How many retired/superseded facts the same search would have matched (exact total), and the first
    INACTIVE_SHOWN of them, best first (closest by vector when there is one)."""
    inactive = filters(kind, tags, "inactive")
    should: list[dict[str, Any]] = [lexical_match(terms)]
    if vector is not None:
        should.append(knn_subquery(vector, min_similarity, inactive))
    return {
        "size": INACTIVE_SHOWN,
        "_source": ["uid"],
        "track_total_hits": True,
        "query": {"bool": {"filter": inactive, "should": should, "minimum_should_match": 1}},
    }


def any_term(terms: Sequence[str]) -> dict[str, Any]:
    """Does any of the terms occur in any fact of the profile, whatever its status? (one hit is enough)"""
    return {
        "size": 0,
        "track_total_hits": 1,
        "query": {"match": {"search_text": {"query": " ".join(terms), "operator": "or"}}},
    }


def without_vector(*, kind: str | None, tags: Sequence[str]) -> dict[str, Any]:
    """Facts passing the filters (any status) that have no vector yet: if any, the count is not exact."""
    return {
        "size": 0,
        "track_total_hits": True,
        "query": {"bool": {"filter": [*filters(kind, tags, "any"), {"term": {"has_vector": False}}]}},
    }


def similar_by_vector(vector: Sequence[float], *, uid: str, limit: int, threshold: float) -> dict[str, Any]:
    """Active facts at cosine >= threshold to a fact's vector, the fact itself excluded."""
    not_self: list[dict[str, Any]] = [{"term": {"status": "active"}}, {"bool": {"must_not": [{"term": {"uid": uid}}]}}]
    return {"size": limit, "_source": SOURCE_FIELDS, "query": knn_subquery(vector, threshold, not_self)}


def similar_by_text(terms: Sequence[str], *, uid: str, limit: int) -> dict[str, Any]:
    """Near-duplicates without vectors: active facts sharing most informative words of the fact."""
    not_self: list[dict[str, Any]] = [{"term": {"status": "active"}}, {"bool": {"must_not": [{"term": {"uid": uid}}]}}]
    return {
        "size": limit,
        "_source": SOURCE_FIELDS,
        "query": {"bool": {"must": [lexical_match(terms)], "filter": not_self}},
        "sort": [{"_score": "desc"}, {"uid": "asc"}],
    }
