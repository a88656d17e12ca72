"""Profiles and their bearer tokens: creation, issue, revocation, and the one authentication check."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from service import ids
from service.clock import isoformat, utcnow
from service.domain import validation
from service.domain.models import ProfileRef
from service.domain.ports.canonical import CanonicalStore
from service.domain.ports.records import ProfileRecord
from service.errors import Conflict, NotFound, Unauthorized


@dataclass(frozen=True)
class IssuedToken:
    profile: str
    token_id: str
    token: str  # shown once; only its hash is stored


@dataclass(frozen=True)
class Renamed:
    profile: ProfileRef  # under its new name: same id, facts, query log and tokens
    old_name: str
    tokens: int  # active tokens, which keep working under the new name

    def to_dict(self) -> dict[str, Any]:
        return {"profile": self.profile.name, "renamed_from": self.old_name, "active_tokens": self.tokens}


@dataclass(frozen=True)
class TokenInfo:
    token_id: str
    profile: str
    created_at: datetime
    revoked_at: datetime | None
    grants_revoked: int | None = None  # set by revoke_token: the OAuth grants approved with it, revoked now

    def to_dict(self) -> dict[str, Any]:
        out = {
            "token_id": self.token_id,
            "profile": self.profile,
            "created_at": isoformat(self.created_at),
            "revoked_at": isoformat(self.revoked_at),
            "active": self.revoked_at is None,
        }
        return out if self.grants_revoked is None else {**out, "grants_revoked": self.grants_revoked}


# An OAuth access token's profile when its audience is the resource URL given (service.domain.oauth.tokens).
AccessCheck = Callable[[str, str], ProfileRef | None]


def _ref(row: ProfileRecord) -> ProfileRef:
    assert row.id is not None
    return ProfileRef(id=row.id, name=row.name, created_at=row.created_at)


class ProfileService:
    """`access`: the OAuth access-token check (MEMORY_OAUTH=on); `on_token_revoked`: what revoking a static token
    also revokes (the OAuth grants approved with it; returns how many)."""

    def __init__(self, store: CanonicalStore, access: AccessCheck | None = None,
                 on_token_revoked: Callable[[str], int] | None = None) -> None:
        self.store = store
        self.access = access
        self.on_token_revoked = on_token_revoked

    def create(self, name: str) -> ProfileRef:
        validation.profile_name(name)
        with self.store.unit_of_work() as uow:
            row = uow.profiles.add(name, utcnow()) if uow.profiles.by_name(name) is None else None
            if row is None:  # there already, or created concurrently by another process
                raise Conflict(f"profile {name!r} already exists", param="profile")
            return _ref(row)

    def rename(self, old: str, new: str) -> Renamed:
        """Give a profile another name. Everything hangs on the profile's row, not its name -- facts, revisions,
        the query log, redactions, tokens -- so all of it is kept and every token keeps working (under the new
        name: /mcp/<new>, /api/<new>/...). The former name is kept (a rename record) and, in the store's outbox,
        the search mirror is told to move the profile's indices."""
        validation.profile_name(old)
        validation.profile_name(new)
        with self.store.unit_of_work() as uow:
            row = uow.profiles.by_name(old)
            if row is None:
                raise NotFound(_no_such_profile(old, [r.name for r in uow.profiles.all()], create=False),
                               param="profile")
            if uow.profiles.by_name(new) is not None:
                raise Conflict(f"profile {new!r} already exists: pick another name", param="profile")
            assert row.id is not None
            rename_id = uow.profiles.rename(row.id, old, new, utcnow())
            if rename_id is None:  # created concurrently by another process
                raise Conflict(f"profile {new!r} already exists: pick another name", param="profile")
            tokens = sum(1 for t in uow.tokens.of(row.id) if t.revoked_at is None)
            return Renamed(ProfileRef(id=row.id, name=new, created_at=row.created_at), old, tokens)

    def get(self, name: str) -> ProfileRef:
        validation.profile_name(name)
        with self.store.read() as uow:
            row = uow.profiles.by_name(name)
            if row is None:
                raise NotFound(_no_such_profile(name, [r.name for r in uow.profiles.all()], create=True),
                               param="profile")
        return _ref(row)

    def every(self) -> list[ProfileRef]:
        with self.store.read() as uow:
            return [_ref(r) for r in uow.profiles.all()]

    def issue_token(self, name: str) -> IssuedToken:
        profile = self.get(name)
        token = ids.new_token()
        with self.store.unit_of_work() as uow:
            row = uow.tokens.new(token_id=ids.new_token_id(), profile_id=profile.id, token_hash=ids.hash_token(token),
                                 created_at=utcnow())
            uow.tokens.save(row)
        return IssuedToken(profile=profile.name, token_id=row.token_id, token=token)

    def tokens(self, name: str) -> list[TokenInfo]:
        profile = self.get(name)
        with self.store.read() as uow:
            rows = uow.tokens.of(profile.id)
        return [TokenInfo(r.token_id, profile.name, r.created_at, r.revoked_at) for r in rows]

    def revoke_token(self, token_id: str) -> TokenInfo:
        """Revoke a static token, and the OAuth grants approved with it (again on a second call, so a revoke
        interrupted between the two is finished by running it again)."""
        with self.store.unit_of_work() as uow:
            row = uow.tokens.by_id(token_id.strip())
            if row is None:
                raise NotFound(f"no token with id {token_id!r} (list them with: memory token list PROFILE)")
            if row.revoked_at is None:
                row.revoked_at = utcnow()
                uow.tokens.save(row)
            profile = uow.profiles.by_id(row.profile_id)
            assert profile is not None
            info = TokenInfo(row.token_id, profile.name, row.created_at, row.revoked_at)
        if self.on_token_revoked is None:
            return info
        return TokenInfo(info.token_id, info.profile, info.created_at, info.revoked_at,
                         self.on_token_revoked(info.token_id))

    def authenticate(self, authorization: str | None, profile_name: str | None = None, *,
                     at_once: bool = False) -> ProfileRef:
        """The profile a bearer token opens. With profile_name, the token must belong to that profile.

        Every failure raises the same Unauthorized, so a token cannot probe which profiles exist. `at_once`: on
        the event loop's thread, WouldWait when the store cannot answer without waiting (ask again off it).
        """
        token = _bearer(authorization)
        if token is None:
            raise Unauthorized(UNAUTHORIZED_MESSAGE)
        found = self.check_token(token, profile_name, at_once=at_once)
        if found is None:
            raise Unauthorized(UNAUTHORIZED_MESSAGE)
        return found[0]

    def authenticate_mcp(self, authorization: str | None, profile_name: str | None, resource: str) -> ProfileRef:
        """The MCP endpoint's check with MEMORY_OAUTH=on: at /mcp/<profile> a static token of the profile or an
        OAuth access token whose audience is `resource` (that profile's URL); at /mcp (profile_name None) only
        an OAuth token for {issuer}/mcp. Every failure is authenticate's one Unauthorized."""
        token = _bearer(authorization)
        if token is None:
            raise Unauthorized(UNAUTHORIZED_MESSAGE)
        found = self.check_token(token, profile_name) if profile_name is not None else None
        if found is not None:
            return found[0]
        ref = self.access(token, resource) if self.access is not None else None
        if ref is None or (profile_name is not None and ref.name != profile_name):
            raise Unauthorized(UNAUTHORIZED_MESSAGE)
        return ref

    def check_token(self, token: str, profile_name: str | None, *,
                    at_once: bool = False) -> tuple[ProfileRef, str] | None:
        """The profile a static token opens and the token's id, if it is active (and of `profile_name` when
        given); None otherwise."""
        digest = ids.hash_token(token)
        found = self.store.credential(digest, at_once=at_once)
        if (
            found is None
            or not ids.same_hash(found.token_hash, digest)
            or found.revoked_at is not None
            or (profile_name is not None and found.profile_name != profile_name)
        ):
            return None
        ref = ProfileRef(id=found.profile_id, name=found.profile_name, created_at=found.profile_created_at)
        return ref, found.token_id


