"""Exact request bodies, asserted as JSON: templates, pipeline, hybrid and BM25 queries, counts, aggregations.

osmem has no knn and no search pipelines, so these bodies are what proves the hybrid path here; the
real-cluster tests run them against OpenSearch when one is available.
"""

from __future__ import annotations

import json
from datetime import date, datetime, timezone

import pytest

from service.domain import lexical, window
from service.search.opensearch import aggregations as aggs
from service.search.opensearch import queries as q
from service.search.opensearch import templates as tpl

ACTIVE = {"term": {"status": "active"}}
INACTIVE = {"terms": {"status": ["retired", "superseded"]}}
PROFILE = {"term": {"profile_id": "7"}}  # every query of profile 7 filters on it (a shared index)
NAMES = tpl.Names("memory")


def canon(body: object) -> str:
    return json.dumps(body, sort_keys=True)


# --- templates and pipeline ------------------------------------------------------------------------


def test_the_files_are_complete_and_the_analyzer_drops_no_stop_words() -> None:
    for name in ("memory-facts", "memory-queries"):
        body = tpl.load(name)
        assert body["index_patterns"] == [f"{name}.v*"]
        assert body["_meta"]["template_version"] == tpl.TEMPLATE_VERSION == body["version"] == 4
        mappings = body["template"]["mappings"]
        assert mappings["dynamic"] == "strict" and mappings["_routing"] == {"required": True}
        assert mappings["_meta"]["template_version"] == tpl.TEMPLATE_VERSION
        assert mappings["properties"]["profile_id"] == {"type": "keyword"} and "profile" not in mappings["properties"]
        analysis = body["template"]["settings"]["analysis"]
        assert analysis == {
            "char_filter": {"memory_separators": {"type": "pattern_replace", "pattern": "[^\\p{L}\\p{N}]+",
                                                  "replacement": " "}},
            "analyzer": {"memory_text": {"type": "custom", "char_filter": ["memory_separators"],
                                         "tokenizer": "whitespace",
                                         "filter": ["lowercase", "asciifolding", "porter_stem"]}},
        }


def test_facts_template_rendered() -> None:
    names = tpl.Names("team-b")
    body = tpl.render_facts(names, shards=3, replicas=1, dimension=384,
                            embedder="sentence-transformers/all-MiniLM-L6-v2", vectors=True)
    template = body["template"]
    assert template["settings"]["index"] == {"number_of_shards": 3, "number_of_replicas": 1,
                                             "refresh_interval": "1s", "knn": True,
                                             "search.default_pipeline": "team-b-hybrid",
                                             # a profile's facts together, its active ones first: the filtered
                                             # vector scans run straight through them (template v4)
                                             "sort.field": ["profile_id", "status"], "sort.order": ["asc", "asc"]}
    assert template["mappings"]["_meta"] == {"template_version": 4, "entity": "fact",
                                             "embedder": "sentence-transformers/all-MiniLM-L6-v2", "dimension": 384}
    assert template["mappings"]["properties"] == {
        "uid": {"type": "keyword"},
        "fact_id": {"type": "long"},
        "profile_id": {"type": "keyword"},
        "title": {"type": "text", "analyzer": "memory_text", "copy_to": "search_text"},
        "text": {"type": "text", "analyzer": "memory_text", "copy_to": "search_text"},
        "tags": {"type": "keyword", "copy_to": "search_text"},
        "search_text": {"type": "text", "analyzer": "memory_text"},
        "kind": {"type": "keyword"},
        "status": {"type": "keyword"},
        "created_at": {"type": "date"},
        "updated_at": {"type": "date"},
        "retired_at": {"type": "date"},
        "supersedes": {"type": "keyword"},
        "superseded_by": {"type": "keyword"},
        "has_vector": {"type": "boolean"},
        "embedding": {"type": "knn_vector", "dimension": 384,
                      "method": {"name": "hnsw", "engine": "lucene", "space_type": "cosinesimil",
                                 "parameters": {"m": 16, "ef_construction": 128}}},
    }
    assert body["priority"] == 200 and body["index_patterns"] == ["team-b-facts.v*"]
    assert body["_meta"]["prefix"] == "team-b" and body["_meta"]["fingerprint"] == tpl.fingerprint(body)
    lexical_only = tpl.render_facts(names, shards=1, replicas=0, dimension=1536, embedder="openai:x", vectors=False)
    assert lexical_only["template"]["mappings"]["properties"]["embedding"]["dimension"] == 1536
    assert "search.default_pipeline" not in lexical_only["template"]["settings"]["index"]
    assert lexical_only["_meta"]["fingerprint"] != body["_meta"]["fingerprint"]
    assert tpl.load("memory-facts")["template"]["settings"]["index"]["number_of_shards"] == 1  # the file is untouched


