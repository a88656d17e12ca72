"""OpenSearch stopped mid-run: writes still succeed and pile up in the outbox, searches fall back to the
canonical store (matched_count null), /readyz says degraded with the lag; after the restart the backlog
drains and `memory check` is clean.

Run on three clusters that die differently:
- osmem keeps nothing on disk, so the restarted cluster is EMPTY: what brings the mirror back is the
  backend noticing the missing aliases, recreating the indices and backfilling them from the canonical
  store, plus the outbox rows written during the outage;
- a real OpenSearch node of this module's own (tests/support/opensearch_node.py), killed with SIGKILL and
  started again on its data: only the outbox rows written during the outage have to be delivered;
- an OpenSearch container (testcontainers; marked `containers`, run by `make test-containers`), killed with
  `docker kill` and started again on its data, on the same host port."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from osmem_server import OsmemServer

from service.container import Services, build_services, embedded_search, open_mirror_maintenance
from service.domain.ports import SearchRequest
from service.embedding.disabled import DisabledEmbedder
from service.errors import BackendUnavailable
from service.search.opensearch.backend import OpenSearchBackend
from service.search.opensearch import worker
from tests.opensearch import corpus
from tests.opensearch.conftest import mirrored_settings
from tests.support import opensearch_node
from tests.support.clusters import Cluster, least_privileged, new_prefix
from tests.support.containers.fixtures import OpenSearchNode
from bench.lib.postgres import free_port
from bench.lib.waiting import until

@dataclass
class Killable:
    """An osmem process of our own on a fixed loopback port, so it can be killed and started again."""

    addr: str
    server: OsmemServer | None = None

    @property
    def url(self) -> str:
        return f"http://{self.addr}"

    @property
    def access(self) -> Cluster:
        return Cluster(self.url)

    def start(self) -> None:
        self.server = OsmemServer.start(japanese=False, addr=self.addr)

    def kill(self) -> None:
        assert self.server is not None
        self.server.process.kill()  # no goodbye: the cluster just disappears
        self.server.process.wait(10)
        self.server = None


@dataclass
class KillableNode:
    """A real OpenSearch node: SIGKILL, then a start on the same data and port."""

    node: opensearch_node.Node
    access: Cluster  # the service's least-privilege user on it

    @property
    def url(self) -> str:
        return self.node.url

    def start(self) -> None:
        self.node.start()

    def kill(self) -> None:
        self.node.stop(sig=signal.SIGKILL)


@pytest.fixture(scope="module")
def real_node(real_opensearch: Cluster) -> Iterator[tuple[opensearch_node.Node, Cluster]]:
    """A node of this module's own (the session's real cluster must stay up for the other tests), of the session
    node's kind: secured, with the service's least-privilege user on it, where the security plugin can be had
    (2.x; 3.x with the zip of `make opensearch-security-3`), else open."""
    secured = opensearch_node.SECURITY_PLUGIN_AVAILABLE
    if not opensearch_node.home(secured=secured).joinpath(".complete").exists():
        pytest.skip("the local OpenSearch node is not built here (the session's cluster came by another route)")
    node = opensearch_node.Node.create(opensearch_node.home(secured=secured))
    node.start()
    try:
        yield node, least_privileged(node, "memory-outage") if secured else Cluster(node.url)
    finally:
        node.remove()


@pytest.fixture(params=[pytest.param("osmem", marks=pytest.mark.osmem),
                        pytest.param("opensearch", marks=pytest.mark.opensearch),
                        pytest.param("container", marks=pytest.mark.containers)])
def cluster(request: pytest.FixtureRequest) -> Iterator[Killable | KillableNode | OpenSearchNode]:
    if request.param == "container":  # testcontainers: `docker kill`, then `docker start` (its data is back)
        node: OpenSearchNode = request.getfixturevalue("opensearch_container")
        yield node
        return
    if request.param == "opensearch":
        node, access = request.getfixturevalue("real_node")
        if not node.running():
            node.start()
        yield KillableNode(node, access)
        return
    killable = Killable(addr=f"127.0.0.1:{free_port()}")
    killable.start()
    try:
        yield killable
    finally:
        if killable.server is not None:
            killable.server.close()


def backend_of(services: Services) -> OpenSearchBackend:
    assert isinstance(services.backend, OpenSearchBackend)
    return services.backend


def test_outage_writes_succeed_search_degrades_backlog_drains(
        tmp_path: Path, database_url: str, cluster: Killable | KillableNode | OpenSearchNode) -> None:
    with build_services(mirrored_settings(tmp_path, database_url, cluster.access, new_prefix())) as services:
        backend = backend_of(services)
        alpha = services.profiles.create("alpha")
        uids = corpus.load(services, alpha)
        assert services.search.search(alpha, "deploy kubernetes cluster").matched_count == 1
        backend.sync_now()  # the search's query-log row is delivered by the worker, off the search's path

        cluster.kill()
        started = time.monotonic()
        new = services.facts.write(alpha, title="Kubernetes upgrade", text="Deploy the cluster upgrade on Friday.",
                                   kind="project", tags=["infra"]).fact
        services.facts.update(alpha, uids["Prefers pytest"], tags=["testing", "python"])
        services.facts.forget(alpha, uids["Deploys run on Kubernetes"])
        outcome = services.search.search(alpha, "deploy kubernetes cluster")
        assert time.monotonic() - started < 5  # the dead cluster never holds a request up
        assert outcome.matched_count is None and outcome.mode == "degraded"
        assert [f.fact.uid for f in outcome.facts] == [new.uid]  # answered from the canonical store
        assert services.query_log.listing(alpha, 1)[0]["matched_count"] is None

        ready = services.readiness()
        search = ready["checks"]["search"]
        assert ready["ready"] is True and search["state"] == "degraded" and search["reachable"] is False
        assert search["outbox"]["pending"] == 4  # 3 fact changes (forget is one) + 1 query-log row
        assert search["outbox"]["oldest_pending_age_s"] >= 0
        with pytest.raises(BackendUnavailable):
            backend.sync_now()  # the worker's cycle fails (and backs off) while the cluster is down

        cluster.start()  # osmem: a fresh, empty cluster on the same address; a real node: its data is back
        backend.sync_now()
        status = backend.status()
        assert status["state"] == "ready" and status["outbox"]["pending"] == 0
        maintenance = open_mirror_maintenance(services.settings, services.db, services.embedder)
        try:
            assert maintenance.check(alpha) == {}
        finally:
            maintenance.close()
        embedded = embedded_search(services.db, DisabledEmbedder(), services.settings)
        try:
            request = SearchRequest(profile_id=alpha.id, profile="alpha", query="deploy kubernetes cluster", limit=8)
            assert backend.search(request).matched_count == embedded.search(request).matched_count == 1
        finally:
            embedded.close()


SHORT_BACKOFF = 2.0  # seconds: the worker's longest wait between failed cycles in the test below


def test_the_background_worker_drains_after_recovery(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     cluster: Killable | KillableNode | OpenSearchNode) -> None:
    # The same doubling, capped lower than the served minute: a node's restart takes 20-30 s here, and with the
    # cap at a minute the worker's next try came up to ~25 s after the node was back (half this test's time).
    monkeypatch.setattr(worker, "MAX_BACKOFF", SHORT_BACKOFF)
    settings = mirrored_settings(tmp_path, f"sqlite:///{tmp_path}/memory.db", cluster.access, new_prefix(),
                                 opensearch_sync_interval=0.2)
    with build_services(settings) as services:
        alpha = services.profiles.create("alpha")
        services.facts.write(alpha, title="First", text="before the outage", kind="user", tags=[])
        cluster.kill()
        for i in range(3):
            services.facts.write(alpha, title=f"Outage {i}", text="written while the cluster was down",
                                 kind="user", tags=[])
        assert backend_of(services).status()["outbox"]["pending"] == 3
        time.sleep(0.5)  # a few failed cycles: the worker backs off
        cluster.start()
        # the worker's delay doubled during the outage (and the restart: a secured node answers 503 until its
        # security index is up, longer on a busy machine), so its next try can be up to SHORT_BACKOFF away
        until(lambda: backend_of(services).status()["outbox"]["pending"] == 0, SHORT_BACKOFF + 60, every=0.1,
              what=lambda: f"the worker draining the outbox (now {backend_of(services).status()['outbox']})")
        # The worker delivers without waiting for a refresh: searchable within the index's refresh interval.
        backend_of(services).client.indices.refresh(index=backend_of(services).names.facts)
        found = services.search.search(alpha, "written outage")
        assert found.matched_count == 3 and found.mode == "lexical"
