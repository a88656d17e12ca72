"""The MCP endpoint at /mcp/{profile}: Host check, per-profile bearer auth, JSON-RPC id check, then the SDK.

Stateless streamable HTTP with JSON responses: every POST is self-contained, so any replica behind a
load balancer can answer any request. No OAuth metadata is advertised (clients would try OAuth). Every
refusal is the error answer of service.api.errors (a JSON-RPC error object on /mcp paths).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.types import Message, Receive, Scope, Send

from service import __version__
from service.api.credentials import authorization
from service.api.errors import domain_error_response, error_response
from service.api.hosts import HostPolicy
from service.config import Settings
from service.container import Services
from service.errors import MemoryServiceError
from service.mcp.server import MemoryMCPServer
from service.mcp.tools import PROFILE_SCOPE_KEY, register_tools


def build_mcp_server(services: Services) -> MemoryMCPServer:
    server = MemoryMCPServer(
        "memory",
        version=__version__,
        log_level="WARNING",  # the SDK configures the root logger; keep it from logging every HTTP request
        instructions=(
            "Long-term memory of curated facts for this profile. Search before assuming how the user works, what "
            "a project uses or why a decision was made; write what is durable; update or forget what changed."
        ),
    )
    register_tools(server, services)
    return server


def transport_security(settings: Settings) -> TransportSecuritySettings:
    """The SDK's own Host/Origin check, kept for Origin; MCPEndpoint checks Host with ports first."""
    hosts = HostPolicy(settings).sdk_patterns()
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=origins + settings.cors_origin_list)


def invalid_id(message: Any) -> bool:
    """A JSON-RPC request (it has a method and an id) whose id is neither a string nor an integer."""
    if not isinstance(message, dict) or "method" not in message or "id" not in message:
        return False
    request_id = message["id"]
    return isinstance(request_id, bool) or not isinstance(request_id, str | int)


def search_query(message: Any) -> str | None:
    """The query of a memory_search tools/call, else None (whatever the SDK will make of the rest)."""
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    params = message.get("params")
    if not isinstance(params, dict) or params.get("name") != "memory_search":
        return None
    arguments = params.get("arguments")
    query = arguments.get("query") if isinstance(arguments, dict) else None
    return query if isinstance(query, str) else None


async def _read_body(receive: Receive, limit: int) -> tuple[list[Message], bytes | None]:
    """The request's messages as received, and its whole body (None beyond `limit` bytes or when the client
    went away before sending all of it)."""
    messages: list[Message] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return messages, None
        size += len(message.get("body", b""))
        if size > limit:
            return messages, None
        if not message.get("more_body", False):
            return messages, b"".join(m.get("body", b"") for m in messages)


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """A receive that hands the SDK the messages already read, then whatever comes next."""
    pending = list(messages)

    async def replay() -> Message:
        return pending.pop(0) if pending else await receive()

    return replay


class MCPEndpoint:
    """Raw ASGI endpoint mounted as a Route (not a Mount: no 307 that would drop the Authorization header)."""

    def __init__(self, services: Services, manager: StreamableHTTPSessionManager) -> None:
        self.services = services
        self.manager = manager
        self.hosts = HostPolicy(services.settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "/mcp")
        headers = Headers(scope=scope)
        if not self.hosts.allows_scope(scope):
            refusal = error_response(path, 421, "host_not_allowed", HostPolicy.refusal(headers.get("host", "")))
            await refusal(scope, receive, send)
            return
        profile = scope.get("path_params", {}).get("profile", "")
        try:
            ref = await anyio.to_thread.run_sync(self.services.profiles.authenticate, authorization(headers), profile)
        except MemoryServiceError as exc:
            await domain_error_response(path, exc)(scope, receive, send)
            return
        scope[PROFILE_SCOPE_KEY] = ref
        # The SDK reads a request whose id is an object, a float or null as a notification (202, never an
        # answer); the body is read here to refuse it, then replayed to the SDK, which applies its own checks.
        messages, body = await _read_body(receive, DEFAULT_MAX_REQUEST_BODY_SIZE)
        if body is None:  # too large or cut short: the SDK answers (413) or reports the client gone, as before
            await self.manager.handle_request(scope, _replay(messages, receive), send)
            return
        try:
            message = json.loads(body)
        except ValueError:
            message = None  # the SDK answers malformed JSON with its own parse error
        if invalid_id(message):
            await _invalid_request(scope, receive, send)
            return
        query = search_query(message)
        if query is not None:  # the model starts on it while the SDK frames the call
            self.services.search.prefetch(query)
        await self.manager.handle_request(scope, _replay(messages, receive), send)


async def _invalid_request(scope: Scope, receive: Receive, send: Send) -> None:
    """-32600 Invalid Request (every 4xx on /mcp is), id null: the request's own id cannot be echoed."""
    response = error_response(scope.get("path", "/mcp"), 400, "invalid_request",
                              "Invalid Request: a JSON-RPC request id must be a string or an integer")
    await response(scope, receive, send)


class MissingProfile:
    """/mcp without a profile: a 404 that says where the endpoint is (any method)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = ("no profile in the URL: the MCP endpoint is /mcp/<profile> (e.g. /mcp/work), with the name of a "
                   "profile whose token you send")
        await error_response(scope.get("path", "/mcp"), 404, "not_found", message)(scope, receive, send)
