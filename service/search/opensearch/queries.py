"""Search request bodies (pure functions; the tests assert them as JSON).

The match rule is the one of service.domain.lexical, so both backends count the same facts:
- lexical: `match` on `search_text` (title + text + tags, copy_to) with the informative terms as the query
  text and minimum_should_match = required_terms(n): a fact must contain that many of the n terms;
- semantic: exact cosine (the k-NN plugin's `knn_score` script) at cosine >= MEMORY_MIN_SIMILARITY. The
  embedder gives unit vectors (the Embedder port), so the cosine is the inner product, which the script
  computes in half the time of its cosinesimil (one product per dimension instead of three; 3 against 6 ms
  per 10,000 facts on the test node). `vector_space` picks it whenever the threshold is >= 0: every scored
  fact then scores 1 + cos, an affine map of the cosine like cosinesimil's (1 + cos) / 2, so the
  pipeline's min-max normalisation gives the same fused scores as the embedded backend's over cosines;
- filters (the profile, kind, every tag, status) sit INSIDE each sub-query: hybrid has no top-level filter on
  2.19, and the script only scores the facts that pass them -- exactly, never an approximate top-k filtered
  afterwards, so another profile's close vectors in the shared index cannot crowd out this profile's facts.
The counts come from a search of their own (`matches`): the hybrid query's hits.total is not |lexical matches U
semantic matches| on 3.x.

One search is one _msearch (one round trip): the hybrid query (through the index's default pipeline: its hits
are the second ranking stage's pool, MEMORY_RERANK_DEPTH by meaning and as many by words; its lexical sub-query
is named WORDS, so each hit's `matched_queries` says whether it matched by words, as the embedded backend knows
of every candidate), the inactive matches, the facts still without a vector, the facts in scope with how many
hold each term and how many match by words, and, when the readability rule asks, whether a term occurs at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from service import clock
from service.contract import INACTIVE_SHOWN, FactStatus
from service.domain import lexical
from service.domain.window import ANY, Window

Status = Literal["active", "inactive", "any"]
INACTIVE_STATUSES = [status.value for status in FactStatus if status is not FactStatus.ACTIVE]
SOURCE_FIELDS = ["uid", "fact_id"]
WORDS = "words"  # the name of the hybrid query's lexical sub-query: a hit's matched_queries holds it if it matched


Space = Literal["innerproduct", "cosinesimil"]


def vector_space(threshold: float) -> Space:
    """The script's space for a search that keeps facts at cosine >= threshold (see the module's text)."""
    return "innerproduct" if threshold >= 0.0 else "cosinesimil"


def cosine_to_score(cosine: float, space: Space) -> float:
    """The k-NN plugin's score of a cosine similarity: cosinesimil (1 + cos) / 2; innerproduct, of unit
    vectors, 1 + cos when cos >= 0 and 1 / (1 - cos) below (KNNWeight.normalizeScore of -cos)."""
    if space == "cosinesimil":
        return (1.0 + cosine) / 2.0
    return 1.0 + cosine if cosine >= 0.0 else 1.0 / (1.0 - cosine)


def score_to_cosine(score: float, space: Space) -> float:
    if space == "cosinesimil":
        return 2.0 * score - 1.0
    return score - 1.0 if score >= 1.0 else 1.0 - 1.0 / score


def profile_filter(profile_id: int) -> dict[str, Any]:
    return {"term": {"profile_id": str(profile_id)}}


def filters(profile_id: int, kind: str | None, tags: Sequence[str], status: Status,
            window: Window = ANY) -> list[dict[str, Any]]:
    """Filter clauses: the profile, the kind, every tag (a fact must carry all of them), the status, the time
    window on updated_at (service.domain.window: both ends included)."""
    out: list[dict[str, Any]] = [profile_filter(profile_id)]
    if status == FactStatus.ACTIVE:
        out.append({"term": {"status": FactStatus.ACTIVE.value}})
    elif status == "inactive":  # the other statuses by name: a negation walks every fact of the shard
        out.append({"terms": {"status": INACTIVE_STATUSES}})
    if kind is not None:
        out.append({"term": {"kind": kind}})
    out.extend({"term": {"tags": tag}} for tag in tags)
    if window:
        bounds = {"gte": clock.isoformat(window.since)} if window.since is not None else {}
        if window.until is not None:
            bounds["lte"] = clock.isoformat(window.until)
        out.append({"range": {"updated_at": bounds}})
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


def lexical_subquery(terms: Sequence[str], filter_clauses: list[dict[str, Any]], *,
                     name: str | None = None) -> dict[str, Any]:
    """Matches by the rule; a title hit adds score (title weighs most, as in the embedded backend). `name`: the
    query's _name, reported in the matched_queries of each hit it matched."""
    body: dict[str, Any] = {"must": [lexical_match(terms)], "filter": filter_clauses}
    if terms:
        body["should"] = [{"match": {"title": {"query": " ".join(terms)}}}]
    if name is not None:
        body["_name"] = name
    return {"bool": body}


