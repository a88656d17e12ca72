"""The MCP SDK's authorization-server provider interface over the domain's OAuth rules (service.domain.oauth),
and the client authentication the SDK's token handler calls: translations only, every rule is in the domain.

Where the SDK falls short (each filled here, in one line):
- its client record checks requested scopes against registered ones: Claude asks for `scope=claudeai` it never
  registered, and this service has no scopes (a grant opens one profile's five tools), so any scope is taken;
- its ClientAuthenticator compares client secrets in plaintext: secrets are stored as hashes here and compared
  as hashes (HashedSecretAuthenticator);
- its registration mints a secret without the service's prefix: it is replaced by one that the access-log
  redaction recognises (`mem_ocs_…`);
- it knows registered clients only: a client_id that is a URL is the client of a metadata document, resolved
  (fetched or kept) by service.api.oauth.client_documents.
"""

from __future__ import annotations

import base64
import binascii
from functools import partial
from typing import Any
from urllib.parse import unquote

import anyio
from mcp.server.auth.middleware.client_auth import AuthenticationError, ClientAuthenticator
from mcp.server.auth.provider import (
    AccessToken, AuthorizationCode, AuthorizationParams, AuthorizeError, RefreshToken, RegistrationError, TokenError,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyUrl
from starlette.requests import Request

from service import ids
from service.api.oauth.client_documents import ClientDocuments
from service.container import OAuthServer
from service.domain.oauth.documents import is_document_client_id
from service.domain.oauth.tokens import Issued
from service.errors import OAuthRefusal


class ServiceClient(OAuthClientInformationFull):
    """A registered client as the SDK's handlers see it."""

    def validate_scope(self, requested_scope: str | None) -> list[str] | None:
        return None if requested_scope is None else requested_scope.split()


def _token(issued: Issued) -> OAuthToken:
    return OAuthToken(access_token=issued.access_token, expires_in=issued.expires_in,
                      scope=" ".join(issued.scopes) or None, refresh_token=issued.refresh_token)


class Provider:
    """OAuthAuthorizationServerProvider[AuthorizationCode, RefreshToken, AccessToken] of the SDK."""

    def __init__(self, server: OAuthServer, documents: ClientDocuments) -> None:
        self.server = server
        self.documents = documents

    async def get_client(self, client_id: str) -> ServiceClient | None:
        if is_document_client_id(client_id):  # /authorize resolved it first, and said why when it could not
            try:
                return ServiceClient.model_validate(await self.documents.resolve(client_id))
            except OAuthRefusal:
                return None
        registration = await anyio.to_thread.run_sync(self.server.clients.get, client_id)
        return None if registration is None else ServiceClient.model_validate(registration)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        secret = None
        if client_info.token_endpoint_auth_method != "none":
            secret = client_info.client_secret = ids.new_client_secret()  # the answer shows this one, once
        body = client_info.model_dump(mode="json", exclude_none=True)
        try:
            await anyio.to_thread.run_sync(self.server.clients.register, body, secret)
        except OAuthRefusal as exc:
            raise RegistrationError(exc.error, exc.message) from None  # type: ignore[arg-type]  # the SDK types error codes as a Literal; ours come from the domain as str (the same RFC 6749 codes)

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        open_request = partial(
            self.server.consent.open_request, client.client_id, redirect_uri=str(params.redirect_uri),
            redirect_explicit=params.redirect_uri_provided_explicitly, state=params.state,
            scopes=params.scopes or [], code_challenge=params.code_challenge, resource=params.resource)
        try:
            request_id = await anyio.to_thread.run_sync(open_request)
        except OAuthRefusal as exc:
            raise AuthorizeError(exc.error, exc.message) from None  # type: ignore[arg-type]  # the SDK types error codes as a Literal; ours come from the domain as str (the same RFC 6749 codes)
        return f"{self.server.resources.issuer}/authorize/consent?request={request_id}"

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        view = await anyio.to_thread.run_sync(self.server.tokens.code_view, code)
        if view is None:
            return None
        return AuthorizationCode(code=code, scopes=view.scopes, expires_at=view.expires_at.timestamp(),
                                 client_id=view.client_id, code_challenge=view.code_challenge,
                                 redirect_uri=AnyUrl(view.redirect_uri),
                                 redirect_uri_provided_explicitly=view.redirect_explicit, resource=view.resource)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull,
                                          authorization_code: AuthorizationCode) -> OAuthToken:
        return await self._issue(self.server.tokens.exchange_code, authorization_code.code)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        view = await anyio.to_thread.run_sync(self.server.tokens.refresh_view, refresh_token)
        if view is None:
            return None
        return RefreshToken(token=refresh_token, client_id=view.client_id, scopes=view.scopes,
                            expires_at=int(view.expires_at.timestamp()), resource=view.resource)

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: RefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        return await self._issue(self.server.tokens.refresh, refresh_token.token)

    async def load_access_token(self, token: str) -> AccessToken | None:
        return None  # the MCP endpoint checks access tokens itself (per profile); /revoke is this service's

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        raise NotImplementedError("/revoke is service.api.oauth.endpoints.revoke")

    async def _issue(self, exchange: Any, secret: str) -> OAuthToken:
        try:
            return _token(await anyio.to_thread.run_sync(exchange, secret))
        except OAuthRefusal as exc:
            raise TokenError(exc.error, exc.message) from None  # type: ignore[arg-type]  # the SDK types error codes as a Literal; ours come from the domain as str (the same RFC 6749 codes)


class HashedSecretAuthenticator(ClientAuthenticator):
    """RFC 6749 §2.3.1 client authentication (client_secret_basic, client_secret_post, or none for public
    clients), the secret compared with the stored hash by the domain."""

    def __init__(self, provider: Provider) -> None:
        super().__init__(provider)  # type: ignore[arg-type]  # Provider implements the SDK's generic Protocol with concrete types
        self.server = provider.server

    async def authenticate_request(self, request: Request) -> OAuthClientInformationFull:
        form = await request.form()
        client_id, secret = form.get("client_id"), form.get("client_secret")
        header = request.headers.get("authorization", "")
        if header.lower().startswith("basic "):
            try:
                basic_id, _, basic_secret = base64.b64decode(header[6:], validate=True).decode().partition(":")
            except (binascii.Error, UnicodeDecodeError):
                raise AuthenticationError("invalid Basic authorization header") from None
            if client_id is not None and unquote(basic_id) != client_id:
                raise AuthenticationError("client_id differs between the Basic header and the form")
            client_id, secret = unquote(basic_id), unquote(basic_secret)
        if not isinstance(client_id, str) or not client_id:
            raise AuthenticationError("missing client_id")
        check = partial(self.server.clients.authenticate, client_id, secret if isinstance(secret, str) else None)
        try:
            registration: dict[str, Any] = await anyio.to_thread.run_sync(check)
        except OAuthRefusal as exc:
            raise AuthenticationError(exc.message) from None
        return ServiceClient.model_validate(registration)
