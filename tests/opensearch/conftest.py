"""Fixtures of the OpenSearch mirror tests.

- os_cluster: a cluster per test, run twice: on the osmem-server test double (PyPI osmem-server, one
  process per session, a clone per test; no knn, no search pipelines) and on a real OpenSearch (marker
  `opensearch`), found by the first route that works:
    1. OPENSEARCH_URL: a cluster you run (the tests create and remove only objects under their own random
       prefixes, `mt-…`: safe on a shared cluster);
    2. a local single node built from Maven Central (tests/support/opensearch_node.py; needs a JDK 17 and
       Maven; TEST_OPENSEARCH=local forces it);
    3. a testcontainers OpenSearch when a Docker engine answers (TEST_OPENSEARCH=docker forces it; the image
       is OPENSEARCH_IMAGE, default the local node's version).
  When none works the tests skip with the reasons -- except under CI (CI set), where that is a failure.
  All three routes run the same tests. os_prefix: the test's own deployment prefix (MEMORY_OPENSEARCH_PREFIX),
  whose objects are removed after it; `prefix`: the same on the real cluster alone.
- a killable osmem process on a fixed loopback port, for the fault tests (osmem keeps no data on disk:
  a restart is a fresh, empty cluster).
- mirrored services: build_services with MEMORY_SEARCH=opensearch, MEMORY_EMBEDDER=none, over the
  `database_url` fixture (SQLite and PostgreSQL) or over PostgreSQL only (`pg_database_url`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from service.config import Settings
from service.container import Services, build_services
from service.search.opensearch.backend import OpenSearchBackend
from service.search.opensearch.templates import Names
from bench.lib import postgres
from tests.support.clusters import Cluster, new_prefix, remove_prefix

SYNC_INTERVAL = 60.0  # the worker's first cycle runs at start-up; tests call sync_now() for the rest


@pytest.fixture(params=[pytest.param("osmem", marks=pytest.mark.osmem),
                        pytest.param("opensearch", marks=pytest.mark.opensearch)])
def os_cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """A cluster for this test: an osmem clone of its own, or the session's real cluster (the test's objects
    live under its own prefix there, os_prefix)."""
    if request.param == "opensearch":
        yield request.getfixturevalue("real_opensearch")
        return
    clone = request.getfixturevalue("osmem").clone()
    try:
        yield Cluster(clone.url)
    finally:
        clone.close()


@pytest.fixture
def os_prefix(os_cluster: Cluster) -> Iterator[str]:
    """This test's deployment prefix: all it creates on the cluster starts with it, and goes with the test."""
    prefix = new_prefix()
    try:
        yield prefix
    finally:
        remove_prefix(os_cluster, prefix)


@pytest.fixture
def prefix(real_opensearch: Cluster) -> Iterator[str]:
    """A deployment prefix of the test's own on the session's real cluster (the tests that need no osmem twin)."""
    name = new_prefix()
    try:
        yield name
    finally:
        remove_prefix(real_opensearch, name)


@pytest.fixture
def as_user(real_opensearch: Cluster, request: pytest.FixtureRequest) -> Iterator[Callable[[str, dict], Cluster]]:
    """as_user(name, role body) -> the session's secured cluster as a new user holding exactly that role (the user
    and its role are removed afterwards); skips unless the secured local node serves (users and roles)."""
    if real_opensearch.admin is None:
        pytest.skip("needs the secured local node (users and roles)")
    node = request.getfixturevalue("secured_opensearch")
    made: list[str] = []

    def make(name: str, body: dict) -> Cluster:
        node.create_role(f"{name}-role", cluster_permissions=body["cluster_permissions"],
                         index_permissions=body["index_permissions"])
        password = "Lp-9x!" + name[-8:] + "Qz7"
        node.create_user(name, password, roles=[f"{name}-role"])
        made.append(name)
        return Cluster(real_opensearch.url, name, password, real_opensearch.ca_file, real_opensearch.admin)

    yield make
    for name in made:
        node.delete_user(name)
        node.delete_role(f"{name}-role")


def names(prefix: str) -> Names:
    return Names(prefix)


def settle(services: Services) -> None:
    """Deliver everything pending and make it searchable (a real cluster refreshes once a second)."""
    backend = services.backend
    assert isinstance(backend, OpenSearchBackend)
    backend.sync_now()
    backend.client.indices.refresh(index=f"{backend.names.facts},{backend.names.queries}")


@pytest.fixture
def os_client(os_cluster: Cluster) -> Iterator[OpenSearch]:
    """The tests' own look at the cluster (the admin on a secured one; the service runs as its own user)."""
    client = os_cluster.client(admin=os_cluster.admin is not None)
    yield client
    client.close()


@pytest.fixture
def pg_database_url(request: pytest.FixtureRequest) -> str:
    """A fresh PostgreSQL database (for the checks that must run against Postgres as canonical store)."""
    cluster = request.getfixturevalue("pg_cluster")
    template = request.getfixturevalue("pg_template")
    return postgres.fresh_database(cluster.url, f"t_{uuid.uuid4().hex[:16]}", template=template)


def mirrored_settings(tmp_path: Path, database_url: str, cluster: Cluster, prefix: str, **extra: object) -> Settings:
    values: dict[str, object] = {
        "data_dir": tmp_path, "database_url": database_url, "embedder": "none", "search": "opensearch",
        **cluster.settings(prefix), "opensearch_sync_interval": SYNC_INTERVAL, "opensearch_timeout": 5.0,
    }
    values.update(extra)
    return Settings(**values)  # type: ignore[arg-type]


@pytest.fixture
def os_settings(tmp_path: Path, database_url: str, os_cluster: Cluster, os_prefix: str) -> Settings:
    return mirrored_settings(tmp_path, database_url, os_cluster, os_prefix)


@pytest.fixture
def os_services(os_settings: Settings) -> Iterator[Services]:
    with build_services(os_settings) as svc:
        yield svc


@pytest.fixture
def pg_os_services(tmp_path: Path, pg_database_url: str, os_cluster: Cluster, os_prefix: str) -> Iterator[Services]:
    with build_services(mirrored_settings(tmp_path, pg_database_url, os_cluster, os_prefix)) as svc:
        yield svc