def test_queries_template_keeps_every_query_text() -> None:
    body = tpl.render_queries(NAMES, shards=1, replicas=0)
    props = body["template"]["mappings"]["properties"]
    assert props["query"] == {"type": "text", "analyzer": "memory_text", "fields": {"raw": {"type": "keyword"}}}
    assert "ignore_above" not in json.dumps(body)
    assert "knn" not in body["template"]["settings"]["index"]
    assert body["index_patterns"] == ["memory-queries.v*"]
    assert {k: v["type"] for k, v in props.items()} == {
        "log_id": "long", "profile_id": "keyword", "query": "text", "tags": "keyword", "kind": "keyword",
        "limit": "integer", "matched_count": "integer", "returned_count": "integer", "inactive_matched": "integer",
        "top_uid": "keyword", "mode": "keyword", "latency_ms": "float", "created_at": "date",
    }


def test_pipeline_rendered() -> None:
    body = tpl.render_pipeline(lexical_weight=0.3, vector_weight=0.7)
    assert body["phase_results_processors"] == [{"normalization-processor": {
        "normalization": {"technique": "min_max"},
        "combination": {"technique": "arithmetic_mean", "parameters": {"weights": [0.3, 0.7]}},
    }}]
    assert body["description"].startswith(tpl.load("memory-hybrid-pipeline")["description"])
    assert tpl.pipeline_fingerprint(body) != tpl.pipeline_fingerprint(
        tpl.render_pipeline(lexical_weight=0.5, vector_weight=0.5))


def test_names() -> None:
    assert (NAMES.facts, NAMES.queries, NAMES.pipeline) == ("memory-facts", "memory-queries", "memory-hybrid")
    other = tpl.Names("team-b")
    assert (other.facts, other.pipeline) == ("team-b-facts", "team-b-hybrid")
    assert other.index_patterns() == ["team-b-facts", "team-b-facts.*", "team-b-queries", "team-b-queries.*"]
    assert tpl.versioned("memory-facts", 3) == "memory-facts.v3"
    assert tpl.version_of("memory-facts.v3", "memory-facts") == 3
    assert tpl.version_of("memory-facts-work.v1", "memory-facts") is None  # a legacy per-profile index
    assert NAMES.legacy_alias(tpl.FACTS, "work") == "memory-facts-work"


# --- search ------------------------------------------------------------------------------------------


def test_hybrid_query_filters_inside_each_sub_query() -> None:
    terms = lexical.informative_terms("How does the deploy pipeline reach the GKE cluster?")
    assert terms == ["deploy", "pipeline", "reach", "gke", "cluster"]
    body = q.hybrid_search(7, terms, [0.5, -0.25], kind="project", tags=("infra", "k8s"), limit=8, depth=100,
                           min_similarity=0.35)
    filters = [PROFILE, ACTIVE, {"term": {"kind": "project"}}, {"term": {"tags": "infra"}}, {"term": {"tags": "k8s"}}]
    assert canon(body) == canon({
        "size": 8,
        "track_total_hits": True,
        "_source": ["uid", "fact_id"],
        "version": True,  # a hit's state: what the candidate cache keys on
        "query": {"hybrid": {
            "pagination_depth": 100,
            "queries": [
                {"bool": {
                    "must": [{"match": {"search_text": {"query": "deploy pipeline reach gke cluster",
                                                        "operator": "or", "minimum_should_match": 3}}}],
                    "should": [{"match": {"title": {"query": "deploy pipeline reach gke cluster"}}}],
                    "filter": filters,
                    "_name": "words",  # each hit's matched_queries says whether it matched by words
                }},
                {"script_score": {"query": {"bool": {"filter": filters}}, "min_score": 1.35,
                                  "script": {"source": "knn_score", "lang": "knn",
                                             "params": {"field": "embedding", "query_value": [0.5, -0.25],
                                                        "space_type": "innerproduct"}}}},
            ],
        }},
    })


