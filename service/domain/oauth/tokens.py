"""Authorization codes, access and refresh tokens: the exchanges of /token, the access check of the MCP
endpoint, and revocation by the client (RFC 7009).

A code is used once: a second use revokes the grant it made (RFC 6749 §4.1.2). A refresh token is used once
and replaced (rotation, OAuth 2.1 §4.3.1): a second use of the same one revokes the grant. Both "used once"
steps are conditional UPDATEs, so of two concurrent uses on any replicas exactly one wins. An access token is
accepted only by the resource its grant was made for (RFC 8707 audience) while the grant stands.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from service import ids
from service.clock import utcnow
from service.domain.models import ProfileRef
from service.domain.oauth import policy
from service.domain.oauth.clients import public_id
from service.domain.oauth.grants import mark_revoked
from service.domain.oauth.policy import Resources
from service.domain.ports.canonical import CanonicalStore, UnitOfWork
from service.domain.ports.oauth import GrantRecord
from service.errors import OAuthRefusal

ACCESS, REFRESH = "access", "refresh"


@dataclass(frozen=True)
class Issued:
    access_token: str
    refresh_token: str
    expires_in: int  # seconds
    scopes: list[str]


@dataclass(frozen=True)
class CodeView:
    """An authorization code as the SDK's token handler checks it (client, expiry, redirect URI, PKCE)."""

    client_id: str
    scopes: list[str]
    expires_at: datetime
    code_challenge: str
    redirect_uri: str
    redirect_explicit: bool
    resource: str


@dataclass(frozen=True)
class RefreshView:
    client_id: str
    scopes: list[str]
    expires_at: datetime
    resource: str


