"""The scale-out deployment on containers started by testcontainers (issue 36): PostgreSQL 17 as the canonical
store, OpenSearch 2.19.1 as the mirror serving hybrid search and the summary -- the images' official names, built
here by tests/support/containers. The outage and catch-up on a container is in
tests/opensearch/test_outbox_faults.py, the backend contract suite in tests/search/test_backend_contract.py
(their `container` parameters)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from bench.lib import postgres
from service.api.app import create_app
from service.container import Services, build_services, embedded_search
from service.domain.ports import SearchRequest
from service.search.opensearch.backend import OpenSearchBackend
from tests.conftest import make_profile
from tests.opensearch import corpus
from tests.opensearch.conftest import mirrored_settings, settle
from tests.opensearch.fakes import FakeEmbedder
from tests.support.clusters import new_prefix, remove_prefix
from tests.support.containers.fixtures import OpenSearchNode

pytestmark = pytest.mark.containers


@pytest.fixture
def deployment(tmp_path: Path, postgres_container: str, opensearch_container: OpenSearchNode) -> Iterator[Services]:
    """A deployment of the test's own: a fresh database in the PostgreSQL container, a prefix on the OpenSearch one."""
    database_url = postgres.fresh_database(postgres_container, f"t_{uuid.uuid4().hex[:16]}")
    prefix = new_prefix()
    services = build_services(mirrored_settings(tmp_path, database_url, opensearch_container.access, prefix,
                                                embedder="minilm", min_similarity=0.5),
                              embedder=FakeEmbedder())
    try:
        yield services
    finally:
        services.close()
        remove_prefix(opensearch_container.access, prefix)


def test_the_canonical_store_is_the_postgres_container(deployment: Services) -> None:
    alpha = deployment.profiles.create("alpha")
    uids = corpus.load(deployment, alpha)  # writes, a retirement and a supersession
    assert deployment.settings.database_url.startswith("postgresql+psycopg://")
    engine = sa.create_engine(deployment.settings.database_url)
    try:
        with engine.connect() as conn:
            version = conn.execute(sa.text("select version()")).scalar_one()
            statuses = dict(conn.execute(sa.text("select status, count(*) from facts group by status")).all())
    finally:
        engine.dispose()
    assert version.startswith("PostgreSQL 17.")
    assert statuses == {"active": len(corpus.FACTS) - 1, "retired": 1, "superseded": 1}
    assert deployment.search.search(alpha, "pytest fixtures").facts[0].fact.uid == uids["Prefers pytest"]


def test_hybrid_search_on_the_opensearch_container_counts_like_the_embedded_backend(deployment: Services) -> None:
    alpha = deployment.profiles.create("alpha")
    corpus.load(deployment, alpha)
    settle(deployment)
    backend = deployment.backend
    assert isinstance(backend, OpenSearchBackend)
    embedded = embedded_search(deployment.db, deployment.embedder, deployment.settings)
    try:
        for query, kind, tags in corpus.SEARCHES:
            request = SearchRequest(profile_id=alpha.id, profile="alpha", query=query, limit=50, kind=kind,
                                    tags=tags, vector=deployment.embedder.embed_query(query))
            mirror, local = backend.search(request), embedded.search(request)
            assert mirror.mode == local.mode == "hybrid", query
            assert (mirror.matched_count, mirror.inactive_matched) == (local.matched_count, local.inactive_matched)
            assert [h.uid for h in mirror.hits] == [h.uid for h in local.hits], query
    finally:
        embedded.close()


def test_the_summary_comes_from_the_container_checked_against_postgres(deployment: Services) -> None:
    access = make_profile(deployment, "alpha")
    alpha = deployment.profiles.get("alpha")
    corpus.load(deployment, alpha)
    for query in ("deploy kubernetes cluster", "pytest fixtures", "no such thing zebra"):
        deployment.search.search(alpha, query)
    settle(deployment)
    with TestClient(create_app(services=deployment), base_url="http://127.0.0.1") as client:
        response = client.get("/api/alpha/queries/summary?days=7", headers=access.headers)
    assert response.status_code == 200 and response.headers["X-Memory-Source"] == "opensearch"
    assert response.json() == deployment.query_log.summary(alpha, 7)
    assert response.json()["totals"]["searches"] == 3 and response.json()["totals"]["zero_match"] == 1