def test_a_time_window_is_a_range_filter_inside_every_sub_query_not_a_post_filter() -> None:
    """The window (service.domain.window) filters before the fusion and the limit, as kind and tags do."""
    scope = window.Window(datetime(2026, 11, 23, tzinfo=timezone.utc), datetime(2026, 11, 30, 12, tzinfo=timezone.utc))
    body = q.hybrid_search(7, ["deploy"], [0.5], kind=None, tags=(), limit=8, depth=100, min_similarity=0.35,
                           window=scope)
    bounds = {"range": {"updated_at": {"gte": "2026-11-23T00:00:00.000000+00:00",
                                       "lte": "2026-11-30T12:00:00.000000+00:00"}}}
    lexical_part, vector_part = body["query"]["hybrid"]["queries"]
    assert lexical_part["bool"]["filter"] == [PROFILE, ACTIVE, bounds]
    assert vector_part["script_score"]["query"]["bool"]["filter"] == [PROFILE, ACTIVE, bounds]
    assert "post_filter" not in body
    since_only = q.term_counts(7, ["deploy"], kind=None, tags=(), window=window.Window(scope.since, None))
    assert since_only["query"]["bool"]["filter"][-1] == {"range": {"updated_at": {
        "gte": "2026-11-23T00:00:00.000000+00:00"}}}
    for made in (q.inactive_matches(7, ["deploy"], None, kind=None, tags=(), min_similarity=0.35, window=scope),
                 q.without_vector(7, kind=None, tags=(), window=scope),
                 q.lexical_search(7, ["deploy"], kind=None, tags=(), depth=10, window=scope),
                 q.lexical_scores(7, ["deploy"], kind=None, tags=(), uids=["f_1"], window=scope)):
        assert json.dumps(bounds) in json.dumps(made)
    assert "range" not in json.dumps(q.hybrid_search(7, ["deploy"], [0.5], kind=None, tags=(), limit=8, depth=100,
                                                     min_similarity=0.35))  # no window: no clause


def test_lexical_scores_are_the_lexical_sub_query_for_the_hits_that_matched_by_words() -> None:
    body = q.lexical_scores(7, ["deploy"], kind=None, tags=(), uids=["f_1", "f_2"])
    assert body == {"size": 2, "_source": False,
                    "query": q.lexical_subquery(["deploy"], [PROFILE, ACTIVE, {"ids": {"values": ["f_1", "f_2"]}}])}


def test_term_counts_body_counts_the_scope_each_term_in_order_and_the_matches_by_words() -> None:
    body = q.term_counts(7, ["deploy", "ledger"], kind=None, tags=())
    assert body == {"size": 0, "track_total_hits": True, "query": {"bool": {"filter": [PROFILE, ACTIVE]}},
                    "aggs": {"terms": {"filters": {"filters": {
                        "t0": {"match": {"search_text": {"query": "deploy"}}},
                        "t1": {"match": {"search_text": {"query": "ledger"}}}}}},
                        "words": {"filter": q.lexical_match(["deploy", "ledger"])}}}
    assert "aggs" not in q.term_counts(7, [], kind=None, tags=())
    answer = {"aggregations": {"terms": {"buckets": {"t0": {"doc_count": 3}, "t1": {"doc_count": 0}}},
                               "words": {"doc_count": 2}}}
    assert q.term_counts_of(answer, ["deploy", "ledger"]) == (3, 0)
    assert q.term_counts_of(answer, []) == ()
    assert q.by_words_of(answer, ["deploy", "ledger"]) == 2
    assert q.by_words_of({}, []) == 0


