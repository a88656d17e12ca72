"""compose.yaml brought up on a Docker engine and used as a user would (issue 36), with the commands of
docs/operators.md ("Containers") exactly:

    docker compose up -d --build --wait
    docker compose exec memory memory profile create work
    docker compose exec memory memory token issue work
    (an MCP write and search from the host, through the published port)
    docker compose down -v

On a machine whose root cannot raise resource limits (no CAP_SYS_RESOURCE, as here), COMPOSE_FILE adds
compose.no-ulimits.yaml, as docs/operators.md says; the test's own project name (COMPOSE_PROJECT_NAME) and host port
(MEMORY_HOST_PORT) keep it away from a stack of the user's. The tests run in order and share the stack, once on
compose.yaml's own OpenSearch (3.5.0) and once with OPENSEARCH_IMAGE on the 2.x line (2.19.1)."""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest

from tests.containers.conftest import REPO, docker
from tests.support.mcp_client import call, mcp_client

pytestmark = pytest.mark.containers
PROJECT = "memory-test"
DEFAULT_OPENSEARCH = "3.5.0"  # compose.yaml's image when OPENSEARCH_IMAGE is not set
CAP_SYS_RESOURCE = 24


def can_raise_limits() -> bool:
    """Whether this process holds CAP_SYS_RESOURCE (what compose.yaml's opensearch ulimits need of the engine's
    root)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            return bool(int(line.split()[1], 16) >> CAP_SYS_RESOURCE & 1)
    return True


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module", params=[DEFAULT_OPENSEARCH, "2.19.1"])
def stack(engine: None, request: pytest.FixtureRequest) -> Iterator[dict]:
    """The environment the compose commands run with, and what the tests learn on the way (the token)."""
    env = {"COMPOSE_PROJECT_NAME": PROJECT, "MEMORY_HOST_PORT": str(free_port())}
    if request.param != DEFAULT_OPENSEARCH:
        env["OPENSEARCH_IMAGE"] = f"opensearchproject/opensearch:{request.param}"
    if not can_raise_limits():
        env["COMPOSE_FILE"] = "compose.yaml:compose.no-ulimits.yaml"
    state: dict = {"env": env, "url": f"http://127.0.0.1:{env['MEMORY_HOST_PORT']}", "opensearch": request.param}
    try:
        yield state
    finally:
        docker("compose", "down", "-v", env=env, check=False, timeout=300)


def compose(stack: dict, *args: str, timeout: float = 300) -> str:
    return docker("compose", *args, env=stack["env"], timeout=timeout).stdout


def test_up_brings_every_service_to_healthy(stack: dict) -> None:
    started = time.monotonic()
    compose(stack, "up", "-d", "--build", "--wait", timeout=1200)
    print(f"docker compose up -d --build --wait: {time.monotonic() - started:.0f} s")
    services = [json.loads(line) for line in compose(stack, "ps", "--format", "json").splitlines() if line.strip()]
    assert {(s["Service"], s["Health"]) for s in services} == {
        ("memory", "healthy"), ("postgres", "healthy"), ("opensearch", "healthy")}
    node = json.loads(compose(stack, "exec", "opensearch", "curl", "-fsS", "http://localhost:9200/"))
    assert node["version"]["number"] == stack["opensearch"]


def test_a_profile_and_a_token_inside_the_app_container(stack: dict) -> None:
    assert "work" in compose(stack, "exec", "memory", "memory", "profile", "create", "work")
    printed = compose(stack, "exec", "memory", "memory", "token", "issue", "work")
    lines = printed.splitlines()
    first = next(i for i, line in enumerate(lines) if re.match(r"token \S+ for profile work \(shown once", line))
    stack["token"] = lines[first + 1].strip()
    assert len(stack["token"]) >= 32
    # The URL printed is the published one (MEMORY_HOST_PORT), not the container's own 8080.
    urls = set(re.findall(r"https?://[^\s'\"]+/mcp/work", printed))
    assert urls == {f"{stack['url']}/mcp/work"}, printed


def test_readyz_is_ready_on_database_search_and_embedder(stack: dict) -> None:
    bare = httpx.get(f"{stack['url']}/readyz", timeout=10)
    assert bare.status_code == 200 and bare.json()["ready"] is True
    ready = httpx.get(f"{stack['url']}/readyz", headers={"Authorization": f"Bearer {stack['token']}"},
                      timeout=10).json()
    checks = ready["checks"]
    assert (checks["database"]["state"], checks["database"]["dialect"]) == ("ready", "postgresql")
    assert (checks["search"]["backend"], checks["search"]["state"]) == ("opensearch", "ready")
    assert checks["embedder"]["state"] == "ready"


def test_an_mcp_write_and_search_from_the_host(stack: dict) -> None:
    async def session() -> tuple[dict, dict]:
        async with mcp_client(stack["url"], "work", stack["token"]) as client:
            written = await call(client, "memory_write", title="Compose deploys",
                                 text="The stack runs with docker compose on the build host.", kind="project",
                                 tags=["infra"])
            found = await call(client, "memory_search", query="how is the stack deployed with docker compose")
            return written, found

    written, found = anyio.run(session)
    assert found["mode"] == "hybrid" and found["matched_count"] >= 1
    assert written["fact"]["uid"] in [f["uid"] for f in found["facts"]]


def test_down_removes_the_containers_and_the_volumes(stack: dict) -> None:
    compose(stack, "down", "-v")
    label = f"label=com.docker.compose.project={PROJECT}"
    assert docker("ps", "-a", "--filter", label, "--format", "{{.Names}}").stdout.strip() == ""
    assert docker("volume", "ls", "--filter", label, "--format", "{{.Name}}").stdout.strip() == ""