def knn_subquery(vector: Sequence[float], min_similarity: float,
                 filter_clauses: list[dict[str, Any]]) -> dict[str, Any]:
    """Every filtered fact at cosine >= min_similarity, scored by EXACT cosine: the k-NN plugin's
    `knn_score` script over the filtered facts, cut at min_score. Not the `knn` query's radial search: on
    the Lucene HNSW graph that is approximate, and on a real 2.19 node it missed 5-25 % of the facts at
    cosine 0.30-0.56 on the labelled set (bench/retrieval.py --backend opensearch), so hits.total would not
    be the matched count. Not the `knn` query with k = 10,000 either (exact below k, but slower than the
    script on the test node's JDK 17, and only up to 10,000 facts)."""
    space = vector_space(min_similarity)
    return {
        "script_score": {
            "query": {"bool": {"filter": filter_clauses}},
            "min_score": cosine_to_score(min_similarity, space),
            "script": {
                "source": "knn_score",
                "lang": "knn",
                "params": {"field": "embedding", "query_value": [float(x) for x in vector], "space_type": space},
            },
        }
    }


def hybrid_search(
    profile_id: int, terms: Sequence[str], vector: Sequence[float], *, kind: str | None, tags: Sequence[str],
    limit: int, depth: int, min_similarity: float, window: Window = ANY,
) -> dict[str, Any]:
    """BM25 + k-NN through the search pipeline; pagination_depth is the fusion depth of each sub-query."""
    active = filters(profile_id, kind, tags, "active", window)
    return {
        "size": limit,
        "track_total_hits": True,
        "_source": SOURCE_FIELDS,
        "version": True,  # each hit's state (service.search.opensearch.candidates)
        "query": {
            "hybrid": {
                "pagination_depth": depth,
                "queries": [lexical_subquery(terms, active, name=WORDS), knn_subquery(vector, min_similarity, active)],
            }
        },
    }


def term_counts(profile_id: int, terms: Sequence[str], *, kind: str | None, tags: Sequence[str],
                window: Window = ANY) -> dict[str, Any]:
    """The active facts passing the filters (hits.total, exact), how many of them hold each term (a `filters`
    aggregation, one bucket a term, in the terms' order) and how many match by words (the lexical rule): what
    the second ranking stage weighs terms and word matches by."""
    body: dict[str, Any] = {"size": 0, "track_total_hits": True,
                            "query": {"bool": {"filter": filters(profile_id, kind, tags, "active", window)}}}
    if terms:
        body["aggs"] = {"terms": {"filters": {"filters": {
            f"t{i}": {"match": {"search_text": {"query": term}}} for i, term in enumerate(terms)}}},
            WORDS: {"filter": lexical_match(terms)}}
    return body


def term_counts_of(answer: dict[str, Any], terms: Sequence[str]) -> tuple[int, ...]:
    """The per-term counts of a term_counts answer, in the terms' order."""
    if not terms:
        return ()
    buckets = answer["aggregations"]["terms"]["buckets"]
    return tuple(int(buckets[f"t{i}"]["doc_count"]) for i in range(len(terms)))


def by_words_of(answer: dict[str, Any], terms: Sequence[str]) -> int:
    """How many facts of a term_counts answer's scope match by words (none without an informative term)."""
    return int(answer["aggregations"][WORDS]["doc_count"]) if terms else 0


def matched_by_words(hit: dict[str, Any]) -> bool:
    """Whether a hit of the hybrid query matched its lexical sub-query (matched_queries: a list of names, or a
    name -> score map when a request asks for scores)."""
    return WORDS in (hit.get("matched_queries") or ())


def lexical_scores(profile_id: int, terms: Sequence[str], *, kind: str | None, tags: Sequence[str],
                   uids: Sequence[str], window: Window = ANY) -> dict[str, Any]:
    """The raw BM25 scores of the hybrid query's lexical sub-query for the hits `uids` that matched by words,
    asked only when a search answers without the second stage (degraded: a fact without a vector; or a
    vector stored for another model), for its results' lexical detail. (A hit's cosine is computed from its
    stored vector, not asked of the cluster again.)"""
    scope = [*filters(profile_id, kind, tags, "active", window), {"ids": {"values": list(uids)}}]
    return {"size": len(uids), "_source": False, "query": lexical_subquery(terms, scope)}


def lexical_search(profile_id: int, terms: Sequence[str], *, kind: str | None, tags: Sequence[str],
                   depth: int, window: Window = ANY) -> dict[str, Any]:
    """Plain BM25 (no pipeline: a two-weight pipeline cannot serve one sub-query). `depth` hits come back so
    that the scores are min-max normalised over the same list as in the embedded backend."""
    return {
        "size": depth,
        "track_total_hits": True,
        "_source": SOURCE_FIELDS,
        "query": lexical_subquery(terms, filters(profile_id, kind, tags, "active", window)),
        "sort": [{"_score": "desc"}, {"uid": "asc"}],
    }


