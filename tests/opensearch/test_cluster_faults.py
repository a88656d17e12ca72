"""Faults of a real cluster, forced on the test node (issue 26), each reported with its real cause and what to
do, and none spreading to profiles it does not concern:
- a shard budget cut to a dozen shards above what the node holds: 40 profiles all search their own facts in
  hybrid mode (a deployment takes two indices, whatever its number of profiles);
- a spent shard budget: the deployment cannot create its indices, and /readyz says why;
- an index write block (what the disk flood-stage watermark sets): deliveries stop with that cause, the profile
  with pending changes answers degraded, the others exactly; lifting the block, it catches up.
Cluster settings are changed as the tests' administrator and restored after each test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from service.container import Services, build_services
from service.search.opensearch.backend import OpenSearchBackend
from tests.opensearch.conftest import mirrored_settings
from tests.opensearch.fakes import FakeEmbedder
from tests.support.clusters import Cluster, new_prefix, remove_prefix
from bench.lib.waiting import until

pytestmark = pytest.mark.opensearch


@pytest.fixture
def admin(real_opensearch: Cluster) -> Iterator[OpenSearch]:
    client = real_opensearch.client(admin=real_opensearch.admin is not None)
    try:
        yield client
    finally:
        client.cluster.put_settings(body={"transient": {"cluster.max_shards_per_node": None}})
        client.close()


@pytest.fixture
def deployment(tmp_path: Path, real_opensearch: Cluster) -> Iterator[Any]:
    """Build services on the real cluster under a prefix of their own (made on demand, removed after)."""
    made: list[tuple[Services, str]] = []

    def make(**extra: object) -> Services:
        prefix = new_prefix()
        folder = tmp_path / prefix
        folder.mkdir()
        services = build_services(mirrored_settings(folder, f"sqlite:///{folder}/memory.db", real_opensearch, prefix,
                                                    **extra), embedder=extra.get("embedder") == "minilm" and FakeEmbedder() or None)
        made.append((services, prefix))
        return services

    try:
        yield make
    finally:
        for services, prefix in made:
            services.close()
            remove_prefix(real_opensearch, prefix)


def _open_shards(client: OpenSearch) -> int:
    return int(client.cluster.stats()["indices"]["shards"].get("total", 0))


def _backend(services: Services) -> OpenSearchBackend:
    assert isinstance(services.backend, OpenSearchBackend)
    return services.backend


def test_forty_profiles_search_in_hybrid_mode_under_a_cut_shard_budget(admin: OpenSearch, deployment: Any) -> None:
    admin.cluster.put_settings(body={"transient": {"cluster.max_shards_per_node": _open_shards(admin) + 12}})
    services = deployment(embedder="minilm", min_similarity=0.5)
    profiles = [services.profiles.create(f"team{n:02d}") for n in range(40)]
    for n, profile in enumerate(profiles):
        services.facts.write(profile, title=f"Deploy runbook {n}", text=f"Team {n} deploys the cluster with Argo CD.",
                             kind="project", tags=[f"team{n:02d}"])
        # a known word of the fake embedder: without one a fact's vector is the probe questions' own (fakes.py)
        services.facts.write(profile, title=f"Editor {n}", text="Prefers vim for python.", kind="preference", tags=[])
    for n, profile in enumerate(profiles):
        found = services.search.search(profile, "deploy the kubernetes cluster")
        assert found.mode == "hybrid", (n, found)
        assert found.facts and all(f.fact.tags == [f"team{n:02d}"] for f in found.facts if "Deploy" in f.fact.title)
        assert {f.fact.title for f in found.facts} <= {f"Deploy runbook {n}", f"Editor {n}"}  # never another's


def test_a_spent_shard_budget_is_named(admin: OpenSearch, deployment: Any) -> None:
    # Spent: at most what is open already (at least 1, the lowest value the setting takes; the deployment needs 2).
    admin.cluster.put_settings(body={"transient": {"cluster.max_shards_per_node": max(1, _open_shards(admin))}})
    services = deployment()
    alpha = services.profiles.create("alpha")
    services.facts.write(alpha, title="Deploys", text="Argo CD.", kind="project", tags=[])  # the write stands
    found = services.search.search(alpha, "deploys argo")
    assert (found.mode, found.matched_count, len(found.facts)) == ("degraded", None, 1)  # the canonical store
    problems = " ".join(_backend(services).status()["problems"])
    assert "shard budget" in problems and "cluster.max_shards_per_node" in problems, problems
    assert "memory reindex" not in problems  # it would fail for the same reason


def test_a_write_block_is_named_and_spares_the_other_profiles(admin: OpenSearch, deployment: Any) -> None:
    services = deployment(opensearch_sync_interval=0.5)  # the profile's backoff starts at one interval
    backend = _backend(services)
    alpha, beta = services.profiles.create("alpha"), services.profiles.create("beta")
    services.facts.write(alpha, title="Deploys", text="Argo CD.", kind="project", tags=[])
    services.facts.write(beta, title="Deploys", text="Flux.", kind="project", tags=[])
    facts_index = backend.names.facts
    admin.indices.put_settings(index=facts_index, body={"index.blocks.read_only_allow_delete": True})
    try:
        services.facts.write(alpha, title="Editor", text="Vim.", kind="preference", tags=[])
        backend.sync_now()
        status = backend.status()
        problem = next(p for p in status["problems"] if "refused" in p)
        assert "read-only-allow-delete" in problem and "flood-stage" in problem and "lift the block" in problem
        assert list(status["profiles_failing"]) == [str(alpha.id)]
        assert services.search.search(alpha, "vim editor").mode == "degraded"
        assert (services.search.search(beta, "deploys flux").matched_count,
                services.search.search(beta, "deploys flux").mode) == (1, "lexical")  # nothing of beta pending
    finally:
        admin.indices.put_settings(index=facts_index, body={"index.blocks.read_only_allow_delete": None})

    def caught_up() -> bool:
        backend.sync_now()
        return not backend.status()["profiles_failing"]

    until(caught_up, 30, every=0.5, what=lambda: str(backend.status()))
    assert services.search.search(alpha, "vim editor").matched_count == 1
    backend.sync_now()
    assert backend.status()["outbox"]["pending"] == 0
