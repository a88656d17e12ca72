"""Grants as people see them (`memory grant list|revoke`, GET/DELETE /api/{profile}/grants, the dashboard),
revocation (here, by the client at /revoke, on reuse of a code or refresh token, and with the static token that
approved a grant), and the consent codes of `memory grant code`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, WithJsonSchema, computed_field

from service import ids
from service.clock import utcnow
from service.domain import validation
from service.domain.models import Instant, OptInstant, OptStr
from service.domain.oauth import policy
from service.domain.oauth.clients import public_id
from service.domain.ports.canonical import CanonicalStore, UnitOfWork
from service.domain.ports.oauth import GrantListing, GrantRecord
from service.errors import NotFound

GRANT_ID_MAX = 32
CONSENT_CODE = "consent_code"  # approved_with of a grant approved with `memory grant code`, not a static token


class GrantInfo(BaseModel):
    """A grant to a hosted MCP client, declared once: the domain's value and the REST / CLI body of a grant."""

    model_config = ConfigDict(frozen=True)

    grant_id: str
    profile: str
    client_id: str
    client_name: OptStr = Field(description="The name the client gave itself at registration (not verified).")
    redirect_hosts: list[str] = Field(description="Where its sign-ins send the browser back to.")
    resource: str = Field(description="The MCP endpoint its tokens open (their audience).")
    scopes: list[str]
    approved_with: Annotated[str | None, PlainSerializer(lambda v: v or CONSENT_CODE, return_type=str),
                             WithJsonSchema({"type": "string"})] = Field(
        description="The id of the static token that approved it, or `consent_code` (`memory grant code`).")
    created_at: Instant
    last_issued_at: OptInstant = Field(description="When it last issued a token (sign-in or refresh).")
    revoked_at: OptInstant
    revoke_reason: OptStr

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented form; mypy cannot decorate a property
    @property
    def active(self) -> bool:
        return self.revoked_at is None

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


@dataclass(frozen=True)
class ConsentCodeIssued:
    profile: str
    code: str  # shown once; only its hash is stored
    expires_at: datetime


def mark_revoked(grant: GrantRecord, at: datetime, reason: str) -> bool:
    """Revoke the grant (every token it issued stops working) unless it already is; True when this call did."""
    if grant.revoked_at is not None:
        return False
    grant.revoked_at, grant.revoke_reason = at, reason[:200]
    return True


def _info(listing: GrantListing, profile: str) -> GrantInfo:
    grant, registration = listing.grant, listing.client.registration
    hosts = list(dict.fromkeys(urlsplit(str(u)).netloc for u in registration.get("redirect_uris") or []))
    return GrantInfo(grant_id=grant.grant_id, profile=profile, client_id=public_id(listing.client),
                     client_name=registration.get("client_name"), redirect_hosts=hosts, resource=grant.resource,
                     scopes=list(grant.scopes), approved_with=grant.approved_token_id, created_at=grant.created_at,
                     last_issued_at=listing.last_issued_at, revoked_at=grant.revoked_at,
                     revoke_reason=grant.revoke_reason)


class GrantService:
    def __init__(self, store: CanonicalStore) -> None:
        self.store = store

    def _profile_id(self, uow: UnitOfWork, name: str) -> int:
        validation.profile_name(name)
        row = uow.profiles.by_name(name)
        if row is None or row.id is None:
            raise NotFound(f"no profile named {name!r} (list them with: memory profile list)", param="profile")
        return row.id

    def listing(self, profile: str) -> list[GrantInfo]:
        """The profile's grants, newest first, revoked ones included."""
        with self.store.read() as uow:
            return [_info(listing, profile) for listing in uow.oauth.grants_of(self._profile_id(uow, profile))]

    def get(self, profile: str, grant_id: str) -> GrantInfo:
        for info in self.listing(profile):
            if info.grant_id == grant_id:
                return info
        raise NotFound(f"no grant {grant_id!r} in profile {profile!r} (list them with: memory grant list "
                       f"{profile})", param="grant_id")

    def revoke(self, grant_id: str, profile: str | None = None, reason: str = "revoked by the profile's owner") \
            -> GrantInfo:
        """Revoke a grant (of `profile` when given: the REST face only finds its own profile's grants).
        Revoking a revoked grant changes nothing and answers it as it is."""
        grant_id = grant_id.strip()
        with self.store.unit_of_work() as uow:
            grant = uow.oauth.grant(grant_id) if len(grant_id) <= GRANT_ID_MAX else None
            owner = uow.profiles.by_id(grant.profile_id) if grant is not None else None
            if grant is None or owner is None or (profile is not None and owner.name != profile):
                where = f" in profile {profile!r}" if profile is not None else ""
                raise NotFound(f"no grant {grant_id!r}{where} (list them with: memory grant list PROFILE)",
                               param="grant_id")
            if mark_revoked(grant, utcnow(), reason):
                uow.oauth.save(grant)
            name = owner.name
        return self.get(name, grant_id)

    def revoke_approved_with(self, token_id: str) -> int:
        """Revoke the active grants the holder of this static token approved (called when the token is
        revoked: whoever had the token may have approved a grant for themselves); how many."""
        with self.store.unit_of_work() as uow:
            grants = list(uow.oauth.grants_approved_with(token_id))
            now = utcnow()
            for grant in grants:
                mark_revoked(grant, now, f"the token {token_id} that approved it was revoked")
            if grants:
                uow.oauth.save(*grants)
        return len(grants)

    def consent_code(self, profile: str) -> ConsentCodeIssued:
        """A single-use code for the consent page, valid 10 minutes: approves one grant for `profile` without
        typing the profile's token into a browser."""
        code = ids.new_secret(ids.CONSENT_CODE_PREFIX)
        now = utcnow()
        with self.store.unit_of_work() as uow:
            uow.oauth.new_consent_code(code_hash=ids.hash_token(code), profile_id=self._profile_id(uow, profile),
                                       created_at=now, expires_at=now + policy.CONSENT_CODE_LIFETIME)
        return ConsentCodeIssued(profile, code, now + policy.CONSENT_CODE_LIFETIME)
