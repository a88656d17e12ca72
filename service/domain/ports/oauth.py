"""What the OAuth rules (service.domain.oauth) need from the canonical store: the rows of the authorization
server, as Protocols of the attributes the domain reads and sets, and the member of a unit of work that reads
and writes them (`uow.oauth`; implemented by service.store.oauth over service.store.oauth_tables).

Secrets arrive here as hashes only. The two steps that must be atomic between replicas -- using an
authorization code and rotating a refresh token -- are single conditional UPDATEs (`use_code`, `use_token`):
of two concurrent uses exactly one gets True.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol


class ClientRecord(Protocol):
    id: int | None
    client_id: str
    secret_hash: str | None
    registration: dict[str, Any]
    created_at: datetime
    first_grant_at: datetime | None


class RequestRecord(Protocol):
    id: int | None
    request_id: str
    client_id: int
    resource: str
    redirect_uri: str
    redirect_explicit: bool
    state: str | None
    scopes: list[str]
    code_challenge: str
    csrf_hash: str | None
    attempts: int
    created_at: datetime
    expires_at: datetime
    closed_at: datetime | None
    outcome: str | None


class GrantRecord(Protocol):
    id: int | None
    grant_id: str
    profile_id: int
    client_id: int
    resource: str
    scopes: list[str]
    approved_token_id: str | None
    created_at: datetime
    revoked_at: datetime | None
    revoke_reason: str | None


class CodeRecord(Protocol):
    id: int | None
    code_hash: str
    grant_id: int
    code_challenge: str
    redirect_uri: str
    redirect_explicit: bool
    created_at: datetime
    expires_at: datetime
    used_at: datetime | None


class TokenRowRecord(Protocol):
    id: int | None
    token_hash: str
    kind: str  # "access" | "refresh"
    grant_id: int
    created_at: datetime
    expires_at: datetime
    used_at: datetime | None


class ConsentCodeRecord(Protocol):
    id: int | None
    code_hash: str
    profile_id: int
    created_at: datetime
    expires_at: datetime
    used_at: datetime | None


class AccessRecord(Protocol):
    """An OAuth token with its grant and profile, as the check of every MCP call with one reads them."""

    kind: str
    expires_at: datetime
    used_at: datetime | None
    resource: str
    revoked_at: datetime | None  # the grant's
    profile_id: int
    profile_name: str
    profile_created_at: datetime


class GrantListing(Protocol):
    """A grant as listed (CLI, REST, dashboard): its record, its client's and when a token was last issued."""

    @property
    def grant(self) -> GrantRecord: ...

    @property
    def client(self) -> ClientRecord: ...

    @property
    def last_issued_at(self) -> datetime | None: ...


class OAuthRows(Protocol):
    def new_client(self, **fields: Any) -> ClientRecord | None:
        """None when a client with that client_id was stored meanwhile (another process): roll back, read it."""

    def client(self, client_id: str) -> ClientRecord | None: ...

    def client_by_pk(self, pk: int) -> ClientRecord | None: ...

    def unused_clients_since(self, since: datetime) -> int:
        """Registrations made at or after `since` that no grant was ever made for."""

    def new_request(self, **fields: Any) -> RequestRecord: ...

    def request(self, request_id: str, *, for_update: bool = False) -> RequestRecord | None: ...

    def new_grant(self, **fields: Any) -> GrantRecord: ...

    def grant(self, grant_id: str) -> GrantRecord | None: ...

    def grant_by_pk(self, pk: int) -> GrantRecord | None: ...

    def grants_of(self, profile_id: int) -> Sequence[GrantListing]:
        """The profile's grants, newest first."""

    def grants_approved_with(self, token_id: str) -> Sequence[GrantRecord]:
        """Active grants approved with this static token."""

    def new_code(self, **fields: Any) -> CodeRecord: ...

    def code(self, code_hash: str) -> CodeRecord | None: ...

    def use_code(self, pk: int, at: datetime) -> bool:
        """Mark the code used unless it already was; True when this call did."""

    def new_token(self, **fields: Any) -> TokenRowRecord: ...

    def token(self, token_hash: str) -> TokenRowRecord | None: ...

    def use_token(self, pk: int, at: datetime) -> bool:
        """Mark a refresh token used (rotated) unless it already was; True when this call did."""

    def new_consent_code(self, **fields: Any) -> ConsentCodeRecord: ...

    def consent_code(self, code_hash: str) -> ConsentCodeRecord | None: ...

    def use_consent_code(self, pk: int, at: datetime) -> bool: ...

    def save(self, *records: Any) -> None:
        """Write new or changed records (flushed: ids are set)."""
