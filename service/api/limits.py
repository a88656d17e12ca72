"""Limits answered with a status instead of a dropped connection: the request head's size (414, 431) and the
requests served at once (503)."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from service.web.errors import error_response

MAX_TARGET_BYTES = 8 * 1024  # path + query, as nginx's default large_client_header_buffers
MAX_HEAD_BYTES = 64 * 1024  # all header names and values


class RequestLimits:
    """Pure ASGI middleware (no BaseHTTPMiddleware: it would buffer the MCP transport)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path = scope.get("path", "/")
            target = len(scope.get("raw_path") or path.encode()) + len(scope.get("query_string", b""))
            if target > MAX_TARGET_BYTES:
                response = error_response(path[:64], 414, "uri_too_long",
                                          f"request target over {MAX_TARGET_BYTES} bytes")
                await response(scope, receive, send)
                return
            if sum(len(n) + len(v) for n, v in scope.get("headers", [])) > MAX_HEAD_BYTES:
                response = error_response(path[:64], 431, "header_fields_too_large",
                                          f"request headers over {MAX_HEAD_BYTES} bytes")
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class InFlightLimit:
    """At most `limit` requests served at once; beyond, 503 at once. Counts requests, not connections: an idle
    or slow client holds a connection (service.api.http_server bounds those) but no place here."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit
        self.active = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.active >= self.limit:
            response = error_response(scope.get("path", "/")[:64], 503, "unavailable",
                                      f"over {self.limit} requests at once (MEMORY_MAX_REQUESTS); try again")
            await response(scope, receive, send)
            return
        self.active += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.active -= 1
