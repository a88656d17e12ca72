"""Client registrations (RFC 7591): which redirect URIs a client may register, its secret kept as a hash,
client authentication at /token and /revoke (RFC 6749 §2.3.1), and the expiry of registrations never used.
The clients of metadata documents (their client_id a URL; service.domain.oauth.documents) are kept here too,
as the last document fetched, so that requests, grants and tokens refer to them like to any other client."""

from __future__ import annotations

import threading
from typing import Any

from service import ids
from service.clock import utcnow
from service.domain.oauth import policy
from service.domain.oauth.documents import is_document_client_id
from service.domain.ports.canonical import CanonicalStore
from service.domain.ports.oauth import ClientRecord
from service.errors import OAuthRefusal

PUBLIC = "none"
DOCUMENT_KEY = "doc_"  # the stored id of a metadata-document client: this + the SHA-256 of its URL (60 hex)


def stored_id(client_id: str) -> str:
    """The id a client is stored under: its own, or for a metadata-document client a digest of its URL (a URL
    may be longer than the 64 characters of the stored id; the URL itself is in the registration)."""
    return DOCUMENT_KEY + ids.hash_token(client_id)[:60] if is_document_client_id(client_id) else client_id


def public_id(client: ClientRecord) -> str:
    """The client_id a client sends and is shown by: the stored id, or a metadata-document client's URL."""
    if client.client_id.startswith(DOCUMENT_KEY):
        return str(client.registration["client_id"])
    return client.client_id


class _AdoptedElsewhere(Exception):
    """Another replica stored the same new document client between this one's read and its insert."""


class ClientRegistry:
    def __init__(self, store: CanonicalStore) -> None:
        self.store = store
        self._adopting = threading.Lock()  # two first sign-ins of one document client in this process: one row

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
            if uow.oauth.new_client(client_id=str(registration["client_id"]), created_at=utcnow(), registration=body,
                                    secret_hash=ids.hash_token(secret) if secret is not None else None) is None:
                raise RuntimeError("a freshly drawn client_id is taken")  # 122 random bits: a broken generator

    def adopt(self, registration: dict[str, Any]) -> None:
        """Keep the registration a checked metadata document makes (documents.registration_of): a new client,
        counted like a registration until its first grant (and capped the same way), or the same client with the
        document as now fetched."""
        key = stored_id(str(registration["client_id"]))
        with self.store.read() as uow:
            known = uow.oauth.client(key)
        if known is not None and known.registration == registration:
            return
        if known is None and not self.accepting():
            raise OAuthRefusal("temporarily_unavailable", "too many new clients are waiting for their first "
                                                          "sign-in (they expire after a day): try again later")
        for _ in range(2):  # a second pass only when another replica adopted it meanwhile: it updates that row
            try:
                with self._adopting, self.store.unit_of_work() as uow:
                    row = uow.oauth.client(key)
                    if row is None:
                        if uow.oauth.new_client(client_id=key, created_at=utcnow(), registration=dict(registration),
                                                secret_hash=None) is None:
                            raise _AdoptedElsewhere  # rolls this unit of work back
                    elif row.registration != registration:
                        row.registration = dict(registration)
                        uow.oauth.save(row)
                return
            except _AdoptedElsewhere:
                continue
        raise OAuthRefusal("temporarily_unavailable", "this client's document was being stored by another replica: "
                                                      "try again")

    def get(self, client_id: str) -> dict[str, Any] | None:
        """The registration of a live client (one with a grant, or registered in the last day), or None."""
        if not client_id or len(client_id) > (policy.MAX_URI if is_document_client_id(client_id) else 64):
            return None
        with self.store.read() as uow:
            row = uow.oauth.client(stored_id(client_id))
        if row is None:
            return None
        if row.first_grant_at is None and row.created_at < utcnow() - policy.UNUSED_CLIENT_LIFETIME:
            return None
        return {**row.registration, "client_id": public_id(row)}

    def authenticate(self, client_id: str | None, secret: str | None) -> dict[str, Any]:
        """The registration of the client a token or revocation request comes from: a confidential client
        proves its secret (compared as hashes), a public one (auth method none) sends none."""
        registration = self.get(client_id or "")
        if registration is None:
            raise OAuthRefusal("invalid_client", f"unknown client_id {client_id!r} (registrations not used within "
                                                 "a day expire): register again")
        with self.store.read() as uow:
            row = uow.oauth.client(stored_id(str(client_id)))
        assert row is not None
        if row.secret_hash is None:
            if secret:
                raise OAuthRefusal("invalid_client", "this client registered as public (auth method none): send "
                                                     "no client_secret")
            return registration
        if not secret or not ids.same_hash(row.secret_hash, ids.hash_token(secret)):
            raise OAuthRefusal("invalid_client", "missing or wrong client_secret")
        return registration
