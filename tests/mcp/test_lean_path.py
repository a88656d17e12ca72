"""The lean MCP path (service.mcp.exchange) answers byte for byte as the SDK's own path does, and only the
requests it can: each request below is sent twice to the same app, once with the lean path and once with it
switched off (every request then takes the SDK's StreamableHTTPSessionManager), and the answers compared --
status, headers, body. A new SDK that answers otherwise fails here rather than in a client."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from fastapi import FastAPI
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types import JSONRPCRequest
from starlette.requests import Request
from starlette.routing import Match

from service.api.app import create_app
from service.container import Services
from service.mcp.endpoint import MCPEndpoint

pytestmark = pytest.mark.anyio

ACCEPT = "application/json, text/event-stream"


def tool_call(name: str, arguments: Any, request_id: Any = 1, **extra: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments, **extra}}


CASES = {
    "recent": (tool_call("memory_recent", {"limit": 2}), {}),
    "write": (tool_call("memory_write", {"title": "Lean", "text": "The lean path answers.", "kind": "project"}), {}),
    "string id": (tool_call("memory_recent", {}, request_id="a-1"), {}),
    "progress token": (tool_call("memory_recent", {}, _meta={"progressToken": 7}), {}),
    "bad argument": (tool_call("memory_recent", {"limit": "eight"}), {}),
    "unknown argument": (tool_call("memory_recent", {"limt": 1}), {}),
    "unknown tool": (tool_call("memory_nothing", {}), {}),
    "domain error": (tool_call("memory_forget", {"uid": "f_nothing"}), {}),
    "no params": ({"jsonrpc": "2.0", "id": 3, "method": "tools/call"}, {}),
    "handshake version": (tool_call("memory_recent", {}), {"mcp-protocol-version": "2025-06-18"}),
    "unknown version": (tool_call("memory_recent", {}), {"mcp-protocol-version": "1999-01-01"}),
    "json only": (tool_call("memory_recent", {}), {"accept": "application/json"}),
    "no json accepted": (tool_call("memory_recent", {}), {"accept": "text/event-stream"}),
    "wrong content type": (tool_call("memory_recent", {}), {"content-type": "text/plain"}),
    "tools/list": ({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}, {}),
    "notification": ({"jsonrpc": "2.0", "method": "notifications/initialized"}, {}),
}


@pytest.fixture
async def app(services: Services) -> AsyncIterator[FastAPI]:
    app = create_app(services=services)
    async with app.router.lifespan_context(app):
        yield app


@pytest.fixture
def endpoint(app: FastAPI) -> MCPEndpoint:
    return next(r.endpoint for r in app.router.routes
                if getattr(r, "path", None) == "/mcp/{profile}" and isinstance(r.endpoint, MCPEndpoint))


async def post(app: FastAPI, token: str, message: dict[str, Any], headers: dict[str, str]) -> tuple[int, list[Any], str]:
    body = json.dumps(message).encode()
    sent = {"host": "127.0.0.1:8080", "authorization": f"Bearer {token}", "content-type": "application/json",
            "accept": ACCEPT, "content-length": str(len(body)), **headers}
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": "/mcp/alpha", "raw_path": b"/mcp/alpha", "query_string": b"", "root_path": "",
             "headers": [(k.encode(), v.encode()) for k, v in sent.items()], "client": ("127.0.0.1", 5000),
             "server": ("127.0.0.1", 8080)}
    messages = [{"type": "http.request", "body": body, "more_body": False}]
    out: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        out.append(message)

    await app(scope, receive, send)
    answer = b"".join(m.get("body", b"") for m in out[1:])
    # uids and times differ from one write to the next; the rest must not
    text = answer.decode()
    if '"uid"' in text:
        text = json.dumps(_blank(json.loads(text)))
    return int(out[0]["status"]), sorted(out[0]["headers"]), text


def _blank(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: ("*" if k in ("uid", "created_at", "updated_at") else _blank(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_blank(v) for v in value]
    if isinstance(value, str) and value.startswith("written f_"):
        return "written *"
    return value


@pytest.mark.parametrize("case", list(CASES))
async def test_the_lean_path_answers_as_the_sdk(app: FastAPI, endpoint: MCPEndpoint, services: Services,
                                                alpha_token: str, case: str) -> None:
    message, headers = CASES[case]
    lean = await post(app, alpha_token, message, headers)
    if case == "write":  # retired, so that the second write's `similar` does not name the first
        written = json.loads(lean[2])["result"]["structuredContent"]["fact"]
        services.facts.forget(services.profiles.get("alpha"), _uid(services, written["title"]))

    async def sdk_only(*args: Any) -> bool:
        return False

    endpoint.lean.takes = sdk_only  # type: ignore[method-assign]
    try:
        sdk = await post(app, alpha_token, message, headers)
    finally:
        del endpoint.lean.takes
    assert lean == sdk


async def test_a_tool_call_takes_the_lean_path(app: FastAPI, services: Services, alpha_token: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """And not the SDK's transport (whose per-request machinery it exists to skip); initialize still does."""
    taken: list[str] = []
    original = StreamableHTTPSessionManager._handle_stateless_request

    async def spy(self: StreamableHTTPSessionManager, *args: Any) -> None:
        taken.append("sdk")
        await original(self, *args)

    monkeypatch.setattr(StreamableHTTPSessionManager, "_handle_stateless_request", spy)
    status, _, _ = await post(app, alpha_token, tool_call("memory_recent", {}), {})
    assert status == 200 and taken == []
    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    status, _, _ = await post(app, alpha_token, initialize, {})
    assert status == 200 and taken == ["sdk"]


async def test_the_lean_path_answers_only_while_the_sdk_manager_runs(services: Services) -> None:
    """It knows the manager runs from the server's lifespan, which the manager enters when it starts and leaves
    when it stops: before and after, every call takes the SDK's path (which refuses it as the SDK does)."""
    app = create_app(services=services)
    lean = next(r.endpoint for r in app.router.routes
                if getattr(r, "path", None) == "/mcp/{profile}" and isinstance(r.endpoint, MCPEndpoint)).lean
    message = JSONRPCRequest(jsonrpc="2.0", id=1, method="tools/call", params={"name": "memory_recent"})
    request = Request({"type": "http", "method": "POST", "path": "/mcp/alpha", "query_string": b"",
                       "headers": [(b"host", b"127.0.0.1:8080"), (b"content-type", b"application/json"),
                                   (b"accept", ACCEPT.encode())]})
    assert lean.server.lifespan_state is None and not await lean.takes(message, request)
    async with app.router.lifespan_context(app):
        assert lean.server.lifespan_state == {} and await lean.takes(message, request)
    assert lean.server.lifespan_state is None and not await lean.takes(message, request)


def _uid(services: Services, title: str) -> str:
    return next(f.uid for f in services.facts.recent(services.profiles.get("alpha")) if f.title == title)


@pytest.fixture
def alpha_token(services: Services) -> str:
    services.profiles.create("alpha")
    return services.profiles.issue_token("alpha").token


async def test_an_mcp_call_is_matched_by_the_first_route(app: FastAPI, endpoint: MCPEndpoint) -> None:
    """Every agent's every call is an MCP POST: the router tries routes in order, so the MCP routes come first
    rather than behind each REST router (service.api.app)."""
    scope = {"type": "http", "method": "POST", "path": "/mcp/alpha", "root_path": "", "headers": [],
             "query_string": b""}
    first = next(r for r in app.router.routes if r.matches(scope)[0] is Match.FULL)
    assert first is app.router.routes[0] and first.endpoint is endpoint  # type: ignore[attr-defined]
