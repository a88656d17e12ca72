"""Two service replicas on one PostgreSQL and one cluster (issue 26): both write, search and drain the outbox
at once. Nothing is lost and nothing is doubled -- every canonical row is in the mirror at its latest version,
once, `memory check` is clean -- and both replicas give the same answers."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.container import Services, build_services, open_mirror_maintenance
from service.embedding.disabled import DisabledEmbedder
from service.errors import BackendUnavailable
from service.search.opensearch.backend import OpenSearchBackend
from service.search.opensearch.indices import IndexManager
from service.search.opensearch.permissions import denials
from service.search.opensearch.templates import Names
from tests.opensearch.conftest import mirrored_settings
from tests.support.clusters import Cluster

pytestmark = pytest.mark.postgres


@pytest.fixture
def replicas(tmp_path: Path, pg_database_url: str, os_cluster: Cluster, os_prefix: str) -> Iterator[list[Services]]:
    made = []
    for n in range(2):
        folder = tmp_path / f"replica{n}"
        folder.mkdir()
        made.append(build_services(mirrored_settings(folder, pg_database_url, os_cluster, os_prefix,
                                                     opensearch_sync_interval=0.05)))
    try:
        yield made
    finally:
        for services in made:
            services.close()


def test_concurrent_drains_lose_and_double_nothing(replicas: list[Services]) -> None:
    first, second = replicas
    profiles = [first.profiles.create(f"team{n}") for n in range(3)]
    errors: list[BaseException] = []

    def work(services: Services, n: int) -> None:
        try:
            for i in range(25):
                profile = services.profiles.get(profiles[(n + i) % 3].name)
                fact = services.facts.write(profile, title=f"Replica {n} fact {i}", text=f"Deploy note {n}-{i}.",
                                            kind="project", tags=[f"r{n}"]).fact
                if i % 5 == 0:
                    services.facts.update(profile, fact.uid, tags=[f"r{n}", "amended"])
                services.search.search(profile, f"deploy note {n}")
                backend = services.backend
                assert isinstance(backend, OpenSearchBackend)
                backend.sync_now()  # drains racing the other replica's worker and its own
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(services, n)) for n, services in enumerate(replicas)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors, errors
    for services in replicas:
        backend = services.backend
        assert isinstance(backend, OpenSearchBackend)
        backend.sync_now()
    assert first.backend.status()["outbox"]["pending"] == 0

    maintenance = open_mirror_maintenance(first.settings, first.db, first.embedder)
    try:
        for profile in profiles:
            assert maintenance.check(profile) == {}, profile.name  # every row, once, at its latest version
    finally:
        maintenance.close()
    for profile in profiles:
        for query in ("deploy note 0", "deploy note 1", "amended"):
            a = first.search.search(first.profiles.get(profile.name), query, limit=50)
            b = second.search.search(second.profiles.get(profile.name), query, limit=50)
            assert (a.matched_count, [f.fact.uid for f in a.facts]) == (b.matched_count, [f.fact.uid for f in b.facts])
            assert a.matched_count and a.mode == "lexical"


def test_a_replica_starting_while_another_creates_the_indices_blocks_no_alias(
        tmp_path: Path, pg_database_url: str, os_cluster: Cluster, os_prefix: str) -> None:
    """The moment one replica has made the facts alias and not yet the query log's, another replica's start-up
    permission probes run their writes (the facts alias exists): they must not auto-create an index named like
    the missing alias, which would refuse that alias for good (seen once in CI as "invalid_alias_name_exception:
    an index exists with the same name as the alias"). The local test node sets action.auto_create_index: false,
    so there only the osmem twin can fail; a team's cluster keeps OpenSearch's default (true)."""
    names = Names(os_prefix)
    settings = mirrored_settings(tmp_path, pg_database_url, os_cluster, os_prefix)
    client = os_cluster.client(admin=True)
    first = IndexManager(client, settings, DisabledEmbedder())
    first.install()
    first.create(names.facts, attach=True)  # the first replica, half-way
    denials(client, names)  # the other replica's probes, the facts alias there, the query log's not yet
    assert not client.indices.exists(index=names.queries)
    services = build_services(settings)
    try:
        services.facts.write(services.profiles.create("alpha"), title="Deploys", text="Deploy with Argo CD.",
                             kind="project", tags=[])
        backend = services.backend
        assert isinstance(backend, OpenSearchBackend)
        backend.sync_now()
        assert backend.status()["outbox"]["pending"] == 0
        assert client.indices.exists_alias(name=names.queries)
    finally:
        services.close()


def test_an_index_squatting_an_alias_name_is_named_and_once_deleted_the_mirror_catches_up(
        tmp_path: Path, pg_database_url: str, os_cluster: Cluster, os_prefix: str) -> None:
    """Such an index left by an earlier release (or anything else writing under the deployment's names): the
    status names it and the fix; deleted, the service makes the alias and delivers what was pending."""
    names = Names(os_prefix)
    client = os_cluster.client(admin=True)
    client.indices.create(index=names.queries)
    services = build_services(mirrored_settings(tmp_path, pg_database_url, os_cluster, os_prefix))
    try:
        alpha = services.profiles.create("alpha")
        services.facts.write(alpha, title="Deploys", text="Deploy with Argo CD.", kind="project", tags=[])
        backend = services.backend
        assert isinstance(backend, OpenSearchBackend)
        with pytest.raises(BackendUnavailable) as refused:
            backend.sync_now()
        assert f"delete it (DELETE /{names.queries}" in refused.value.message
        problems = " ".join(backend.status()["problems"])
        assert f"delete it (DELETE /{names.queries}" in problems, problems
        assert services.search.search(alpha, "argo deploys").mode == "degraded"  # the canonical store answers
        maintenance = open_mirror_maintenance(services.settings, services.db, services.embedder)
        try:  # `memory check` names it too, not with `memory reindex` (which cannot swap the alias onto it)
            found = maintenance.check(alpha)["indices"]
            assert f"an index is named {names.queries}" in found and "memory reindex" not in found, found
        finally:
            maintenance.close()
        client.indices.delete(index=names.queries)
        backend.sync_now()
        status = backend.status()
        assert status["outbox"]["pending"] == 0 and not status["problems"], status
        assert services.search.search(alpha, "argo deploys").matched_count == 1
        assert client.indices.exists_alias(name=names.queries)
    finally:
        services.close()