UNAUTHORIZED_MESSAGE = (
    "missing or invalid bearer token: send 'Authorization: Bearer <token>' with a token of the profile named in "
    "the URL (/mcp/<profile>, /api/<profile>/...); if the same token works against the service's direct address, "
    "a proxy in between drops the Authorization header"
)


def _bearer(header: str | None) -> str | None:
    if not header:
        return None
    scheme, _, value = header.strip().partition(" ")
    value = value.strip()
    if scheme.lower() != "bearer" or not value or len(value) > 512 or not value.isascii():
        return None
    return value


def _no_such_profile(name: str, existing: list[str], *, create: bool) -> str:
    """What a command given a profile that does not exist says (the command line's and the operator's paths only:
    it names other profiles): the closest existing names, or all of them when there are few, then how to create
    one (a typo is likelier than a new profile when one is close)."""
    closest = difflib.get_close_matches(name, existing, n=3, cutoff=0.6)
    if closest:
        return f"no profile named {name!r}: did you mean {' or '.join(repr(c) for c in closest)}?"
    known = f"the profiles are {', '.join(repr(e) for e in sorted(existing))}" if 0 < len(existing) <= 10 \
        else "list them with: memory profile list" if existing else "there are no profiles yet"
    return f"no profile named {name!r} ({known}" + (f"; create it with: memory profile create {name})" if create else ")")