def test_a_hit_matched_by_words_when_its_matched_queries_name_the_lexical_sub_query() -> None:
    assert q.matched_by_words({"_id": "f_1", "matched_queries": ["words"]})
    assert q.matched_by_words({"_id": "f_1", "matched_queries": {"words": 1.7}})  # the form with scores
    assert not q.matched_by_words({"_id": "f_1"})
    assert not q.matched_by_words({"_id": "f_1", "matched_queries": []})


def test_bm25_query_and_its_msm_rule() -> None:
    body = q.lexical_search(7, ["jira", "4412"], kind=None, tags=(), depth=50)
    assert canon(body) == canon({
        "size": 50,
        "track_total_hits": True,
        "_source": ["uid", "fact_id"],
        "query": {"bool": {
            "must": [{"match": {"search_text": {"query": "jira 4412", "operator": "or", "minimum_should_match": 2}}}],
            "should": [{"match": {"title": {"query": "jira 4412"}}}],
            "filter": [PROFILE, ACTIVE],
        }},
        "sort": [{"_score": "desc"}, {"uid": "asc"}],
    })
    assert q.lexical_subquery([], [ACTIVE]) == {"bool": {"must": [{"match_none": {}}], "filter": [ACTIVE]}}
    for n, need in ((1, 1), (2, 2), (3, 2), (4, 2), (5, 3), (7, 4)):
        terms = [f"t{i}" for i in range(n)]
        assert q.lexical_match(terms)["match"]["search_text"]["minimum_should_match"] == need


def test_count_bodies() -> None:
    body = q.inactive_matches(7, ["pytest"], [1.0, 0.0], kind=None, tags=("testing",), min_similarity=0.5)
    assert canon(body) == canon({
        "size": 5,  # the facts memory once knew, shown in the query-log detail
        "_source": ["uid"],
        "track_total_hits": True,
        "query": {"bool": {
            "filter": [PROFILE, INACTIVE, {"term": {"tags": "testing"}}],
            "should": [
                {"match": {"search_text": {"query": "pytest", "operator": "or", "minimum_should_match": 1}}},
                {"script_score": {"query": {"bool": {"filter": [PROFILE, INACTIVE, {"term": {"tags": "testing"}}]}},
                                  "min_score": 1.5,
                                  "script": {"source": "knn_score", "lang": "knn",
                                             "params": {"field": "embedding", "query_value": [1.0, 0.0],
                                                        "space_type": "innerproduct"}}}},
            ],
            "minimum_should_match": 1,
        }},
    })
    assert q.inactive_matches(7, ["a1"], None, kind=None, tags=(), min_similarity=0.5)["query"]["bool"]["should"] \
        == [q.lexical_match(["a1"])]
    assert q.without_vector(7, kind="user", tags=()) == {
        "size": 0, "track_total_hits": True,
        "query": {"bool": {"filter": [PROFILE, {"term": {"kind": "user"}}, {"term": {"has_vector": False}}]}},
    }
    # The hybrid search's counts: every status, the match rule, counted per status by aggregations.
    scope = [PROFILE, {"term": {"tags": "testing"}}]
    assert canon(q.matches(7, ["pytest"], [1.0, 0.0], kind=None, tags=("testing",), min_similarity=0.5)) == canon({
        "size": 0,
        "track_total_hits": True,
        "query": {"bool": {
            "should": [
                {"bool": {"must": [{"match": {"search_text": {"query": "pytest", "operator": "or",
                                                              "minimum_should_match": 1}}}],
                          "filter": scope}},
                {"script_score": {"query": {"bool": {"filter": scope}}, "min_score": 1.5,
                                  "script": {"source": "knn_score", "lang": "knn",
                                             "params": {"field": "embedding", "query_value": [1.0, 0.0],
                                                        "space_type": "innerproduct"}}}},
            ],
            "minimum_should_match": 1,
        }},
        "aggs": {"active": {"filter": ACTIVE},
                 "inactive": {"filter": INACTIVE, "aggs": {"shown": {"top_hits": {"size": 5, "_source": ["uid"]}}}}},
    })
    answer = {"aggregations": {"active": {"doc_count": 12}, "inactive": {"doc_count": 2, "shown": {"hits": {
        "hits": [{"_id": "f_2"}, {"_id": "f_1"}]}}}}}
    assert q.match_counts(answer) == (12, 2, ["f_2", "f_1"])
    # "Does memory know any of these words?" (service.search.readable): any status, one hit is enough.
    assert q.any_term(7, ["asdf", "qwer"]) == {
        "size": 0, "track_total_hits": 1,
        "query": {"bool": {"filter": [PROFILE],
                           "must": [{"match": {"search_text": {"query": "asdf qwer", "operator": "or"}}}]}},
    }


