"""The MCP endpoint at /mcp/{profile}: Host check, per-profile bearer auth, then the SDK's transport.

Stateless streamable HTTP with JSON responses: every POST is self-contained, so any replica behind a
load balancer can answer any request. No OAuth metadata is advertised (clients would try OAuth).
"""

from __future__ import annotations

import json

import anyio
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.types import Receive, Scope, Send

from service import __version__
from service.config import Settings
from service.container import Services
from service.errors import Unauthorized
from service.mcp.server import MemoryMCPServer
from service.mcp.tools import PROFILE_SCOPE_KEY, register_tools

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def build_mcp_server(services: Services) -> MCPServer:
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


def allowed_hosts(settings: Settings) -> list[str]:
    """Host header values accepted: loopback, the bind address, and MEMORY_ALLOWED_HOSTS (any port)."""
    names = list(LOOPBACK_HOSTS)
    if settings.bind not in ("0.0.0.0", "::", *LOOPBACK_HOSTS):
        names.append(f"[{settings.bind}]" if ":" in settings.bind else settings.bind)
    names.extend(settings.allowed_host_list)
    hosts: list[str] = []
    for name in names:
        has_port = "]:" in name if name.startswith("[") else ":" in name
        hosts.extend([name] if has_port else [name, f"{name}:*"])
    return list(dict.fromkeys(hosts))


def transport_security(settings: Settings) -> TransportSecuritySettings:
    hosts = allowed_hosts(settings)
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=origins + settings.cors_origin_list)


def host_allowed(host: str, hosts: list[str]) -> bool:
    for pattern in hosts:
        if pattern.endswith(":*"):
            if host.startswith(pattern[:-1]) or host == pattern[:-2]:
                return True
        elif host == pattern:
            return True
    return False


async def _send_json(send: Send, status: int, body: dict[str, object], extra: list[tuple[bytes, bytes]]) -> None:
    payload = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


class MCPEndpoint:
    """Raw ASGI endpoint mounted as a Route (not a Mount: no 307 that would drop the Authorization header)."""

    def __init__(self, services: Services, manager: StreamableHTTPSessionManager) -> None:
        self.services = services
        self.manager = manager
        self.hosts = allowed_hosts(services.settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if not host_allowed(host, self.hosts):
            message = (
                f"Host {host!r} is not allowed for MCP (DNS-rebinding protection). If this is your reverse proxy "
                f"or LAN address, add it to MEMORY_ALLOWED_HOSTS (comma-separated) and restart."
            )
            await _send_json(send, 421, {"error": {"status": 421, "code": "host_not_allowed", "message": message}}, [])
            return
        profile = scope.get("path_params", {}).get("profile", "")
        try:
            ref = await anyio.to_thread.run_sync(
                self.services.profiles.authenticate, headers.get("authorization"), profile
            )
        except Unauthorized as exc:
            body = {"error": {"status": 401, "code": exc.code, "message": exc.message}}
            await _send_json(send, 401, body, [(b"www-authenticate", b'Bearer error="invalid_token"')])
            return
        scope[PROFILE_SCOPE_KEY] = ref
        await self.manager.handle_request(scope, receive, send)
