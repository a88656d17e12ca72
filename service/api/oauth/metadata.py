"""The discovery documents: authorization server metadata (RFC 8414) and each MCP endpoint's protected
resource metadata (RFC 9728), built with the SDK's models.

Where the SDK's metadata falls short (filled in `server_metadata`, one line each): it lists no `none` among
the token endpoint's auth methods (public clients read that as "no public clients"); it has no way to say the
authorization response carries `iss` (RFC 9207); it does not say that client ID metadata documents are taken
(a URL as client_id, service.api.oauth.client_documents); and `AnyHttpUrl(issuer)` adds a trailing slash to an
issuer without a path, which then differs, as a string, from the `iss` clients compare it with.
"""

from __future__ import annotations

from typing import Any

from mcp.server.auth.routes import build_metadata, cors_middleware
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import OAuthMetadata, ProtectedResourceMetadata
from pydantic import AnyHttpUrl
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from service.web.errors import error_response
from service.contract import PROFILE_NAME
from service.domain.oauth.policy import Resources

AUTH_METHODS = ["none", "client_secret_post", "client_secret_basic"]
CACHE = {"Cache-Control": "public, max-age=3600"}


def server_metadata(issuer: str) -> dict[str, Any]:
    sdk = build_metadata(AnyHttpUrl(issuer), None, ClientRegistrationOptions(enabled=True),
                         RevocationOptions(enabled=True))
    data = sdk.model_dump(mode="json", exclude_none=True)
    data.update(
        issuer=issuer,  # the SDK's AnyHttpUrl(issuer) ends in "/": not the issuer clients compare `iss` with
        token_endpoint_auth_methods_supported=AUTH_METHODS,  # the SDK lists no `none`: public clients need it
        revocation_endpoint_auth_methods_supported=AUTH_METHODS,
        authorization_response_iss_parameter_supported=True,  # the SDK has no such flag; the consent page sends iss
        client_id_metadata_document_supported=True,  # the SDK sets no such flag: a URL as client_id is fetched
    )
    return OAuthMetadata.model_validate(data).model_dump(mode="json", exclude_none=True)


def resource_metadata(resources: Resources, profile: str | None) -> dict[str, Any]:
    name = f"memory profile {profile}" if profile else "memory (the profile is the one a grant names)"
    return ProtectedResourceMetadata(
        resource=resources.of(profile), authorization_servers=[resources.issuer],
        bearer_methods_supported=["header"], resource_name=name,
    ).model_dump(mode="json", exclude_none=True)


def routes(resources: Resources) -> list[Route]:
    server = server_metadata(resources.issuer)

    async def authorization_server(request: Request) -> Response:
        profile = request.path_params.get("profile")
        if profile is not None and not PROFILE_NAME.fullmatch(profile):
            return error_response(request.url.path, 404, "not_found", "no such endpoint")
        return JSONResponse(server, headers=CACHE)

    async def protected_resource(request: Request) -> Response:
        profile = request.path_params.get("profile")
        if profile is not None and not PROFILE_NAME.fullmatch(profile):
            return error_response(request.url.path, 404, "not_found", "no such endpoint")
        return JSONResponse(resource_metadata(resources, profile), headers=CACHE)

    found: list[Route] = []
    for path in ("", "/mcp", "/mcp/{profile}"):  # the issuer's, and the variants clients probe with the MCP path
        found.append(Route(f"/.well-known/oauth-authorization-server{path}", methods=["GET", "OPTIONS"],
                           endpoint=cors_middleware(authorization_server, ["GET", "OPTIONS"])))
    for path in ("/mcp", "/mcp/{profile}"):
        found.append(Route(f"/.well-known/oauth-protected-resource{path}", methods=["GET", "OPTIONS"],
                           endpoint=cors_middleware(protected_resource, ["GET", "OPTIONS"])))
    return found
