"""Session fixtures of the container tests (marked `containers`; registered in tests/conftest.py): a PostgreSQL and
an OpenSearch container started with testcontainers from the images images.py builds (their official names). They
need a Docker engine: `make test-containers` starts one; without one they skip with the reason, except under CI."""

from __future__ import annotations

import json
import os
import socket
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.clusters import Cluster
from tests.support.containers.images import OPENSEARCH_VERSION

POSTGRES_IMAGE = "postgres:17"
OPENSEARCH_IMAGE = f"opensearchproject/opensearch:{OPENSEARCH_VERSION}"
GREEN_WITHIN = 120.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _engine() -> None:
    try:
        import docker

        docker.from_env().ping()
    except Exception as exc:  # noqa: BLE001 - any failure means: no engine to use
        message = f"container tests need a Docker engine (`make test-containers` starts one): {type(exc).__name__}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@dataclass
class OpenSearchNode:
    """An OpenSearch container on a fixed host port (so it keeps its address across a kill and a start)."""

    container: Any  # testcontainers' OpenSearchContainer
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def access(self) -> Cluster:
        return Cluster(self.url)

    def kill(self) -> None:
        self.container.get_wrapped_container().kill()

    def start(self) -> None:
        """Start the killed container again (its data is back) and wait until it is green."""
        self.container.get_wrapped_container().start()
        wait_green(self.url)


def wait_green(url: str, within: float = GREEN_WITHIN) -> None:
    """Until the node says green (opensearch-py's `timeout` keyword is its own socket timeout, not the cluster's
    wait: the health call goes through urllib)."""
    deadline = time.monotonic() + within
    health = f"{url}/_cluster/health?wait_for_status=green&timeout=2s"
    while True:
        try:
            with urllib.request.urlopen(health, timeout=10) as answer:
                if json.load(answer)["status"] == "green":
                    return
        except (OSError, ValueError, KeyError):  # not up yet (refused, reset, a 408 while not green)
            if time.monotonic() > deadline:
                raise
        if time.monotonic() > deadline:
            raise TimeoutError(f"{url} not green within {within:.0f} s")
        time.sleep(0.5)


@pytest.fixture(scope="session")
def opensearch_container() -> Iterator[OpenSearchNode]:
    _engine()
    from testcontainers.community.opensearch import OpenSearchContainer

    port = _free_port()
    container = OpenSearchContainer(image=OPENSEARCH_IMAGE).with_bind_ports(9200, port)
    container.with_env("OPENSEARCH_JAVA_OPTS", "-Xms512m -Xmx512m")
    container.start()  # waits for green (its own health check)
    try:
        yield OpenSearchNode(container, port)
    finally:
        container.stop()


@pytest.fixture(scope="session")
def postgres_container() -> Iterator[str]:
    """The container's database URL (SQLAlchemy, psycopg 3)."""
    _engine()
    from testcontainers.community.postgres import PostgresContainer

    container = PostgresContainer(POSTGRES_IMAGE, username="memory", password="memory-test", dbname="memory",
                                  driver="psycopg")
    container.start()  # waits until psql answers inside it
    try:
        yield container.get_connection_url()
    finally:
        container.stop()
