"""The clusters the search tests run against, as session fixtures (registered in tests/conftest.py).

- osmem: the osmem-server OpenSearch emulator (PyPI osmem-server), one process per session;
- real_opensearch: a real OpenSearch by the first route that works -- OPENSEARCH_URL, a local node built
  from Maven Central (tests/support/opensearch_node.py), a testcontainers container when Docker answers.
  When none works the tests skip with the reasons, except under CI (CI set), where that is a failure.
- secured_opensearch: a local node with the security plugin's demo configuration (https with the demo CA,
  basic auth; tests/support/opensearch_node.py), as the Node: url, ca_file, admin, admin_cert,
  client_options(), create_user/create_role/delete_user/delete_role. Local route only (skip, or under CI
  fail, when it cannot be built or started). Import it into the test module that needs it, and mark the tests
  `secured`. On OpenSearch 3.x (OPENSEARCH_TEST_VERSION), whose security plugin Maven Central does not serve,
  the plugin is the zip `make opensearch-security-3` builds from its source tag (tests/support/opensearch/
  security-3); without it the `secured` tests skip, and fail under CI (tests/conftest.py).
- open_opensearch: a local node without security, as the Node; real_opensearch's local route where no secured
  node can be had (3.x without that zip).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from opensearchpy import OpenSearch
from osmem_server import OsmemServer

from service.search.opensearch.role import role
from service.search.opensearch.templates import Names
from tests.support import opensearch_node

IMAGE = f"opensearchproject/opensearch:{opensearch_node.VERSION}"  # the same version as the local node


@pytest.fixture(scope="session")
def osmem() -> Iterator[OsmemServer]:
    server = OsmemServer.start(japanese=False)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def real_opensearch(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """A real OpenSearch for the session, by the first route that works (see the module docstring). On the
    local route it is the session's secured node (TLS with its demo CA, basic auth), and the service runs as a
    least-privilege user made here with exactly the role `memory opensearch role` prints (for every test
    prefix `mt-*`, the per-profile layout of earlier releases included); the tests' own checks and cleanup
    use the node's admin."""
    url = os.environ.get("OPENSEARCH_URL")
    if url:
        yield Cluster(url.rstrip("/"), os.environ.get("OPENSEARCH_USERNAME") or None,
                      os.environ.get("OPENSEARCH_PASSWORD") or None, os.environ.get("OPENSEARCH_CA_CERTS") or None)
        return
    route = os.environ.get("TEST_OPENSEARCH", "auto")  # auto | local | docker
    reasons: list[str] = []
    if route in ("auto", "local"):
        local = "secured_opensearch" if opensearch_node.SECURITY_PLUGIN_AVAILABLE else "open_opensearch"
        try:
            node = request.getfixturevalue(local)
        except pytest.skip.Exception as exc:
            reasons.append(str(exc))
        else:
            yield least_privileged(node, "memory-tests") if node.secured else Cluster(node.url)
            return
    if route in ("auto", "docker"):
        try:
            yield from (Cluster(url) for url in _container())
            return
        except _NoDocker as exc:
            reasons.append(f"docker: {exc}")
    message = "real-OpenSearch tests cannot run: " + "; ".join(reasons)
    if os.environ.get("CI"):  # CI must run them: a skip there would hide the whole scale-out half
        pytest.fail(message)
    pytest.skip(message)


def least_privileged(node: opensearch_node.Node, user: str) -> Cluster:
    """A user of the secured node holding the service's least-privilege role for the test prefixes `mt-*`."""
    node.create_role(f"{user}-role", **_role_arguments(role(Names("mt-*"), install="auto", legacy=True)))
    password = f"{secrets.token_urlsafe(18)}-Aa1"  # random, so "strong" to the plugin's password rules
    node.create_user(user, password, roles=[f"{user}-role"])
    assert node.ca_file is not None and node.admin is not None
    return Cluster(node.url, user, password, str(node.ca_file), admin=node.admin)


def _role_arguments(body: dict[str, object]) -> dict[str, object]:
    return {"cluster_permissions": body["cluster_permissions"], "index_permissions": body["index_permissions"]}


