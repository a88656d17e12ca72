"""Which Origin header values /mcp answers (DNS-rebinding protection, with service.web.hosts): none (a client
that is not a browser, or a same-origin request), http:// or https:// on a name the service answers to (any
port), or an origin in MEMORY_CORS_ORIGINS.

The same list configures the MCP SDK's own check (service.mcp.endpoint.transport_security), which matches as
`allows` does; the endpoint asks `allows` first, so a refusal is the service's JSON-RPC error, not the SDK's
plain text.
"""

from __future__ import annotations

from service.config import Settings
from service.web.hosts import ANY_PORT, HostPolicy

SCHEMES = ("http", "https")


class OriginPolicy:
    def __init__(self, settings: Settings) -> None:
        names = HostPolicy(settings).sdk_patterns()
        self.origins = [f"{scheme}://{name}" for name in names for scheme in SCHEMES] + settings.cors_origin_list

    def allows(self, origin: str) -> bool:
        """`origin` is the Origin header, "" when absent. `scheme://name:*` admits that name with any port."""
        if not origin:
            return True
        return any(origin == allowed or (allowed.endswith(f":{ANY_PORT}") and origin.startswith(allowed[:-1]))
                   for allowed in self.origins)

    @staticmethod
    def refusal(origin: str) -> str:
        return (f"Origin {origin[:100]!r} is not allowed (DNS-rebinding protection): a web page may call the MCP "
                "endpoint only from the service's own address, or from an origin listed in MEMORY_CORS_ORIGINS "
                "(comma-separated; restart after changing it).")
