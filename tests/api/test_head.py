"""HEAD wherever GET is (RFC 9110 §9.3.2), over real HTTP: the GET's status and headers, no body."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

import httpx
import pytest

from service.api.app import create_app
from service.container import Services
from tests.conftest import ProfileAccess
from tests.support.server import running


def _raw(url: str, request: bytes) -> bytes:
    """The whole answer to one request on its own connection (closed by the request): what the server sent."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return data


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/api/alpha/stats?days=3", "/api/alpha/queries",
                                  "/api/profiles", "/openapi.json", "/ui/"])
def test_head_answers_as_get_without_the_body(services: Services, alpha: ProfileAccess, path: str) -> None:
    with running(create_app(services=services)) as url:
        got = httpx.get(url + path, headers=alpha.headers)
        head = httpx.head(url + path, headers=alpha.headers)
        assert got.status_code == 200 and head.status_code == 200, (path, head.text)
        assert head.headers["content-type"] == got.headers["content-type"]
        assert head.content == b"" and int(head.headers["content-length"]) > 0
        raw = _raw(url, f"HEAD {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: {alpha.headers['Authorization']}"
                        f"\r\nConnection: close\r\n\r\n".encode())
        assert raw.startswith(b"HTTP/1.1 200") and raw.endswith(b"\r\n\r\n"), raw[-200:]  # headers, nothing after


def test_head_keeps_the_gets_refusals_and_allow_names_it(services: Services, alpha: ProfileAccess) -> None:
    with running(create_app(services=services)) as url:
        assert httpx.head(url + "/api/alpha/stats").status_code == 401  # no token: the GET's 401
        assert httpx.head(url + "/api/alpha/stats?days=0", headers=alpha.headers).status_code == 400
        refused = httpx.post(url + "/api/alpha/stats", headers=alpha.headers)
        assert refused.status_code == 405 and refused.headers["allow"] == "GET, HEAD"
        mcp = httpx.head(url + "/mcp/alpha", headers=alpha.headers)  # the MCP endpoint takes POST only
        assert mcp.status_code == 405 and mcp.headers["allow"] == "POST"