@pytest.fixture(scope="session")
def secured_opensearch() -> Iterator[opensearch_node.Node]:
    """A secured local node for the session (see the module docstring)."""
    if not opensearch_node.SECURITY_PLUGIN_AVAILABLE:
        message = f"needs the security plugin: {opensearch_node.security_plugin_missing()}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    yield from _local_node(secured=True)


@pytest.fixture(scope="session")
def open_opensearch() -> Iterator[opensearch_node.Node]:
    """A local node without the security plugin, for the session."""
    yield from _local_node(secured=False)


def _local_node(*, secured: bool) -> Iterator[opensearch_node.Node]:
    try:
        node = opensearch_node.start_node(progress=lambda line: print(f"[opensearch] {line}", flush=True),
                                          secured=secured)
    except opensearch_node.NodeUnavailable as exc:
        message = f"{'secured-' if secured else ''}OpenSearch tests cannot run: local node: {exc}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    try:
        yield node
    finally:
        node.remove()


class _NoDocker(Exception):
    pass


def _container() -> Iterator[str]:
    try:
        import docker

        docker.from_env().ping()
    except Exception as exc:
        raise _NoDocker(f"no Docker engine answers ({type(exc).__name__})") from exc
    from testcontainers.community.opensearch import OpenSearchContainer

    container = OpenSearchContainer(image=os.environ.get("OPENSEARCH_IMAGE", IMAGE))
    container.with_env("OPENSEARCH_JAVA_OPTS", "-Xms512m -Xmx512m")
    container.start()
    try:
        config = container.get_config()
        yield f"http://{config['host']}:{config['port']}"
    finally:
        container.stop()


@dataclass(frozen=True)
class Cluster:
    """A cluster the tests use, and how the service reaches it (user, password, CA as its settings say).
    `admin` is the tests' own account for cleaning up (templates and pipelines need more than the service's
    role); None on a cluster without security."""

    url: str
    username: str | None = None
    password: str | None = None
    ca_file: str | None = None
    admin: tuple[str, str] | None = None

    def settings(self, prefix: str) -> dict[str, object]:
        """The MEMORY_OPENSEARCH_* settings of a service using this cluster under `prefix`."""
        values: dict[str, object] = {"opensearch_url": self.url, "opensearch_prefix": prefix}
        if self.username:
            values.update(opensearch_username=self.username, opensearch_password=self.password)
        if self.ca_file:
            values["opensearch_ca_certs"] = self.ca_file
        return values

    def env(self, prefix: str) -> dict[str, str]:
        """The same as MEMORY_* environment variables (for the CLI and `memory serve`)."""
        return {f"MEMORY_{key.upper()}": str(value) for key, value in self.settings(prefix).items()}

    def client(self, *, admin: bool = False) -> OpenSearch:
        auth = self.admin if admin else ((self.username, self.password) if self.username else None)
        options: dict[str, object] = {"hosts": [self.url]}
        if auth:
            options["http_auth"] = auth
        if self.ca_file:
            options.update(use_ssl=True, verify_certs=True, ca_certs=self.ca_file)
        return OpenSearch(**options)  # type: ignore[arg-type]


def new_prefix() -> str:
    """A deployment prefix of a test's own: everything the test makes on a shared cluster starts with it."""
    return f"mt-{secrets.token_hex(4)}"


def remove_prefix(cluster: Cluster, prefix: str) -> None:
    """Remove every object of the deployment `prefix` (and nothing else) from the cluster."""
    client = cluster.client(admin=cluster.admin is not None)
    try:
        client.indices.delete(index=f"{prefix}-*", ignore_unavailable=True, allow_no_indices=True,
                              expand_wildcards="all")
        for name in (f"{prefix}-facts", f"{prefix}-queries"):
            client.indices.delete_index_template(name=name, ignore=[404])
        client.search_pipeline.delete(id=f"{prefix}-hybrid", ignore=[400, 404])  # osmem has no pipelines (400)
    finally:
        client.close()