def inactive_matches(
    profile_id: int, terms: Sequence[str], vector: Sequence[float] | None, *, kind: str | None,
    tags: Sequence[str], min_similarity: float, window: Window = ANY,
) -> dict[str, Any]:
    """How many retired/superseded facts the same search would have matched (exact total), and the first
    INACTIVE_SHOWN of them, best first (closest by vector when there is one)."""
    inactive = filters(profile_id, kind, tags, "inactive", window)
    should: list[dict[str, Any]] = [lexical_match(terms)]
    if vector is not None:
        should.append(knn_subquery(vector, min_similarity, inactive))
    return {
        "size": INACTIVE_SHOWN,
        "_source": ["uid"],
        "track_total_hits": True,
        "query": {"bool": {"filter": inactive, "should": should, "minimum_should_match": 1}},
    }


def matches(
    profile_id: int, terms: Sequence[str], vector: Sequence[float], *, kind: str | None, tags: Sequence[str],
    min_similarity: float, window: Window = ANY,
) -> dict[str, Any]:
    """Every fact passing the filters, of any status, that the search matches -- by words or at cosine >=
    min_similarity: how many are active (matched_count) and how many inactive (exact; the aggregations of a
    query every such fact passes), and the first INACTIVE_SHOWN inactive ones, best first.

    Not the hybrid query's hits.total: on 3.x it counts only the documents its sub-queries' top lists took in,
    so a profile with more matches than the pool's depth got a smaller count (3.5.0: 407 for 868 matches at
    depth 40; tests/opensearch/test_real_cluster.py).

    Each clause carries the filters itself, with none around the two: a conjunction around the vector scan
    made the node step through it document by document, ~17 against ~11 ms at 100,000 facts in one profile
    (the same counts, the same inactive facts shown; docs/benchmarks.md)."""
    scope = filters(profile_id, kind, tags, "any", window)
    return {
        "size": 0,
        "track_total_hits": True,
        "query": {"bool": {"minimum_should_match": 1,
                           "should": [{"bool": {"must": [lexical_match(terms)], "filter": scope}},
                                      knn_subquery(vector, min_similarity, scope)]}},
        "aggs": {
            "active": {"filter": {"term": {"status": FactStatus.ACTIVE.value}}},
            "inactive": {"filter": {"terms": {"status": INACTIVE_STATUSES}},
                         "aggs": {"shown": {"top_hits": {"size": INACTIVE_SHOWN, "_source": ["uid"]}}}},
        },
    }


def match_counts(answer: dict[str, Any]) -> tuple[int, int, list[str]]:
    """(active matches, inactive matches, the inactive ones shown, best first) of a `matches` answer."""
    aggs = answer["aggregations"]
    shown = aggs["inactive"]["shown"]["hits"]["hits"]
    return int(aggs["active"]["doc_count"]), int(aggs["inactive"]["doc_count"]), [h["_id"] for h in shown]


def any_term(profile_id: int, terms: Sequence[str]) -> dict[str, Any]:
    """Does any of the terms occur in any fact of the profile, whatever its status? (one hit is enough)"""
    return {
        "size": 0,
        "track_total_hits": 1,
        "query": {"bool": {"filter": [profile_filter(profile_id)],
                           "must": [{"match": {"search_text": {"query": " ".join(terms), "operator": "or"}}}]}},
    }


def without_vector(profile_id: int, *, kind: str | None, tags: Sequence[str], window: Window = ANY) -> dict[str, Any]:
    """Facts passing the filters (any status) that have no vector yet: if any, the count is not exact."""
    return {
        "size": 0,
        "track_total_hits": True,
        "query": {"bool": {"filter": [*filters(profile_id, kind, tags, "any", window),
                                      {"term": {"has_vector": False}}]}},
    }


def closest_fact(profile_id: int, vector: Sequence[float]) -> dict[str, Any]:
    """The active fact closest to the vector, if any is at cosine >= 0 (its score: 1 + cos)."""
    return {"size": 1, "_source": False, "query": knn_subquery(vector, 0.0, filters(profile_id, None, (), "active"))}


def _others(profile_id: int, uid: str) -> list[dict[str, Any]]:
    return [profile_filter(profile_id), {"term": {"status": FactStatus.ACTIVE.value}},
            {"bool": {"must_not": [{"term": {"uid": uid}}]}}]


def similar_by_vector(profile_id: int, vector: Sequence[float], *, uid: str, limit: int,
                      threshold: float) -> dict[str, Any]:
    """Active facts at cosine >= threshold to a fact's vector, the fact itself excluded."""
    return {"size": limit, "_source": SOURCE_FIELDS,
            "query": knn_subquery(vector, threshold, _others(profile_id, uid))}


def similar_by_text(profile_id: int, terms: Sequence[str], *, uid: str, limit: int) -> dict[str, Any]:
    """Near-duplicates without vectors: active facts sharing most informative words of the fact."""
    return {
        "size": limit,
        "_source": SOURCE_FIELDS,
        "query": {"bool": {"must": [lexical_match(terms)], "filter": _others(profile_id, uid)}},
        "sort": [{"_score": "desc"}, {"uid": "asc"}],
    }
