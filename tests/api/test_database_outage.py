"""A real database outage (issue 24): PostgreSQL stopped under a running service. Every caller — REST, /mcp,
the tools, /readyz even on loopback — learns only "database unavailable"; the driver's message (host, port,
user) goes to the server log only."""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Iterator

import httpx
import pytest

from bench.lib import postgres
from service.api.app import create_app
from service.config import Settings
from service.container import build_services
from tests.conftest import make_profile
from tests.support.server import running

pytestmark = pytest.mark.postgres

ACCEPT = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


@pytest.fixture
def own_cluster() -> Iterator[postgres.Cluster]:
    """A cluster of this test's own (the session's is shared by every other test)."""
    try:
        cluster = postgres.start_cluster()
    except postgres.PostgresUnavailable as exc:
        pytest.skip(f"PostgreSQL tests skipped: {exc}")
    try:
        yield cluster
    finally:
        cluster.stop()


def _call(tool: str, **arguments: object) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}


def test_callers_learn_only_that_the_database_is_unavailable(own_cluster: postgres.Cluster, tmp_path,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    url = postgres.fresh_database(own_cluster.url, "outage")
    port = url.split("@127.0.0.1:")[1].split("/")[0]
    services = build_services(Settings(data_dir=tmp_path, database_url=url, embedder="none"))
    alpha = make_profile(services, "alpha")
    uid = services.facts.write(services.profiles.get("alpha"), title="Deploys", text="Deploys run on Fridays.",
                               kind="project", tags=[]).fact.uid
    try:
        with running(create_app(services=services)) as base:
            assert httpx.get(f"{base}/readyz").json()["ready"] is True
            assert own_cluster._stop is not None
            subprocess.run(own_cluster._stop, check=True, capture_output=True, timeout=60)  # the outage
            caplog.clear()
            headers = {**ACCEPT, **alpha.headers}
            answers = {
                "readyz": httpx.get(f"{base}/readyz"),
                "stats": httpx.get(f"{base}/api/alpha/stats", headers=headers),
                "facts": httpx.get(f"{base}/api/alpha/facts", headers=headers),
                "fact": httpx.get(f"{base}/api/alpha/facts/{uid}", headers=headers),
                "queries": httpx.get(f"{base}/api/alpha/queries", headers=headers),
                "profiles": httpx.get(f"{base}/api/profiles", headers=headers),
                "tools/list": httpx.post(f"{base}/mcp/alpha", headers=headers,
                                         json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
                "search": httpx.post(f"{base}/mcp/alpha", headers=headers, json=_call("memory_search", query="deploys")),
                "write": httpx.post(f"{base}/mcp/alpha", headers=headers,
                                    json=_call("memory_write", title="T", text="t", kind="user")),
            }
    finally:
        services.close()
    for name, response in answers.items():
        assert response.status_code == 503, (name, response.status_code, response.text)
        text = response.text
        assert "database unavailable" in text, (name, text)
        for leak in (port, "127.0.0.1", "postgres", "psycopg", "connection", "Traceback"):
            assert leak not in text, (name, leak, text)
    ready = answers["readyz"].json()
    assert ready["ready"] is False and ready["checks"]["database"] == {"state": "error", "error": "database unavailable"}
    logged = "\n".join(r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING)
    assert port in logged  # the detail is in the server's log
