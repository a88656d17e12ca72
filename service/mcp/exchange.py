"""A tools/call answered in its HTTP request's own task, by the SDK's per-request kernel: the lean MCP path.

For every stateless POST the SDK's StreamableHTTPSessionManager builds a transport with four memory streams, two
task groups, a JSON-RPC dispatcher and a server task in its own task group, and passes the request and its answer
through them. A stateless POST answered in JSON needs none of it: no session, no stream, nothing sent before the
answer. So a `tools/call` request is handed straight to `mcp.server.runner.serve_one` -- the kernel the SDK itself
serves its 2026-07-28 single-exchange requests with -- in the request's task: the same tool manager, argument
validation, result shaping and middleware, and the answer the SDK's own path gives, byte for byte (its
dispatcher's error mapping, its transport's serialisation and headers). ~0.6 ms less per call
(bench/write_ab.py).

Everything else takes the SDK's whole path, which answers it as always: initialize, notifications, other
methods, a 2026-07-28 request (the SDK's single-exchange entry already), an Accept, Content-Type, Host or Origin
its transport refuses, a manager not running (the server's lifespan, which the manager enters when it starts and
leaves when it stops, not entered: service.mcp.server), or a manager configured otherwise than stateless JSON.
Public SDK names only; the SDK is pinned to its minor version (pyproject.toml) because this path must keep
answering as its own does (tests/mcp compare the two).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.server.connection import Connection
from mcp.server.runner import serve_one
from mcp.server.streamable_http import check_accept_headers
from mcp.server.transport_security import TransportSecurityMiddleware
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data, progress_token_from_params
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import (DEFAULT_NEGOTIATED_VERSION, ErrorData, JSONRPCError, JSONRPCMessage, JSONRPCRequest,
                       JSONRPCResponse)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from service.mcp.server import MemoryMCPServer

log = logging.getLogger(__name__)

# what the SDK's stateless path gives every message (no back-channel: a JSON body carries only the answer)
_TRANSPORT = TransportContext(kind="streamable-http", can_send_request=False)
_HEADERS = {"Content-Type": "application/json"}


@dataclass
class _Exchange:
    """The DispatchContext of one request with nowhere to send anything but its answer: what the SDK's JSON
    mode does with a tool's notifications and progress (drops them), and its refusal of server requests."""

    request_id: str | int
    message_metadata: ServerMessageMetadata
    progress_token: str | int | None
    transport: TransportContext = _TRANSPORT
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)
    can_send_request: bool = False

    async def send_raw_request(self, method: str, params: Any, opts: Any = None) -> dict[str, Any]:
        raise NoBackChannelError(method)

    async def notify(self, method: str, params: Any, opts: Any = None) -> None:
        """Dropped, as the SDK's transport drops a request's notifications in JSON mode."""

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Dropped likewise."""


class LeanPath:
    def __init__(self, server: MemoryMCPServer) -> None:
        self.server = server
        self.manager = server.session_manager
        self.security = TransportSecurityMiddleware(self.manager.security_settings)

    async def takes(self, message: JSONRPCMessage | None, request: Request) -> bool:
        """Whether this request (the body as the SDK's own adapter read it) is one the lean path answers exactly
        as the SDK would."""
        manager = self.manager
        if not (isinstance(message, JSONRPCRequest) and message.method == "tools/call"):
            return False
        if not (manager.stateless and manager.json_response and self.server.lifespan_state is not None):
            return False
        version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER)
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return False
        content_type = request.headers.get("content-type", "")  # the transport's check, then the security's
        if not any(part.strip() == "application/json" for part in content_type.split(";")[0].split(",")):
            return False
        return check_accept_headers(request)[0] and await self.security.validate_request(request, is_post=True) is None

    async def answer(self, message: JSONRPCRequest, request: Request, scope: Scope, receive: Receive,
                     send: Send) -> None:
        """serve_one, and the answer as the SDK's dispatcher and transport write it."""
        request_id, params = message.id, message.params
        exchange = _Exchange(request_id, ServerMessageMetadata(request_context=request, can_send_request=False),
                             progress_token_from_params(params))
        version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER) or DEFAULT_NEGOTIATED_VERSION
        connection = Connection.from_envelope(version, None, None)
        answer: JSONRPCResponse | JSONRPCError
        try:
            result = await serve_one(self.manager.app, exchange, "tools/call", params, connection=connection,
                                     lifespan_state=self.server.lifespan_state)
            answer = JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)
        except Exception as exc:
            error = handler_exception_to_error_data(exc)
            if error is None:  # the dispatcher's catch-all, code 0 as it pins it
                log.exception("handler for 'tools/call' raised")
                error = ErrorData(code=0, message=str(exc))
            answer = JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
        body = answer.model_dump_json(by_alias=True, exclude_unset=True)
        await Response(body, status_code=200, headers=_HEADERS)(scope, receive, send)
