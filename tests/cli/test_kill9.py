"""Crash safety: `memory serve` killed with SIGKILL while several clients write and search. Every write and
every search the service acknowledged is there after a restart, on SQLite and on PostgreSQL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from service.config import Settings
from service.container import build_services
from bench.lib.postgres import free_port
from bench.lib.waiting import until

pytestmark = pytest.mark.process  # not in the fast tier (Makefile FAST)

WRITERS = 6
RUN_SECONDS = 2.0


@contextmanager
def served(env: dict[str, str]) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "service", "serve"],
                               env={**os.environ, **env, "MEMORY_PORT": str(port)},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        def healthy() -> bool:
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    return True
            except httpx.HTTPError:
                pass
            assert process.poll() is None, f"memory serve exited ({process.returncode}) before {url}/healthz answered"
            return False

        until(healthy, 60, every=0.1, what=f"memory serve answering {url}/healthz")
        yield process, url
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(30)


def rpc(client: httpx.Client, tool: str, arguments: dict) -> dict:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    answer = client.post("/mcp/alpha", json=body).json()
    result = answer["result"]
    assert not result.get("isError"), result
    return result["structuredContent"]  # type: ignore[no-any-return]


def test_nothing_acknowledged_is_lost(tmp_path: Path, database_url: str) -> None:
    services = build_services(Settings(data_dir=tmp_path, database_url=database_url, embedder="none"))
    services.profiles.create("alpha")
    token = services.profiles.issue_token("alpha").token
    services.close()
    env = {"MEMORY_DATA_DIR": str(tmp_path), "MEMORY_DATABASE_URL": database_url, "MEMORY_EMBEDDER": "none"}
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    written: list[str] = []
    searched: list[str] = []
    stop = threading.Event()

    def writer(url: str, n: int) -> None:
        with httpx.Client(base_url=url, headers=headers, timeout=10) as client:
            i = 0
            while not stop.is_set():
                try:
                    fact = rpc(client, "memory_write", {"title": f"Writer {n} fact {i}", "text": f"text {i}",
                                                        "kind": "project"})["fact"]
                    written.append(fact["uid"])
                    query = f"probe {uuid.uuid4().hex[:12]}"
                    rpc(client, "memory_search", {"query": query})
                    searched.append(query)
                except (httpx.HTTPError, KeyError, ValueError):
                    return  # the server is gone: what was acknowledged is recorded
                i += 1

    with served(env) as (process, url):
        threads = [threading.Thread(target=writer, args=(url, n)) for n in range(WRITERS)]
        for thread in threads:
            thread.start()
        time.sleep(RUN_SECONDS)
        os.kill(process.pid, signal.SIGKILL)  # mid-write: no shutdown, no flush
        stop.set()
        for thread in threads:
            thread.join(30)
    assert len(written) >= WRITERS and searched, (len(written), len(searched))
    print(f"acknowledged before the kill: {len(written)} writes, {len(searched)} searches")

    with served(env) as (_, url):
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=10) as client:
            missing = [uid for uid in written if client.get(f"/api/alpha/facts/{uid}").status_code != 200]
            logged = {row["query"] for row in client.get("/api/alpha/queries?limit=500").json()["queries"]}
    assert missing == []
    assert [q for q in searched[-400:] if q not in logged] == []  # the 500 newest rows hold the last 400 acks
