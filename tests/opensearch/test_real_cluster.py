"""Only a real OpenSearch can run these (osmem has no knn and no search pipelines): the hybrid pipeline,
radial k-NN at the similarity threshold, hybrid counts equal to the embedded backend's with the same
vectors, and similar() by vector. Skipped, with the reason, when no cluster is available.

Run with Docker:           pytest -m opensearch tests/opensearch
Run against a cluster:     OPENSEARCH_URL=http://localhost:9200 pytest -m opensearch tests/opensearch
(each test makes and removes only objects under its own random prefix `mt-…`: safe on a shared cluster)
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from opensearchpy import OpenSearch

from service.config import Settings
from service.container import Services, build_services, embedded_search
from service.domain import lexical, names
from service.domain.ports import SearchRequest
from service.domain.ranking import level
from service.search.opensearch.backend import OpenSearchBackend
from tests.opensearch import corpus
from tests.opensearch.conftest import mirrored_settings, settle
from tests.opensearch.fakes import FakeEmbedder
from tests.support.clusters import Cluster

pytestmark = pytest.mark.opensearch


@pytest.fixture
def hybrid(tmp_path: Path, real_opensearch: Cluster, prefix: str) -> Iterator[Services]:
    settings = mirrored_settings(tmp_path, f"sqlite:///{tmp_path}/memory.db", real_opensearch, prefix,
                                 embedder="minilm", min_similarity=0.5, similar_threshold=0.9)
    with build_services(settings, embedder=FakeEmbedder()) as services:
        yield services


def backend_of(services: Services) -> OpenSearchBackend:
    assert isinstance(services.backend, OpenSearchBackend)
    return services.backend


def test_pipeline_and_vector_mapping_are_installed(hybrid: Services, real_opensearch: Cluster, prefix: str) -> None:
    backend_of(hybrid).upkeep.prepare()
    assert backend_of(hybrid).indices.pipeline_error is None and backend_of(hybrid).indices.differences() == []
    client = real_opensearch.client()
    pipeline = client.search_pipeline.get(id=f"{prefix}-hybrid")[f"{prefix}-hybrid"]
    combination = pipeline["phase_results_processors"][0]["normalization-processor"]["combination"]
    assert combination["parameters"]["weights"] == [0.5, 0.5]
    index = client.indices.get(index=f"{prefix}-facts")[f"{prefix}-facts.v1"]
    assert index["settings"]["index"]["search"]["default_pipeline"] == f"{prefix}-hybrid"
    mapping = index["mappings"]
    assert mapping["properties"]["embedding"]["dimension"] == FakeEmbedder().dim
    assert mapping["_meta"]["embedder"] == FakeEmbedder.model_id


def test_hybrid_counts_like_the_embedded_backend(hybrid: Services) -> None:
    alpha = hybrid.profiles.create("alpha")
    corpus.load(hybrid, alpha)
    settle(hybrid)
    embedded = embedded_search(hybrid.db, hybrid.embedder, hybrid.settings)
    try:
        for query, kind, tags in corpus.SEARCHES:
            request = SearchRequest(profile_id=alpha.id, profile="alpha", query=query, limit=50, kind=kind,
                                    tags=tags, vector=hybrid.embedder.embed_query(query))
            mirror, local = hybrid.backend.search(request), embedded.search(request)
            assert mirror.mode == local.mode == "hybrid", query
            assert mirror.matched_count == local.matched_count, query
            assert mirror.inactive_matched == local.inactive_matched, query
            assert {h.uid for h in mirror.hits} == {h.uid for h in local.hits}, query
    finally:
        embedded.close()


def test_the_terms_a_store_holds_are_counted_alike_on_both_backends(hybrid: Services) -> None:
    """SearchBackend.holding: how many active facts hold each term (what a search reads to embed its query
    without the names the store never mentions, service.domain.names), the same from the cluster as from the
    embedded index -- so both embed the same text and rank alike."""
    alpha, empty = hybrid.profiles.create("alpha"), hybrid.profiles.create("empty")
    corpus.load(hybrid, alpha)
    settle(hybrid)
    terms = list(dict.fromkeys(t for title, text, _, _ in corpus.FACTS
                               for t in lexical.informative_terms(f"{title} {text}")))[:80] + ["zyxwvutsrq"]
    embedded = embedded_search(hybrid.db, hybrid.embedder, hybrid.settings)
    try:
        mirror, local = hybrid.backend.holding(alpha.id, "alpha", terms), embedded.holding(alpha.id, "alpha", terms)
        assert mirror == local and local[-1] == 0 and max(local) > 1
        assert hybrid.backend.holding(empty.id, "empty", terms) == embedded.holding(empty.id, "empty", terms) \
            == (0,) * len(terms)
        retired = list(dict.fromkeys(t for title, text, _, _ in corpus.FACTS if title in corpus.RETIRE
                                     for t in lexical.informative_terms(f"{title} {text}")))
        assert hybrid.backend.holding(alpha.id, "alpha", retired) == embedded.holding(alpha.id, "alpha", retired)
    finally:
        embedded.close()


def test_the_stores_off_topic_level_is_measured_alike_on_both_backends(hybrid: Services) -> None:
    """SearchBackend.closest: each probe's closest cosine to an active fact (retired and superseded ones left
    out, at least 0), from the cluster's exact knn_score as from the embedded matrix -- so both backends read
    the same level (service.domain.ranking.level) and their gates decide alike."""
    alpha, empty = hybrid.profiles.create("alpha"), hybrid.profiles.create("empty")
    corpus.load(hybrid, alpha)
    settle(hybrid)
    probes = np.stack([hybrid.embedder.embed_query(q) for q in level.probes()] +
                      [-hybrid.embedder.embed_query(corpus.FACTS[0][1])])  # nothing at cosine >= 0: 0.0
    embedded = embedded_search(hybrid.db, hybrid.embedder, hybrid.settings)
    try:
        mirror, local = hybrid.backend.closest(alpha.id, "alpha", probes), embedded.closest(alpha.id, "alpha", probes)
        assert mirror.shape == local.shape == (len(probes),) and np.allclose(mirror, local, atol=1e-5)
        assert (local >= 0.0).all() and local[-1] == 0.0 and local[:-1].max() > 0.0
        assert not hybrid.backend.closest(empty.id, "empty", probes).any()
        assert not embedded.closest(empty.id, "empty", probes).any()
        retired = np.stack([hybrid.embedder.embed_query(f"{title} {text}") for title, text, _, _ in corpus.FACTS
                            if title in corpus.RETIRE])
        assert np.allclose(hybrid.backend.closest(alpha.id, "alpha", retired),
                           embedded.closest(alpha.id, "alpha", retired), atol=1e-5)
    finally:
        embedded.close()


def test_counts_are_exact_when_more_facts_match_than_the_pool_holds(tmp_path: Path, real_opensearch: Cluster,
                                                                     prefix: str) -> None:
    """A pool of one (MEMORY_RERANK_DEPTH=1, limit 1) and searches matching many facts: matched_count and
    inactive_matched are still every match, as embedded counts them. (The hybrid query's own hits.total is not:
    on 3.5.0 it counted only what its sub-queries' top lists took in.)"""
    settings = mirrored_settings(tmp_path, f"sqlite:///{tmp_path}/memory.db", real_opensearch, prefix,
                                 embedder="minilm", min_similarity=0.5, similar_threshold=0.9, rerank_depth=1)
    with build_services(settings, embedder=FakeEmbedder()) as services:
        alpha = services.profiles.create("alpha")
        corpus.load(services, alpha)
        for n in range(12):  # many facts that one search matches, by words and by meaning
            services.facts.write(alpha, title=f"Deploy service {n}", text=f"deploy service {n} to the kubernetes "
                                 "cluster with the shared pipeline", kind="project", tags=["k8s"])
        settle(services)
        embedded = embedded_search(services.db, services.embedder, services.settings)
        try:
            most = 0
            for query, kind, tags in corpus.SEARCHES:
                request = SearchRequest(profile_id=alpha.id, profile="alpha", query=query, limit=1, kind=kind,
                                        tags=tags, vector=services.embedder.embed_query(query))
                mirror, local = services.backend.search(request), embedded.search(request)
                assert (mirror.mode, mirror.matched_count, mirror.inactive_matched, mirror.inactive_uids) == \
                    (local.mode, local.matched_count, local.inactive_matched, local.inactive_uids), query
                most = max(most, local.matched_count or 0)
            assert most >= 12  # a search matching many more facts than the pool holds
        finally:
            embedded.close()


class Notes:
    """Facts none of whose words the fake embedder knows: they all get its one constant vector, so a query
    without its words is at cosine 1 to every one of them."""

    def __init__(self) -> None:
        self.made = 0

    def make(self) -> dict[str, object]:
        self.made += 1
        return {"title": f"Note {self.made}", "text": f"ledger note number {self.made}", "kind": "project",
                "tags": ["ledger"]}


def test_counts_are_exact_past_thousands_of_matches(tmp_path: Path, real_opensearch: Cluster, prefix: str) -> None:
    """6,000 facts in one profile, every one matching by meaning: matched_count and inactive_matched are every
    match, as embedded counts them. The hybrid query's own hits.total was not (3.5.0: 2,730 of 6,681 matches in
    an index of 10,000 documents; right up to ~4,500), so the counts come from a search of their own."""
    from bench.lib.seeding import seed_facts

    settings = mirrored_settings(tmp_path, f"sqlite:///{tmp_path}/memory.db", real_opensearch, prefix,
                                 embedder="minilm", min_similarity=0.5, similar_threshold=0.9)
    with build_services(settings.model_copy(update={"search": "embedded"}), embedder=FakeEmbedder()) as seeding:
        alpha = seeding.profiles.create("alpha")
        seed_facts(seeding, alpha, 6_000, Notes(), 1)  # type: ignore[arg-type]  # a maker of its own
    with build_services(settings, embedder=FakeEmbedder()) as services:  # the mirror backfilled from the store
        settle(services)
        embedded = embedded_search(services.db, services.embedder, services.settings)
        try:
            for query in ("which ledger notes", "what was decided about the budget"):
                request = SearchRequest(profile_id=alpha.id, profile="alpha", query=query, limit=8,
                                        vector=services.embedder.embed_query(query))
                mirror, local = services.backend.search(request), embedded.search(request)
                assert local.matched_count is not None and local.matched_count > 5_000, query
                assert (mirror.mode, mirror.matched_count, mirror.inactive_matched) == \
                    (local.mode, local.matched_count, local.inactive_matched), query
        finally:
            embedded.close()


def test_hybrid_ranking_through_the_pipeline(hybrid: Services) -> None:
    alpha = hybrid.profiles.create("alpha")
    both = hybrid.facts.write(alpha, title="Deploy to the Kubernetes cluster", text="Deploy with Argo CD.",
                              kind="project", tags=[]).fact
    words = hybrid.facts.write(alpha, title="Kubernetes words", text="kubernetes deploy mentioned once",
                               kind="project", tags=[]).fact
    hybrid.facts.write(alpha, title="Unrelated", text="The user drinks tea.", kind="user", tags=[])
    outcome = hybrid.search.search(alpha, "deploy kubernetes cluster", limit=5)
    assert outcome.mode == "hybrid" and outcome.matched_count == 2
    assert [f.fact.uid for f in outcome.facts] == [both.uid, words.uid]
    assert all(0.0 < f.score <= 1.0 for f in outcome.facts)  # min_max + arithmetic_mean
    assert outcome.facts[0].score == pytest.approx(1.0)  # best in both sub-queries


def test_similar_by_vector_uses_the_threshold(hybrid: Services) -> None:
    alpha = hybrid.profiles.create("alpha")
    first = hybrid.facts.write(alpha, title="Grafana latency", text="Latency on Grafana", kind="reference",
                               tags=[]).fact
    hybrid.facts.write(alpha, title="Spark jobs", text="Spark", kind="user", tags=[])
    second = hybrid.facts.write(alpha, title="Latency dashboard", text="Grafana shows latency", kind="reference",
                                tags=[])
    assert [f.uid for f in second.similar] == [first.uid]


@pytest.mark.model
def test_the_labelled_set_matches_the_same_facts_on_both_backends(tmp_path: Path, real_opensearch: Cluster,
                                                                  prefix: str) -> None:
    """bench/data/retrieval with the real all-MiniLM-L6-v2: for every query (answerable, near-miss, off-topic,
    nonsense) OpenSearch matches exactly the facts the embedded backend matches. The ranking may differ a
    little (Lucene's BM25 is not FTS5's); bench/retrieval.py --backend opensearch prints by how much."""
    import json

    from service.embedding.minilm import MiniLMEmbedder

    data = Path(__file__).resolve().parents[2] / "bench" / "data" / "retrieval"
    facts = [json.loads(line) for line in (data / "facts.jsonl").read_text().splitlines() if line.strip()]
    queries = [json.loads(line)["query"] for name in ("queries.jsonl", "offtopic.jsonl")
               for line in (data / name).read_text().splitlines() if line.strip()]
    embedder = MiniLMEmbedder(Settings(embedder="minilm", data_dir=tmp_path / "models"))
    embedder.embed_documents(["load the model before the first write"])
    (tmp_path / "os").mkdir()
    local = build_services(Settings(data_dir=tmp_path, embedder="minilm"), embedder=embedder)
    mirrored = build_services(mirrored_settings(tmp_path / "os", f"sqlite:///{tmp_path}/os.db", real_opensearch,
                                                prefix, embedder="minilm"), embedder=embedder)
    try:
        here, there = local.profiles.create("bench"), mirrored.profiles.create("bench")
        ids: dict[str, str] = {}
        for fact in facts:
            for services, profile in ((local, here), (mirrored, there)):
                uid = services.facts.write(profile, title=fact["title"], text=fact["text"], kind=fact["kind"],
                                           tags=fact["tags"]).fact.uid
                ids[uid] = fact["id"]
        differences = []
        for query in queries:
            a, b = local.search.search(here, query, limit=50), mirrored.search.search(there, query, limit=50)
            assert a.mode == b.mode == "hybrid", query
            matched_a, matched_b = {ids[f.fact.uid] for f in a.facts}, {ids[f.fact.uid] for f in b.facts}
            if a.matched_count != b.matched_count or (a.matched_count <= 50 and matched_a != matched_b):
                differences.append((query, a.matched_count, b.matched_count, sorted(matched_a ^ matched_b)))
        assert differences == [], differences
    finally:
        local.close()
        mirrored.close()


def test_close_vectors_of_other_profiles_never_crowd_out_a_profiles_facts(hybrid: Services) -> None:
    """A shared index (issue 26): 60 facts of another profile sit closer to the query than any of alpha's five.
    The vector sub-query scores alpha's facts exactly under the profile filter, so all five match and are
    counted (an approximate top-k filtered afterwards would find none of them)."""
    alpha, beta = hybrid.profiles.create("alpha"), hybrid.profiles.create("beta")
    mine = {hybrid.facts.write(alpha, title=f"Runbook {n}", text=f"Deploy the cluster, step {n}.", kind="project",
                               tags=[]).fact.uid for n in range(5)}
    for n in range(60):  # the very words of the query: their vectors are the closest there are
        hybrid.facts.write(beta, title=f"Deploy kubernetes cluster {n}", text="Deploy kubernetes cluster.",
                           kind="project", tags=[])
    settle(hybrid)
    found = hybrid.search.search(alpha, "deploy kubernetes cluster", limit=50)
    assert found.mode == "hybrid" and found.matched_count == 5
    assert {f.fact.uid for f in found.facts} == mine and all(f.vector is not None for f in found.facts)
    assert hybrid.search.search(beta, "deploy kubernetes cluster", limit=50).matched_count == 60



def test_the_names_are_counted_within_the_search_and_a_name_no_fact_holds_searches_again(
        hybrid: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    """Capabilities.names_with_search: a query naming someone is embedded as written, the names counted in the
    search's own round trip; only when no active fact holds one of them is it embedded again without it and
    searched again -- the answer the names asked first gives (names_with_search off), in one round trip when
    every name is held, two when one is not, and no round trip of its own for the names either way."""
    alpha = hybrid.profiles.create("alpha")
    hybrid.facts.write(alpha, title="Dave deploys", text="Dave deploys the cluster with Argo CD.", kind="project",
                       tags=["dave"])
    hybrid.facts.write(alpha, title="Grafana", text="Latency dashboards live in Grafana.", kind="reference",
                       tags=[])
    hybrid.facts.write(alpha, title="Tests", text="Run pytest before every release.", kind="project", tags=[])
    settle(hybrid)
    hybrid.search.search(alpha, "deploy")  # the store's off-topic level measured (its probes' names asked)
    for query in ["What does Dave deploy?", "Does Dave deploy?", "Who deploys Grafana?"]:  # names it holds: from now
        hybrid.search.search(alpha, query)  # on counted within the search (the next test has the switch)
    searcher, backend = backend_of(hybrid).searcher, backend_of(hybrid)
    embedded: list[str] = []
    round_trips: list[int] = []
    asked: list[list[str]] = []
    original_embed, original_msearch, original_holding = (hybrid.embedder.embed_query_tokens, searcher._msearch,
                                                          backend.holding)
    monkeypatch.setattr(hybrid.embedder, "embed_query_tokens", lambda text: (embedded.append(text),
                                                                               original_embed(text))[1])
    monkeypatch.setattr(searcher, "_msearch", lambda *a, **k: (round_trips.append(1), original_msearch(*a, **k))[1])
    monkeypatch.setattr(backend, "holding", lambda *a: (asked.append(a[2]), original_holding(*a))[1])

    def answer(query: str) -> tuple[int | None, list[str], str]:
        found = hybrid.search.search(alpha, query)
        return found.matched_count, [f.fact.uid for f in found.facts], found.mode

    for query, as_embedded, trips in [("How does Dave deploy the cluster?", "How does Dave deploy the cluster?", 1),
                                      ("How does Emi's friend Dave deploy?", "How does friend Dave deploy?", 2),
                                      ("What did Zed say about Grafana latency?", "What did say about Grafana latency?",
                                       2)]:
        embedded.clear(), round_trips.clear()
        speculated = answer(query)
        assert (embedded[-1], len(round_trips), asked) == (as_embedded, trips, []), query
        hybrid.search.names_with_search = False  # the names asked first, as the embedded backend's searches do
        try:
            assert answer(query) == speculated and speculated[2] == "hybrid", query
            assert asked == [names.terms(query)]  # the round trip of its own the names cost before
        finally:
            hybrid.search.names_with_search = True
            asked.clear()


def test_a_profile_whose_searches_mostly_name_someone_it_never_mentions_asks_first(
        hybrid: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    """Searching twice pays only while few searches must: once a third of a profile's recent searches naming
    someone named someone it never mentions (a store of a few facts), its searches ask the names first again --
    and go back to counting them within the search when its searches name whom it holds."""
    alpha = hybrid.profiles.create("alpha")
    hybrid.facts.write(alpha, title="Dave deploys", text="Dave deploys the cluster.", kind="project", tags=["dave"])
    settle(hybrid)
    hybrid.search.search(alpha, "deploy")  # the store's off-topic level measured (its probes' names asked)
    backend = backend_of(hybrid)
    asked: list[list[str]] = []  # a profile starts asking first, until a search names only whom it holds
    original_holding = backend.holding
    monkeypatch.setattr(backend, "holding", lambda *a: (asked.append(a[2]), original_holding(*a))[1])
    flow = []
    for query in ["Did Dave deploy?", "Did Dave deploy it?", "Did Emi deploy?", "Did Zed deploy?", "Did Dave deploy again?",
                  "Did Dave deploy once?", "Did Dave deploy twice?"]:
        asked.clear()
        hybrid.search.search(alpha, query)
        flow.append("first" if asked else "within")
    # the share, a moving average (weight 0.2) starting at the line (1/3): 0.27, 0.21 after two held, 0.37, 0.50
    # after two unheld, then 0.40, 0.32 -- below the line again
    assert flow == ["first", "within", "within", "first", "first", "first", "within"]
