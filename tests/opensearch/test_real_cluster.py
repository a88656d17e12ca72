"""Only a real OpenSearch can run these (osmem has no knn and no search pipelines): the hybrid pipeline,
radial k-NN at the similarity threshold, hybrid counts equal to the embedded backend's with the same
vectors, and similar() by vector. Skipped, with the reason, when no cluster is available.

Run with Docker:           pytest -m opensearch tests/opensearch
Run against a cluster:     OPENSEARCH_URL=http://localhost:9200 pytest -m opensearch tests/opensearch
(a throwaway cluster: the tests delete its memory-* indices, templates and the memory-hybrid pipeline)
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from service.container import Services, build_services
from service.domain.ports import SearchRequest
from service.search.embedded.backend import EmbeddedSearch
from service.search.opensearch.backend import OpenSearchBackend
from tests.opensearch import corpus
from tests.opensearch.conftest import mirrored_settings, settle, wipe
from tests.opensearch.fakes import FakeEmbedder

pytestmark = pytest.mark.opensearch


@pytest.fixture
def hybrid(tmp_path: Path, real_opensearch: str) -> Iterator[Services]:
    wipe(real_opensearch)
    settings = mirrored_settings(tmp_path, f"sqlite:///{tmp_path}/memory.db", real_opensearch, embedder="minilm",
                                 min_similarity=0.5, similar_threshold=0.9)
    services = build_services(settings, embedder=FakeEmbedder())
    try:
        yield services
    finally:
        services.close()


def backend_of(services: Services) -> OpenSearchBackend:
    assert isinstance(services.backend, OpenSearchBackend)
    return services.backend


def test_pipeline_and_vector_mapping_are_installed(hybrid: Services, real_opensearch: str) -> None:
    alpha = hybrid.profiles.create("alpha")
    backend_of(hybrid).profile_created(alpha.id, alpha.name)
    assert backend_of(hybrid).indices.pipeline_error is None
    client = OpenSearch(hosts=[real_opensearch])
    pipeline = client.search_pipeline.get(id="memory-hybrid")["memory-hybrid"]
    combination = pipeline["phase_results_processors"][0]["normalization-processor"]["combination"]
    assert combination["parameters"]["weights"] == [0.5, 0.5]
    mapping = client.indices.get_mapping(index="memory-facts-alpha")["memory-facts-alpha.v1"]["mappings"]
    assert mapping["properties"]["embedding"]["dimension"] == FakeEmbedder().dim
    assert mapping["_meta"]["embedder"] == FakeEmbedder.model_id


def test_hybrid_counts_like_the_embedded_backend(hybrid: Services) -> None:
    alpha = hybrid.profiles.create("alpha")
    corpus.load(hybrid, alpha)
    settle(hybrid)
    embedded = EmbeddedSearch(hybrid.db, hybrid.embedder, hybrid.settings)
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
