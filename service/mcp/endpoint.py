"""The MCP endpoint at /mcp/{profile}: Host and Origin checks, per-profile bearer auth, the body checked, then
the SDK (a tools/call straight to its per-request kernel: service.mcp.exchange).

Stateless streamable HTTP with JSON responses: every POST is self-contained, so any replica behind a
load balancer can answer any request. Without MEMORY_OAUTH no OAuth metadata is advertised (clients would try
OAuth); with it, a 401 says where the endpoint's protected resource metadata is, OAuth access tokens for the
endpoint's resource URL are accepted besides the profile's static tokens, and /mcp (no profile) takes OAuth
tokens only, for the profile their grant names. Every refusal is the error answer of service.web.errors (a
JSON-RPC error object on /mcp paths).
"""

from __future__ import annotations

import anyio
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import JSONRPCRequest
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send


from service import __version__
from service.web.credentials import authenticated, authorization
from service.web.errors import domain_error_response, error_response, invalid_profile_name
from service.web.hosts import HostPolicy
from service.web.origins import OriginPolicy
from service.config import Settings
from service.container import Services
from service.contract import PROFILE_NAME
from service.domain.models import ProfileRef
from service.errors import MemoryServiceError
from service.mcp import body as request_body
from service.mcp.exchange import LeanPath
from service.mcp.server import MemoryMCPServer
from service.mcp.tools import PROFILE_SCOPE_KEY, memory_tools


def build_mcp_server(services: Services) -> MemoryMCPServer:
    return MemoryMCPServer(
        "memory",
        tools=memory_tools(services),
        version=__version__,
        log_level="WARNING",  # the SDK configures the root logger; keep it from logging every HTTP request
        instructions=(
            "Long-term memory of curated facts for this profile. Search before assuming how the user works, what "
            "a project uses or why a decision was made; write what is durable; update or forget what changed."
        ),
    )


def transport_security(settings: Settings) -> TransportSecuritySettings:
    """The SDK's own Host/Origin check, kept as a second line: MCPEndpoint checks Host (with ports) and Origin
    first, against the same lists, and answers a refusal as JSON-RPC."""
    return TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                     allowed_hosts=HostPolicy(settings).sdk_patterns(),
                                     allowed_origins=OriginPolicy(settings).origins)


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """A receive that hands the SDK the messages already read, then whatever comes next."""
    pending = list(messages)

    async def replay() -> Message:
        return pending.pop(0) if pending else await receive()

    return replay


class MCPEndpoint:
    """Raw ASGI endpoint mounted as a Route (not a Mount: no 307 that would drop the Authorization header)."""

    def __init__(self, services: Services, server: MemoryMCPServer) -> None:
        self.services = services
        self.manager = server.session_manager
        self.lean = LeanPath(server)
        self.hosts = HostPolicy(services.settings)
        self.origins = OriginPolicy(services.settings)
        self.resources = services.oauth.resources if services.oauth is not None else None

    def _authenticate(self, header: str | None, profile: str | None) -> ProfileRef:
        """MEMORY_OAUTH=on: a static or an OAuth token (its store reads stay on a worker thread)."""
        assert self.resources is not None
        return self.services.profiles.authenticate_mcp(header, profile, self.resources.of(profile))

    def _metadata_url(self, profile: str | None) -> str | None:
        if self.resources is None or (profile is not None and not PROFILE_NAME.fullmatch(profile)):
            return None
        return self.resources.metadata_url(profile)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "/mcp")
        headers = Headers(scope=scope)
        if not self.hosts.allows_scope(scope):
            await error_response(path, 421, "host_not_allowed", HostPolicy.refusal(headers.get("host", "")))(
                scope, receive, send)
            return
        origin = headers.get("origin", "")
        if not self.origins.allows(origin):
            await error_response(path, 403, "origin_not_allowed", OriginPolicy.refusal(origin))(scope, receive, send)
            return
        profile = scope.get("path_params", {}).get("profile")  # None at /mcp (MEMORY_OAUTH=on)
        refused = invalid_profile_name(path, profile) if profile is not None else None
        if refused is not None:  # as REST answers /api/Work/...: the name's rule, not "invalid token"
            await refused(scope, receive, send)
            return
        try:
            header = authorization(headers)
            ref = await authenticated(self.services.profiles, header, profile or "") if self.resources is None \
                else await anyio.to_thread.run_sync(self._authenticate, header, profile)
        except MemoryServiceError as exc:
            await domain_error_response(path, exc, self._metadata_url(profile))(scope, receive, send)
            return
        scope[PROFILE_SCOPE_KEY] = ref
        body = await request_body.read(receive, headers)
        if body.refusal is not None:
            refusal = body.refusal
            response = error_response(path, refusal.status, refusal.code, refusal.message, rpc_code=refusal.rpc_code,
                                      headers={"Connection": "close"} if refusal.close else None)
            await response(scope, receive, send)
            return
        if not body.disconnected:
            query = request_body.search_query(body.message)
            if query is not None:  # the model starts on it while the SDK frames the call
                self.services.search.prefetch(query)
            request = Request(scope, _replay(body.messages, receive))
            if await self.lean.takes(body.rpc, request):  # a tools/call: the SDK's kernel, without its transport
                assert isinstance(body.rpc, JSONRPCRequest)  # what takes() found it to be
                await self.lean.answer(body.rpc, request, scope, receive, send)
                return
        await self.manager.handle_request(scope, _replay(body.messages, receive), send)


class MissingProfile:
    """/mcp without a profile: a 404 that says where the endpoint is (any method)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = ("no profile in the URL: the MCP endpoint is /mcp/<profile> (e.g. /mcp/work), with the name of a "
                   "profile whose token you send")
        await error_response(scope.get("path", "/mcp"), 404, "not_found", message)(scope, receive, send)