def test_similar_bodies_and_score_conversion() -> None:
    not_self = [PROFILE, ACTIVE, {"bool": {"must_not": [{"term": {"uid": "f_1"}}]}}]
    assert q.similar_by_vector(7, [0.6, 0.8], uid="f_1", limit=3, threshold=0.75) == {
        "size": 3, "_source": ["uid", "fact_id"],
        "query": {"script_score": {"query": {"bool": {"filter": not_self}}, "min_score": 1.75,
                                  "script": {"source": "knn_score", "lang": "knn",
                                             "params": {"field": "embedding", "query_value": [0.6, 0.8],
                                                        "space_type": "innerproduct"}}}},
    }
    assert q.similar_by_text(7, ["pytest", "fixtures"], uid="f_1", limit=3)["query"] == {
        "bool": {"must": [q.lexical_match(["pytest", "fixtures"])], "filter": not_self}}
    for space in ("innerproduct", "cosinesimil"):
        for cosine in (-0.8, -0.2, 0.0, 0.35, 1.0):
            assert q.score_to_cosine(q.cosine_to_score(cosine, space), space) == pytest.approx(cosine)


def test_the_inner_product_whenever_the_threshold_keeps_cosines_at_or_above_zero() -> None:
    """Unit vectors: the inner product is the cosine, at half the script's cost; its score 1 + cos is affine in
    the cosine only for cos >= 0, so a negative threshold keeps cosinesimil ((1 + cos) / 2, affine everywhere)
    and the pipeline's min-max normalisation stays the embedded backend's."""
    assert q.vector_space(0.3) == q.vector_space(0.0) == "innerproduct"
    assert q.vector_space(-0.1) == "cosinesimil"
    below = q.knn_subquery([1.0, 0.0], -0.5, [PROFILE])["script_score"]
    assert below["script"]["params"]["space_type"] == "cosinesimil" and below["min_score"] == 0.25
    # k-NN's normalizeScore(-ip): 1 + ip from 0 up, 1 / (1 - ip) below; monotonic, so min_score cuts exactly
    assert q.cosine_to_score(0.3, "innerproduct") == pytest.approx(1.3)
    assert q.cosine_to_score(-1.0, "innerproduct") == pytest.approx(0.5)
    scores = [q.cosine_to_score(c / 10, "innerproduct") for c in range(-10, 11)]
    assert scores == sorted(scores) and len(set(scores)) == len(scores)


# --- aggregations ------------------------------------------------------------------------------------


