"""Client registrations (RFC 7591): which redirect URIs a client may register, its secret kept as a hash,
client authentication at /token and /revoke (RFC 6749 §2.3.1), and the expiry of registrations never used."""

from __future__ import annotations

from typing import Any

from service import ids
from service.clock import utcnow
from service.domain.oauth import policy
from service.domain.ports.canonical import CanonicalStore
from service.errors import OAuthRefusal

PUBLIC = "none"


class ClientRegistry:
    def __init__(self, store: CanonicalStore) -> None:
        self.store = store

    def accepting(self) -> bool:
        """Whether a new registration is taken: fewer than MAX_UNUSED_CLIENTS registrations of the last day are
        still waiting for their first grant (a flood of registrations stops there, and they expire)."""
        with self.store.read() as uow:
            waiting = uow.oauth.unused_clients_since(utcnow() - policy.UNUSED_CLIENT_LIFETIME)
        return waiting < policy.MAX_UNUSED_CLIENTS

    def register(self, registration: dict[str, Any], secret: str | None) -> None:
        """Keep a registration: `registration` is the RFC 7591 response body without the secret (client_id,
        redirect_uris, client_name, token_endpoint_auth_method, ...); `secret` is stored as its hash."""
        uris = [str(u) for u in registration.get("redirect_uris") or []]
        if not uris:
            raise OAuthRefusal("invalid_redirect_uri", "register at least one redirect URI")
        if len(uris) > policy.MAX_REDIRECT_URIS:
            raise OAuthRefusal("invalid_redirect_uri", f"at most {policy.MAX_REDIRECT_URIS} redirect URIs")
        for uri in uris:
            problem = policy.redirect_uri_problem(uri)
            if problem is not None:
                raise OAuthRefusal("invalid_redirect_uri", problem)
        name = registration.get("client_name")
        if name is not None and len(str(name)) > policy.MAX_CLIENT_NAME:
            raise OAuthRefusal("invalid_client_metadata", f"client_name over {policy.MAX_CLIENT_NAME} characters")
        if (secret is None) != (registration.get("token_endpoint_auth_method") == PUBLIC):
            raise OAuthRefusal("invalid_client_metadata", "a client has a secret unless its auth method is none")
        body = {k: v for k, v in registration.items() if k != "client_secret"}
        with self.store.unit_of_work() as uow:
            uow.oauth.new_client(client_id=str(registration["client_id"]), created_at=utcnow(), registration=body,
                                 secret_hash=ids.hash_token(secret) if secret is not None else None)

    def get(self, client_id: str) -> dict[str, Any] | None:
        """The registration of a live client (one with a grant, or registered in the last day), or None."""
        if not client_id or len(client_id) > 64:
            return None
        with self.store.read() as uow:
            row = uow.oauth.client(client_id)
        if row is None:
            return None
        if row.first_grant_at is None and row.created_at < utcnow() - policy.UNUSED_CLIENT_LIFETIME:
            return None
        return {**row.registration, "client_id": row.client_id}

    def authenticate(self, client_id: str | None, secret: str | None) -> dict[str, Any]:
        """The registration of the client a token or revocation request comes from: a confidential client
        proves its secret (compared as hashes), a public one (auth method none) sends none."""
        registration = self.get(client_id or "")
        if registration is None:
            raise OAuthRefusal("invalid_client", f"unknown client_id {client_id!r} (registrations not used within "
                                                 "a day expire): register again")
        with self.store.read() as uow:
            row = uow.oauth.client(str(client_id))
        assert row is not None
        if row.secret_hash is None:
            if secret:
                raise OAuthRefusal("invalid_client", "this client registered as public (auth method none): send "
                                                     "no client_secret")
            return registration
        if not secret or not ids.same_hash(row.secret_hash, ids.hash_token(secret)):
            raise OAuthRefusal("invalid_client", "missing or wrong client_secret")
        return registration
