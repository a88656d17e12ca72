"""Size limits on the request head, answered with a status (414, 431) instead of a dropped connection."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from service.api.errors import error_response

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