def test_summary_aggregation_body() -> None:
    window = {"range": {"created_at": {"gte": "2026-11-16", "lt": "2026-11-23", "format": "yyyy-MM-dd",
                                       "time_zone": "UTC"}}}
    zero = {"term": {"matched_count": 0}}
    top_order = [{"_count": "desc"}, {"_key": "asc"}]
    assert canon(aggs.summary(7, date(2026, 11, 16), date(2026, 11, 22))) == canon({
        "size": 0,
        "track_total_hits": True,
        "query": {"bool": {"filter": [PROFILE, window]}},
        "aggs": {
            "daily": {
                "date_histogram": {"field": "created_at", "calendar_interval": "day", "time_zone": "UTC",
                                   "format": "yyyy-MM-dd", "min_doc_count": 0,
                                   "extended_bounds": {"min": "2026-11-16", "max": "2026-11-22"}},
                "aggs": {"zero_match": {"filter": zero}},
            },
            "zero_match": {"filter": zero},
            "unknown_matched": {"missing": {"field": "matched_count"}},
            "retired_only": {"filter": {"bool": {"filter": [zero, {"range": {"inactive_matched": {"gt": 0}}}]}}},
            "match_buckets": {"range": {"field": "matched_count", "keyed": True, "ranges": [
                {"key": "0", "to": 1}, {"key": "1", "from": 1, "to": 2}, {"key": "2-5", "from": 2, "to": 6},
                {"key": "6-20", "from": 6, "to": 21}, {"key": "21+", "from": 21}]}},
            "top_queries": {"terms": {"field": "query.raw", "size": 10, "shard_size": 1000, "order": top_order},
                            "aggs": {"zero_match": {"filter": zero}}},
            "top_tags": {"terms": {"field": "tags", "size": 10, "shard_size": 1000, "order": top_order}},
            "top_facts": {"terms": {"field": "top_uid", "size": 11, "shard_size": 1000, "order": top_order}},
            "last_log_id": {"max": {"field": "log_id"}},
        },
    })


def test_distinct_queries_pages_a_composite_aggregation() -> None:
    first = aggs.distinct_queries(7, date(2026, 1, 1), date(2026, 1, 1))
    assert first["aggs"] == {"distinct": {"composite": {
        "size": 1000, "sources": [{"query": {"terms": {"field": "query.raw"}}}]}}}
    assert "cardinality" not in json.dumps(first)
    nxt = aggs.distinct_queries(7, date(2026, 1, 1), date(2026, 1, 1), after={"query": "x"})
    assert nxt["aggs"]["distinct"]["composite"]["after"] == {"query": "x"}
    assert nxt["query"]["bool"]["filter"][0] == PROFILE
    assert nxt["query"]["bool"]["filter"][1]["range"]["created_at"]["lt"] == "2026-01-02"


def test_stats_aggregation_body() -> None:
    body = aggs.stats(7, date(2026, 11, 20), date(2026, 11, 22))
    assert body["query"] == {"bool": {"filter": [PROFILE]}} and body["size"] == 0
    a = body["aggs"]
    assert a["status"] == {"terms": {"field": "status", "size": 10}}
    assert a["active"]["filter"] == ACTIVE
    assert a["active"]["aggs"]["top_tags"]["terms"]["order"] == [{"_count": "desc"}, {"_key": "asc"}]
    assert a["retired"]["filter"]["range"]["retired_at"]["gte"] == "2026-11-20"
    assert a["retired"]["aggs"]["daily"]["date_histogram"]["extended_bounds"] == {"min": "2026-11-20",
                                                                                    "max": "2026-11-22"}
    assert a["oldest"]["top_hits"]["sort"] == [{"created_at": "asc"}, {"fact_id": "asc"}]


def test_the_docs_give_the_role_memory_opensearch_role_prints() -> None:
    """The least-privilege role of docs/operators.md is the one in code (which the suite's own user holds), word
    for word."""
    import re
    from pathlib import Path

    from service.search.opensearch.role import role

    operators = (Path(__file__).resolve().parents[2] / "docs" / "operators.md").read_text()
    block = re.search(r"\*\*Least privilege\.\*\*.*?```json\n(.*?)```", operators, flags=re.S)
    assert block is not None
    documented = json.loads(block.group(1))
    rendered = role(NAMES, install="auto")
    assert documented == {k: rendered[k] for k in ("cluster_permissions", "index_permissions")}
