"""Slow or idle clients cannot take the service away from others (issue 24): with hundreds of connections
trickling a request head, /healthz and memory_search from a well-behaved client still answer at once; past
MEMORY_MAX_CONNECTIONS the connection that waited longest for its head makes room."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from bench.lib.waiting import until
from service.config import Settings
from service.container import Services, build_services
from tests.conftest import make_profile
from tests.support.server import serving

SEARCH = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
          "params": {"name": "memory_search", "arguments": {"query": "deploys"}}}
ACCEPT = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


@pytest.fixture
def sqlite_services(tmp_path, request) -> Iterator[Services]:
    overrides = getattr(request, "param", {})
    with build_services(Settings(data_dir=tmp_path, embedder="none", **overrides)) as services:
        yield services


@contextmanager
def trickling(port: int, count: int) -> Iterator[list[socket.socket]]:
    """`count` connections that each send a request head one byte every 0.2 s and never finish it."""
    sockets = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock.sendall(b"P")
        sockets.append(sock)
    stop = threading.Event()

    def drip() -> None:
        while not stop.wait(0.2):
            for sock in sockets:
                try:
                    sock.send(b"O")
                except OSError:
                    pass

    thread = threading.Thread(target=drip, daemon=True)
    thread.start()
    try:
        yield sockets
    finally:
        stop.set()
        thread.join(5)
        for sock in sockets:
            sock.close()


def _probe(client: httpx.Client, method: str, url: str, **kwargs: object) -> tuple[int, float]:
    started = time.monotonic()
    try:
        status = client.request(method, url, timeout=1.0, **kwargs).status_code  # type: ignore[arg-type]
    except httpx.HTTPError:
        status = 0
    return status, time.monotonic() - started


def _well_behaved(port: int, token: str) -> list[tuple[str, int, float]]:
    """20 /healthz probes and 20 memory_search calls, each on a fresh connection, each given one second."""
    base = f"http://127.0.0.1:{port}"
    answers = []
    for _ in range(20):
        with httpx.Client() as client:
            answers.append(("healthz", *_probe(client, "GET", f"{base}/healthz")))
        with httpx.Client() as client:
            answers.append(("search", *_probe(client, "POST", f"{base}/mcp/alpha", json=SEARCH,
                                              headers={**ACCEPT, "Authorization": f"Bearer {token}"})))
    return answers


def test_300_slow_heads_do_not_starve_health_probes_or_searches(sqlite_services: Services) -> None:
    alpha = make_profile(sqlite_services, "alpha")
    with serving(sqlite_services) as port, trickling(port, 300) as slow:
        answers = _well_behaved(port, alpha.token)
        still_open = sum(1 for s in slow if _open(s))
    failed = [a for a in answers if a[1] != 200 or a[2] >= 1.0]
    assert not failed, failed
    assert still_open == 300  # the slow clients were not simply dropped: there was room for everyone


@pytest.mark.parametrize("sqlite_services", [{"max_connections": 50}], indirect=True)
def test_past_the_connection_limit_the_longest_waiting_head_makes_room(sqlite_services: Services) -> None:
    alpha = make_profile(sqlite_services, "alpha")
    with serving(sqlite_services) as port, trickling(port, 100) as slow:
        answers = _well_behaved(port, alpha.token)
        # the oldest waiting heads were closed to stay within the limit
        until(lambda: _still_open(slow) <= 50, 0.5, every=0.05,
              what=lambda: f"the oldest slow heads closed ({_still_open(slow)} of {len(slow)} still open)")
    failed = [a for a in answers if a[1] != 200 or a[2] >= 1.0]
    assert not failed, failed


@pytest.mark.parametrize("sqlite_services", [{"max_requests": 1}], indirect=True)
def test_requests_beyond_max_requests_get_a_json_503(sqlite_services: Services) -> None:
    alpha = make_profile(sqlite_services, "alpha")
    with serving(sqlite_services) as port:
        # one request held open: its body never completes, so it stays in flight
        held = socket.create_connection(("127.0.0.1", port), timeout=5)
        held.sendall(b"POST /mcp/alpha HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n"
                     b"Authorization: Bearer " + alpha.token.encode() + b"\r\n"
                     b"Content-Type: application/json\r\n\r\n{")
        answer: list[httpx.Response] = []

        def refused() -> bool:  # once the held request is in flight
            answer[:] = [_healthz(port)]
            return answer[0].status_code == 503

        try:
            until(refused, 0.3, every=0.05, what="/healthz refused while the held request is in flight")
        finally:
            held.close()
        assert "MEMORY_MAX_REQUESTS" in answer[0].json()["error"]["message"]
        until(lambda: _healthz(port).status_code == 200, 0.3, every=0.05,
              what="/healthz answering again once the held request is gone")


def _healthz(port: int) -> httpx.Response:
    return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)


def _still_open(slow: list[socket.socket]) -> int:
    return sum(1 for s in slow if _open(s))


def _open(sock: socket.socket) -> bool:
    """Still connected: no FIN or reset from the server (a non-blocking peek finds nothing to read)."""
    sock.setblocking(False)
    try:
        return sock.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        sock.setblocking(True)
