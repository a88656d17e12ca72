"""Hostile bodies on /mcp/{profile} (issue 24), on `memory serve`'s uvicorn configuration: malformed, deeply
nested, non-JSON-RPC and oversized bodies get a JSON-RPC error with a 4xx, never a 500; an oversized body is
413 naming the limit; a connection the server will not reuse is closed with `Connection: close`, not reset."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import httpx
import pytest

from service.config import Settings
from service.container import Services, build_services
from service.mcp.body import MAX_BODY_BYTES
from tests.conftest import ProfileAccess, make_profile
from tests.support.server import serving

ACCEPT = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25",
          "Content-Type": "application/json"}
LIST = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'


@pytest.fixture
def port_and_alpha(tmp_path) -> Iterator[tuple[int, ProfileAccess]]:
    services: Services = build_services(Settings(data_dir=tmp_path, embedder="none"))
    try:
        alpha = make_profile(services, "alpha")
        with serving(services) as port:
            yield port, alpha
    finally:
        services.close()


def _nested(depth: int, inner: str = "") -> bytes:
    return ("[" * depth + inner + "]" * depth).encode()


def _call_with(arguments: bytes) -> bytes:
    return (b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"memory_search","arguments":'
            + arguments + b"}}")


HOSTILE = {
    "10,000 nested arrays": (_nested(10_000), -32700),
    "100,000 nested objects": (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, -32700),
    "deep arguments": (_call_with(b'{"query":' + _nested(5_000) + b"}"), -32700),
    "truncated": (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/li', -32700),
    "not JSON": (b"hello", -32700),
    "invalid UTF-8": (b'{"jsonrpc":"2.0","id":1,"method":"\xff\xfe"}', -32700),
    "empty": (b"", -32700),
    "an array": (b"[]", -32600),
    "a batch": (b"[" + LIST + b"," + LIST + b"]", -32600),
    "a number": (b"42", -32600),
    "null": (b"null", -32600),
    "no jsonrpc": (b'{"id":1,"method":"tools/list"}', -32600),
    "jsonrpc 1.0": (b'{"jsonrpc":"1.0","id":1,"method":"tools/list"}', -32600),
    "an id that is an object": (b'{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', -32600),
    "a float id": (b'{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', -32600),
    "a method that is a number": (b'{"jsonrpc":"2.0","id":1,"method":5}', -32600),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_body_is_a_json_rpc_error_with_a_4xx_and_the_connection_is_reused(
        port_and_alpha: tuple[int, ProfileAccess], name: str) -> None:
    port, alpha = port_and_alpha
    body, rpc_code = HOSTILE[name]
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={**ACCEPT, **alpha.headers}) as client:
        response = client.post("/mcp/alpha", content=body)
        assert response.status_code == 400, response.text
        assert response.headers["content-type"].startswith("application/json")
        answer = response.json()
        assert answer["jsonrpc"] == "2.0" and answer["id"] is None
        assert answer["error"]["code"] == rpc_code, answer
        assert "\n" not in answer["error"]["message"] and len(answer["error"]["message"]) < 300
        assert response.headers.get("connection") != "close"
        after = client.post("/mcp/alpha", content=LIST)  # the same kept-alive connection serves the next call
        assert after.status_code == 200 and len(after.json()["result"]["tools"]) == 5


def test_nesting_an_agent_could_mean_is_still_served(port_and_alpha: tuple[int, ProfileAccess]) -> None:
    port, alpha = port_and_alpha
    response = httpx.post(f"http://127.0.0.1:{port}/mcp/alpha", headers={**ACCEPT, **alpha.headers},
                          content=_call_with(b'{"query":"deploys","extra":' + _nested(50) + b"}"))
    assert response.status_code == 200  # parsed; the tool itself refuses the unknown argument
    assert response.json()["result"]["isError"] is True


def test_an_oversized_body_is_413_naming_the_limit_and_the_connection_is_reused(
        port_and_alpha: tuple[int, ProfileAccess]) -> None:
    port, alpha = port_and_alpha
    big = _call_with(json.dumps({"query": "x" * (MAX_BODY_BYTES + 10)}).encode())
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={**ACCEPT, **alpha.headers}) as client:
        response = client.post("/mcp/alpha", content=big)
        assert response.status_code == 413
        error = response.json()["error"]
        assert str(MAX_BODY_BYTES) in error["message"] and "4 MiB" in error["message"]
        assert error["data"]["status"] == 413 and error["data"]["code"] == "payload_too_large"
        assert client.post("/mcp/alpha", content=LIST).status_code == 200  # read to its end: reusable

        chunked = client.post("/mcp/alpha", content=iter([big[:MAX_BODY_BYTES], big[MAX_BODY_BYTES:]]))
        assert chunked.status_code == 413 and str(MAX_BODY_BYTES) in chunked.json()["error"]["message"]


def test_a_huge_declared_body_is_413_with_connection_close_and_a_clean_close(
        port_and_alpha: tuple[int, ProfileAccess]) -> None:
    port, alpha = port_and_alpha
    head = (f"POST /mcp/alpha HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {alpha.token}\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            "Content-Length: 1000000000\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head + b"x" * 200_000)  # unread bytes in the server's socket when it answers
        received = b""
        while True:
            chunk = sock.recv(65536)  # a reset would raise ConnectionResetError here
            if not chunk:
                break
            received += chunk
    status_line, _, rest = received.partition(b"\r\n")
    assert status_line.startswith(b"HTTP/1.1 413 "), received[:200]
    headers, _, body = rest.partition(b"\r\n\r\n")
    assert b"connection: close" in headers.lower()
    assert json.loads(body)["error"]["code"] == -32600 and str(MAX_BODY_BYTES).encode() in body


def test_a_malformed_request_line_gets_its_400_before_a_clean_close(port_and_alpha: tuple[int, ProfileAccess]
                                                                     ) -> None:
    port, _ = port_and_alpha
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"NOT HTTP AT ALL\r\n\r\n" + b"y" * 100_000)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    assert received.startswith(b"HTTP/1.1 400"), received[:100]