class TokenService:
    def __init__(self, store: CanonicalStore, resources: Resources) -> None:
        self.store = store
        self.resources = resources

    # --- the MCP endpoint ---------------------------------------------------------------------------

    def access(self, token: str, resource: str) -> ProfileRef | None:
        """The profile an access token opens at `resource`, or None (unknown, expired, its grant revoked, or
        issued for another resource: another profile's URL, or /mcp)."""
        if not token.startswith(ids.ACCESS_TOKEN_PREFIX):
            return None
        found = self.store.oauth_credential(ids.hash_token(token))
        if found is None or found.kind != ACCESS or found.revoked_at is not None or found.expires_at <= utcnow() \
                or found.resource != resource:
            return None
        return ProfileRef(id=found.profile_id, name=found.profile_name, created_at=found.profile_created_at)

    # --- /token ---------------------------------------------------------------------------------------

    def check_code(self, code: str, resource: str | None) -> None:
        """Before the SDK's handler: a code used before revokes its grant; an expired code, a revoked grant or
        a `resource` other than the grant's is refused with its reason."""
        with self.store.read() as uow:
            row = uow.oauth.code(ids.hash_token(code))
            grant = uow.oauth.grant_by_pk(row.grant_id) if row is not None else None
        if row is None or grant is None:
            return  # the SDK's handler says the code does not exist
        if row.used_at is not None:
            self._revoke(grant.id, "its authorization code was used twice")
            raise OAuthRefusal("invalid_grant", "authorization code already used: the grant it made is revoked "
                                                "(a code is single-use); sign in again")
        self._usable(grant, row.expires_at, "authorization code", f"{int(policy.CODE_LIFETIME.total_seconds())} s")
        self._same_resource(grant, resource)

    def check_refresh(self, token: str, resource: str | None) -> None:
        """Before the SDK's handler: a refresh token used before revokes its grant (rotation); expired, revoked
        or another resource is refused with its reason."""
        with self.store.read() as uow:
            row = uow.oauth.token(ids.hash_token(token))
            grant = uow.oauth.grant_by_pk(row.grant_id) if row is not None and row.kind == REFRESH else None
        if row is None or grant is None:
            return
        if row.used_at is not None:
            self._revoke(grant.id, "a refresh token was used twice")
            raise OAuthRefusal("invalid_grant", "refresh token already used: the grant is revoked (refresh tokens "
                                                "are single-use and rotate); sign in again")
        self._usable(grant, row.expires_at, "refresh token", f"{policy.REFRESH_LIFETIME.days} days")
        self._same_resource(grant, resource)

    def code_view(self, code: str) -> CodeView | None:
        with self.store.read() as uow:
            row = uow.oauth.code(ids.hash_token(code))
            grant = uow.oauth.grant_by_pk(row.grant_id) if row is not None else None
            client = uow.oauth.client_by_pk(grant.client_id) if grant is not None else None
        if row is None or grant is None or client is None or row.used_at is not None or grant.revoked_at is not None:
            return None
        return CodeView(public_id(client), list(grant.scopes), row.expires_at, row.code_challenge, row.redirect_uri,
                        row.redirect_explicit, grant.resource)

    def refresh_view(self, token: str) -> RefreshView | None:
        with self.store.read() as uow:
            row = uow.oauth.token(ids.hash_token(token))
            grant = uow.oauth.grant_by_pk(row.grant_id) if row is not None and row.kind == REFRESH else None
            client = uow.oauth.client_by_pk(grant.client_id) if grant is not None else None
        if row is None or grant is None or client is None or row.used_at is not None or grant.revoked_at is not None \
                or row.expires_at <= utcnow():
            return None
        return RefreshView(public_id(client), list(grant.scopes), row.expires_at, grant.resource)

    def exchange_code(self, code: str) -> Issued:
        """Use the code (once) and issue the grant's first access and refresh tokens."""
        with self.store.unit_of_work() as uow:
            row = uow.oauth.code(ids.hash_token(code))
            grant = uow.oauth.grant_by_pk(row.grant_id) if row is not None else None
            if row is None or row.id is None or grant is None:
                raise OAuthRefusal("invalid_grant", "authorization code does not exist")
            if uow.oauth.use_code(row.id, utcnow()):
                self._usable(grant, row.expires_at, "authorization code", "60 s")
                return self._issue(uow, grant)
        self._revoke(grant.id, "its authorization code was used twice")  # another request used it meanwhile
        raise OAuthRefusal("invalid_grant", "authorization code already used: the grant it made is revoked")

    def refresh(self, token: str) -> Issued:
        """Use the refresh token (once) and issue a new access token and a new refresh token."""
        with self.store.unit_of_work() as uow:
            row = uow.oauth.token(ids.hash_token(token))
            grant = uow.oauth.grant_by_pk(row.grant_id) if row is not None and row.kind == REFRESH else None
            if row is None or row.id is None or grant is None:
                raise OAuthRefusal("invalid_grant", "refresh token does not exist")
            if uow.oauth.use_token(row.id, utcnow()):
                self._usable(grant, row.expires_at, "refresh token", f"{policy.REFRESH_LIFETIME.days} days")
                return self._issue(uow, grant)
        self._revoke(grant.id, "a refresh token was used twice")
        raise OAuthRefusal("invalid_grant", "refresh token already used: the grant is revoked")

    # --- /revoke --------------------------------------------------------------------------------------

    def revoke(self, token: str, client_id: str) -> bool:
        """RFC 7009: revoke the grant of an access or refresh token of this client (both kinds stop working);
        True when a grant was revoked. An unknown token, or another client's, changes nothing."""
        with self.store.unit_of_work() as uow:
            row = uow.oauth.token(ids.hash_token(token)) if token.startswith(ids.TOKEN_PREFIX) else None
            grant = uow.oauth.grant_by_pk(row.grant_id) if row is not None else None
            client = uow.oauth.client_by_pk(grant.client_id) if grant is not None else None
            if grant is None or client is None or public_id(client) != client_id:
                return False
            revoked = mark_revoked(grant, utcnow(), "revoked by the client (RFC 7009)")
            uow.oauth.save(grant)
            return revoked

    # --- helpers --------------------------------------------------------------------------------------

    def _issue(self, uow: UnitOfWork, grant: GrantRecord) -> Issued:
        access, refresh = ids.new_secret(ids.ACCESS_TOKEN_PREFIX), ids.new_secret(ids.REFRESH_TOKEN_PREFIX)
        now = utcnow()
        assert grant.id is not None
        uow.oauth.new_token(token_hash=ids.hash_token(access), kind=ACCESS, grant_id=grant.id, created_at=now,
                            expires_at=now + policy.ACCESS_LIFETIME)
        uow.oauth.new_token(token_hash=ids.hash_token(refresh), kind=REFRESH, grant_id=grant.id, created_at=now,
                            expires_at=now + policy.REFRESH_LIFETIME)
        return Issued(access, refresh, int(policy.ACCESS_LIFETIME.total_seconds()), list(grant.scopes))

    def _revoke(self, grant_pk: int | None, reason: str) -> None:
        with self.store.unit_of_work() as uow:
            grant = uow.oauth.grant_by_pk(grant_pk) if grant_pk is not None else None
            if grant is not None and mark_revoked(grant, utcnow(), reason):
                uow.oauth.save(grant)

    @staticmethod
    def _usable(grant: GrantRecord, expires_at: datetime, what: str, lifetime: str) -> None:
        if grant.revoked_at is not None:
            raise OAuthRefusal("invalid_grant", f"the grant of this {what} was revoked: sign in again")
        if expires_at <= utcnow():
            raise OAuthRefusal("invalid_grant", f"{what} expired ({what}s live {lifetime}): sign in again")

    def _same_resource(self, grant: GrantRecord, resource: str | None) -> None:
        if resource is not None and self.resources.canonical(resource) != grant.resource:
            raise OAuthRefusal("invalid_target", f"resource {resource[:200]!r} is not the one this grant was made "
                                                 f"for ({grant.resource})")
