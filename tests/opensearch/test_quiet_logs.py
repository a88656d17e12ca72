"""A cluster the service cannot use for good (here: its CA missing, so every TLS handshake fails) under steady use:
`memory serve` writes one line per kind of failure with what to do, then counts (service.logs.Repeats), and
neither the OpenSearch client nor urllib3 prints a traceback per request (issue 37: 297 lines in 10 s before)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from bench.lib.postgres import free_port
from bench.lib.waiting import until
from service.config import Settings
from service.container import build_services
from tests.support.clusters import Cluster

pytestmark = [pytest.mark.opensearch, pytest.mark.secured]
ROOT = Path(__file__).resolve().parents[2]
BUSY_SECONDS = 12.0
MOST_LINES = 40


def rpc(client: httpx.Client, tool: str, arguments: dict) -> dict:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    result = client.post("/mcp/alpha", json=body).json()["result"]
    assert not result.get("isError"), result
    return result["structuredContent"]  # type: ignore[no-any-return]


def test_a_missing_ca_is_a_few_lines_without_tracebacks(tmp_path: Path, real_opensearch: Cluster) -> None:
    if real_opensearch.ca_file is None or not real_opensearch.url.startswith("https"):
        pytest.skip("needs the secured node (https with its own CA)")
    database_url = f"sqlite:///{tmp_path}/memory.db"
    services = build_services(Settings(data_dir=tmp_path, database_url=database_url, embedder="none"))
    services.profiles.create("alpha")
    token = services.profiles.issue_token("alpha").token
    services.close()
    env = {key: value for key, value in os.environ.items() if not key.startswith("MEMORY_")}
    env.update({"MEMORY_DATA_DIR": str(tmp_path), "MEMORY_DATABASE_URL": database_url, "MEMORY_EMBEDDER": "none",
                "MEMORY_SEARCH": "opensearch", **real_opensearch.env("mt-quiet"), "MEMORY_PORT": str(free_port())})
    del env["MEMORY_OPENSEARCH_CA_CERTS"]  # the one mistake
    log = tmp_path / "serve.log"
    with log.open("wb") as sink:
        process = subprocess.Popen([sys.executable, "-m", "service", "serve"], env=env, cwd=ROOT,
                                   stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{env['MEMORY_PORT']}"
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    try:
        def answering() -> bool:
            try:
                if httpx.get(f"{url}/readyz", timeout=2).status_code in (200, 503):
                    return True
            except httpx.HTTPError:
                pass
            assert process.poll() is None, log.read_text()
            return False

        until(answering, 60, every=0.2,
              what=lambda: f"memory serve answering {url}/readyz; its log:\n{log.read_text()}")
        started, calls = time.monotonic(), 0
        with httpx.Client(base_url=url, headers=headers, timeout=10) as client:
            while time.monotonic() - started < BUSY_SECONDS:
                rpc(client, "memory_write", {"title": f"Fact {calls}", "text": f"text {calls}", "kind": "project"})
                found = rpc(client, "memory_search", {"query": f"text {calls}"})
                assert found["mode"] == "degraded"  # answered from the canonical store all along
                calls += 1
            ready = client.get("/readyz").json()
        assert ready["degraded"] is True
        assert any("MEMORY_OPENSEARCH_CA_CERTS" in reason for reason in ready["degraded_reasons"])
    finally:
        process.terminate()
        process.wait(30)
    every = [line for line in log.read_text().splitlines() if line.strip()]
    lines = [line for line in every if '" 200' not in line]  # the access log's request lines aside
    failures = [line for line in lines if "opensearch" in line.lower() or "mirror" in line.lower()]
    assert calls >= 20  # a steady load: every call failed to reach the cluster
    assert len(lines) <= MOST_LINES, "\n".join(lines)
    assert not any("Traceback" in line for line in lines), "\n".join(lines)
    assert any("MEMORY_OPENSEARCH_CA_CERTS" in line for line in failures), "\n".join(lines)
