"""/authorize, /token, /register and /revoke at the origin (hosted clients fall back to those paths): the SDK's
handlers behind the service's rate limits, with what they lack filled in before or after them.

Where the SDK's handlers fall short (filled here, one line each):
- /authorize: its error redirects carry no `iss` (RFC 9207), which the metadata promises: added to them; and
  a client_id that is a URL (a client ID metadata document) is resolved first, so that a document that cannot
  be used is refused with its reason, as JSON, never sent to a redirect URI (the SDK would say "not found");
- /token: it never compares the token request's `resource` with the one the code or refresh token was granted
  for, nor says why a code or refresh token is refused when it was used before (and must revoke the grant):
  the domain checks both first (TokenService.check_code / check_refresh);
- /register: it accepts any number of registrations: a cap on registrations waiting for their first grant;
- /revoke: its request model requires a `client_secret` field, so a public client cannot revoke: this
  service's own handler, with the same client authentication as /token.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import anyio
from mcp.server.auth.handlers.authorize import AuthorizationHandler
from mcp.server.auth.handlers.register import RegistrationHandler
from mcp.server.auth.handlers.token import TokenHandler
from mcp.server.auth.middleware.client_auth import AuthenticationError
from mcp.server.auth.settings import ClientRegistrationOptions
from mcp.server.transport_security import RequestBodyLimitMiddleware
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, request_response
from starlette.types import ASGIApp

from service.api.oauth.client_documents import ClientDocuments
from service.api.oauth.provider import HashedSecretAuthenticator, Provider
from service.api.oauth.ratelimit import Limits, RateLimit
from service.container import OAuthServer
from service.domain.oauth.consent import with_params
from service.domain.oauth.documents import is_document_client_id
from service.errors import OAuthRefusal

BODY_LIMIT = 64 * 1024  # form and JSON bodies of the OAuth endpoints
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


def oauth_error(status: int, error: str, description: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """An OAuth error answer (RFC 6749 §5.2): {"error", "error_description"}, never cached."""
    return JSONResponse({"error": error, "error_description": description}, status_code=status,
                        headers={**NO_STORE, **(headers or {})})


def limited(rate: RateLimit, request: Request, what: str) -> JSONResponse | None:
    retry = rate.retry_after(request)
    if retry is None:
        return None
    return oauth_error(429, "temporarily_unavailable", rate.describe(what, retry), {"Retry-After": str(retry)})


def _route(path: str, handler: Any, methods: list[str], cors: bool = True) -> Route:
    app: ASGIApp = RequestBodyLimitMiddleware(request_response(handler), BODY_LIMIT)
    if cors:  # browser-based clients (the MCP Inspector) call these, as the SDK's routes allow; no cookies
        app = CORSMiddleware(app, allow_origins="*", allow_methods=[*methods, "OPTIONS"],
                             allow_headers=[MCP_PROTOCOL_VERSION_HEADER])
    return Route(path, endpoint=app, methods=[*methods, "OPTIONS"] if cors else methods)


def routes(server: OAuthServer, limits: Limits, documents: ClientDocuments) -> list[Route]:
    provider = Provider(server, documents)
    authenticator = HashedSecretAuthenticator(provider)
    sdk_authorize = AuthorizationHandler(provider)  # type: ignore[arg-type]  # Provider: the SDK's generic Protocol, concrete types
    sdk_token = TokenHandler(provider, authenticator)  # type: ignore[arg-type]  # Provider: the SDK's generic Protocol, concrete types
    sdk_register = RegistrationHandler(provider, ClientRegistrationOptions(enabled=True))  # type: ignore[arg-type]  # as above
    consent_page = f"{server.resources.issuer}/authorize/consent?"

    async def authorize(request: Request) -> Response:
        refused = limited(limits.authorize, request, "authorization requests")
        if refused is not None:
            return refused
        params = request.query_params if request.method == "GET" else await request.form()  # the SDK reads them too
        client_id = params.get("client_id")
        if isinstance(client_id, str) and is_document_client_id(client_id):
            try:
                await documents.resolve(client_id)
            except OAuthRefusal as exc:
                if exc.error == "temporarily_unavailable":
                    return oauth_error(429, exc.error, exc.message, {"Retry-After": "3600"})
                return oauth_error(400, exc.error, exc.message)
        response = await sdk_authorize.handle(request)
        location = response.headers.get("location")
        if location is not None and not location.startswith(consent_page):  # an error sent back to the client
            response.headers["location"] = with_params(location, iss=server.resources.issuer)
        return response

    async def token(request: Request) -> Response:
        refused = limited(limits.token, request, "token requests")
        if refused is not None:
            return refused
        form = await request.form()  # the SDK's handler reads the same, cached, form
        grant_type, resource = form.get("grant_type"), form.get("resource")
        resource = resource if isinstance(resource, str) else None
        check = {"authorization_code": ("code", server.tokens.check_code),
                 "refresh_token": ("refresh_token", server.tokens.check_refresh)}.get(str(grant_type))
        secret = form.get(check[0]) if check is not None else None
        if check is not None and isinstance(secret, str):
            try:
                await anyio.to_thread.run_sync(partial(check[1], secret, resource))
            except OAuthRefusal as exc:
                return oauth_error(400, exc.error, exc.message)
        return await sdk_token.handle(request)

    async def register(request: Request) -> Response:
        refused = limited(limits.register, request, "registrations")
        if refused is not None:
            return refused
        if not await anyio.to_thread.run_sync(server.clients.accepting):
            return oauth_error(429, "temporarily_unavailable", "too many registrations are waiting for their "
                               "first sign-in (they expire after a day): try again later", {"Retry-After": "3600"})
        return await sdk_register.handle(request)

    async def revoke(request: Request) -> Response:
        refused = limited(limits.token, request, "token requests")
        if refused is not None:
            return refused
        try:
            client = await authenticator.authenticate_request(request)
        except AuthenticationError as exc:
            return oauth_error(401, "invalid_client", exc.message)
        token_value = (await request.form()).get("token")
        if not isinstance(token_value, str) or not token_value:
            return oauth_error(400, "invalid_request", "no token to revoke: send token=<access or refresh token>")
        await anyio.to_thread.run_sync(server.tokens.revoke, token_value, client.client_id)
        return Response(status_code=200, headers=NO_STORE)  # RFC 7009 §2.2: also for an unknown token

    return [
        _route("/authorize", authorize, ["GET", "POST"], cors=False),  # a browser is sent here, never a script
        _route("/token", token, ["POST"]),
        _route("/register", register, ["POST"]),
        _route("/revoke", revoke, ["POST"]),
    ]
