"""HEAD wherever GET is (RFC 9110 §9.3.2: a GET without the content; monitors and `curl -I` send it): the app
answers the request as the GET it stands for, and the HTTP server sends that answer's status and headers,
Content-Length included, without the body (uvicorn drops the body of every response to a HEAD).

FastAPI's routes take only the methods they declare, so without this a HEAD of /healthz or of any REST route
was a 405 (Starlette's own routes, the dashboard's files among them, already took HEAD)."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send


class HeadAsGet:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "HEAD":
            scope = {**scope, "method": "GET"}  # the server's own scope still says HEAD: it sends no body
        await self.app(scope, receive, send)
