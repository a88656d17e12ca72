"""What `memory serve` enforces at the HTTP layer (issue 12): tokens redacted from the access log, 414 for a
huge request target (not a reset), a request-head timeout, the connection limit."""

from __future__ import annotations

import logging
import socket
import time

import httpx
import pytest

from service.api.access_log import redact_target
from service.api.http_server import server_config
from service.container import Services
from tests.conftest import ProfileAccess
from tests.support.server import serving


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_tokens_in_query_strings_never_reach_the_access_log(services: Services, alpha: ProfileAccess) -> None:
    records = Records()
    with serving(services) as port:
        access = logging.getLogger("uvicorn.access")
        access.addHandler(records)
        try:
            base = f"http://127.0.0.1:{port}"
            httpx.get(f"{base}/healthz?token={alpha.token}&keep=1")
            httpx.get(f"{base}/api/alpha/stats?access_token=opaque-secret")
            httpx.get(f"{base}/api/alpha/facts?tag={alpha.token}")
            httpx.get(f"{base}/api/alpha/stats?Token=%6Dem_x")
        finally:
            access.removeHandler(records)
    logged = "\n".join(records.lines)
    assert len(records.lines) == 4, logged
    assert alpha.token not in logged and "opaque-secret" not in logged and "mem_x" not in logged
    assert "/healthz?token=[redacted]&keep=1" in logged and "access_token=[redacted]" in logged


@pytest.mark.parametrize(("target", "expected"), [
    ("/a?token=abc", "/a?token=[redacted]"), ("/a?x=1&ACCESS_TOKEN=abc", "/a?x=1&ACCESS_TOKEN=[redacted]"),
    ("/a?q=mem_abc", "/a?q=[redacted]"), ("/a?q=hello&limit=3", "/a?q=hello&limit=3"), ("/mem_a", "/mem_a"),
])
def test_redaction_rule(target: str, expected: str) -> None:
    assert redact_target(target) == expected


def _raw(port: int, data: bytes, timeout: float = 10) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        chunks = []
        while True:
            try:
                chunk = sock.recv(65536)
            except (ConnectionResetError, TimeoutError):
                break
            if not chunk:
                break
            chunks.append(chunk)
            if b"\r\n\r\n" in b"".join(chunks) and b"content-length" in b"".join(chunks).lower():
                head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                if len(body) >= length:
                    break
        return b"".join(chunks)


def test_a_one_megabyte_request_target_is_414_not_a_reset(services: Services) -> None:
    with serving(services) as port:
        answer = _raw(port, b"GET /" + b"a" * 1_000_000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 414"), answer[:200]
        assert b'"uri_too_long"' in answer
        big_header = _raw(port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"b" * 70_000 + b"\r\n\r\n")
        assert big_header.startswith(b"HTTP/1.1 431"), big_header[:200]
        assert httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200


def test_a_slow_request_head_is_cut_off(services: Services) -> None:
    with serving(services, http=server_config(None, services.settings.model_copy(update={"head_timeout": 0.5}))
                 .http) as port:
        started = time.monotonic()
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # the head never ends
            assert sock.recv(100) == b""  # closed by the server
        assert time.monotonic() - started < 3
        with socket.create_connection(("127.0.0.1", port), timeout=5) as idle:  # sends nothing at all
            assert idle.recv(100) == b""
        assert httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200


def test_serve_uses_these_limits(services: Services) -> None:
    config = server_config(object(), services.settings)
    assert config.limit_concurrency is None  # requests are limited by the app, connections by the protocol
    assert config.http.max_connections == services.settings.max_connections  # type: ignore[union-attr]
    assert config.timeout_keep_alive == services.settings.keep_alive_timeout
    assert config.h11_max_incomplete_event_size > 1_000_000
    assert config.http.head_timeout == services.settings.head_timeout  # type: ignore[union-attr]
