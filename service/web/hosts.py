"""Which Host header values the service answers to on /mcp and /readyz (DNS-rebinding protection), and
whether a caller is on loopback.

Accepted: loopback names and the bind address, bare or with the port the request came in on (or
MEMORY_PORT); MEMORY_ALLOWED_HOSTS entries as written: `name` (bare, or with that port), `name:port`
(exactly), `name:*` (any port).
"""

from __future__ import annotations

import ipaddress

from starlette.types import Scope

from service.config import Settings

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
ANY_PORT = "*"


def _split(value: str) -> tuple[str, str | None]:
    """`name[:port]` -> (lower-cased name, port or None); IPv6 literals keep their brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        name, _, rest = value.partition("]")
        return name + "]", rest[1:] if rest.startswith(":") else None
    name, sep, port = value.rpartition(":")
    return (name, port) if sep else (value, None)


class HostPolicy:
    def __init__(self, settings: Settings) -> None:
        self.port = str(settings.port)
        names = list(LOOPBACK_HOSTS)
        if settings.bind not in ("0.0.0.0", "::", *LOOPBACK_HOSTS, "::1"):
            names.append(f"[{settings.bind}]" if ":" in settings.bind else settings.bind)
        self.entries: list[tuple[str, str | None]] = [(name, None) for name in names]
        self.entries.extend(_split(h) for h in settings.allowed_host_list)

    def allows(self, host: str, local_port: int | None = None) -> bool:
        """`host` is the Host header; `local_port` the port the connection came in on (ASGI scope["server"])."""
        name, port = _split(host)
        if not name:
            return False
        own_ports = {self.port} | ({str(local_port)} if local_port else set())
        for allowed_name, allowed_port in self.entries:
            if name != allowed_name:
                continue
            if allowed_port == ANY_PORT or port == allowed_port or (allowed_port is None and (
                    port is None or port in own_ports)):
                return True
        return False

    def allows_scope(self, scope: Scope) -> bool:
        host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
        server = scope.get("server") or (None, None)
        return self.allows(host, server[1])

    def sdk_patterns(self) -> list[str]:
        """The same names for the MCP SDK's own check (ports are checked here, first)."""
        return list(dict.fromkeys(p for name, _ in self.entries for p in (name, f"{name}:*")))

    @staticmethod
    def refusal(host: str) -> str:
        return (f"Host {host!r} is not allowed (DNS-rebinding protection). If this is your reverse proxy or LAN "
                "address, add it to MEMORY_ALLOWED_HOSTS (comma-separated, name or name:port) and restart.")


def is_loopback_client(scope: Scope) -> bool:
    client = scope.get("client")
    if not client:
        return False
    try:
        return ipaddress.ip_address(client[0]).is_loopback
    except ValueError:
        return False
