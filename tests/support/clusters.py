"""The clusters the search tests run against, as session fixtures (registered in tests/conftest.py).

- osmem: the osmem-server OpenSearch emulator (PyPI osmem-server), one process per session;
- real_opensearch: a real OpenSearch by the first route that works -- OPENSEARCH_URL, a local node built
  from Maven Central (tests/support/opensearch_node.py), a testcontainers container when Docker answers.
  When none works the tests skip with the reasons, except under CI (CI set), where that is a failure.
- secured_opensearch: a local node with the security plugin's demo configuration (https with the demo CA,
  basic auth; tests/support/opensearch_node.py), as the Node: url, ca_file, admin, admin_cert,
  client_options(), create_user/create_role/delete_user/delete_role. Local route only (skip, or under CI
  fail, when it cannot be built or started). Import it into the test module that needs it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from opensearchpy import OpenSearch
from osmem_server import OsmemServer

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
def real_opensearch() -> Iterator[str]:
    """A real OpenSearch for the session, by the first route that works (see the module docstring)."""
    url = os.environ.get("OPENSEARCH_URL")
    if url:
        yield url.rstrip("/")
        return
    route = os.environ.get("TEST_OPENSEARCH", "auto")  # auto | local | docker
    reasons: list[str] = []
    if route in ("auto", "local"):
        try:
            node = opensearch_node.start_node(progress=lambda line: print(f"[opensearch] {line}", flush=True))
        except opensearch_node.NodeUnavailable as exc:
            reasons.append(f"local node: {exc}")
        else:
            try:
                yield node.url
            finally:
                node.remove()
            return
    if route in ("auto", "docker"):
        try:
            yield from _container()
            return
        except _NoDocker as exc:
            reasons.append(f"docker: {exc}")
    message = "real-OpenSearch tests cannot run: " + "; ".join(reasons)
    if os.environ.get("CI"):  # CI must run them: a skip there would hide the whole scale-out half
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def secured_opensearch() -> Iterator[opensearch_node.Node]:
    """A secured local node for the session (see the module docstring)."""
    try:
        node = opensearch_node.start_node(progress=lambda line: print(f"[opensearch] {line}", flush=True),
                                          secured=True)
    except opensearch_node.NodeUnavailable as exc:
        message = f"secured-OpenSearch tests cannot run: local node: {exc}"
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


def wipe(url: str) -> None:
    """Remove what a previous test left in a real cluster (it is shared by the whole session)."""
    client = OpenSearch(hosts=[url])
    try:
        client.indices.delete(index="memory-*", ignore_unavailable=True, allow_no_indices=True)
        for name in ("memory-facts", "memory-queries"):
            client.indices.delete_index_template(name=name, ignore=[404])
        client.search_pipeline.delete(id="memory-hybrid", ignore=[404])
    finally:
        client.close()
