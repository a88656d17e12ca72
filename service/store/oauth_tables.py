"""Tables of the OAuth authorization server (MEMORY_OAUTH=on; migration 0008). Registered on the metadata by
service.store.tables, which imports this module.

Every secret (client secret, authorization code, access and refresh token, consent code) is stored as its
SHA-256 (service.ids.hash_token), never itself. Nothing is deleted: codes and refresh tokens are marked used,
grants revoked, requests closed; an expired row is simply never accepted again.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Optional

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from service.store.column_types import UTCDateTime


def _ts(nullable: bool = False) -> Any:
    return Field(default=None, sa_column=sa.Column(UTCDateTime(), nullable=nullable))


def _hash() -> Any:
    return Field(sa_column=sa.Column(sa.String(64), nullable=False, unique=True))


class OAuthClient(SQLModel, table=True):
    """A client registered at /register (RFC 7591). `registration` is what it registered (redirect URIs, name,
    auth method, ...) as the registration response showed it, without the secret."""

    __tablename__ = "oauth_clients"

    id: Optional[int] = Field(default=None, primary_key=True)
    client_id: str = Field(sa_column=sa.Column(sa.String(64), nullable=False, unique=True))
    secret_hash: Optional[str] = Field(default=None, sa_column=sa.Column(sa.String(64), nullable=True))
    registration: dict[str, Any] = Field(default_factory=dict, sa_column=sa.Column(sa.JSON, nullable=False))
    created_at: datetime = _ts()
    first_grant_at: Optional[datetime] = _ts(nullable=True)  # unset and old: the registration has expired


class OAuthRequest(SQLModel, table=True):
    """A pending authorization request: what /authorize was asked, waiting on the consent page."""

    __tablename__ = "oauth_requests"

    id: Optional[int] = Field(default=None, primary_key=True)
    request_id: str = Field(sa_column=sa.Column(sa.String(40), nullable=False, unique=True))
    client_id: int = Field(sa_column=sa.Column(sa.Integer, sa.ForeignKey("oauth_clients.id"), nullable=False))
    resource: str = Field(sa_column=sa.Column(sa.String(400), nullable=False))
    redirect_uri: str = Field(sa_column=sa.Column(sa.String(2000), nullable=False))
    redirect_explicit: bool = Field(sa_column=sa.Column(sa.Boolean, nullable=False))
    state: Optional[str] = Field(default=None, sa_column=sa.Column(sa.String(1000), nullable=True))
    scopes: list[str] = Field(default_factory=list, sa_column=sa.Column(sa.JSON, nullable=False))
    code_challenge: str = Field(sa_column=sa.Column(sa.String(128), nullable=False))
    csrf_hash: Optional[str] = Field(default=None, sa_column=sa.Column(sa.String(64), nullable=True))
    attempts: int = Field(default=0, sa_column=sa.Column(sa.Integer, nullable=False))
    created_at: datetime = _ts()
    expires_at: datetime = _ts()
    closed_at: Optional[datetime] = _ts(nullable=True)
    outcome: Optional[str] = Field(default=None, sa_column=sa.Column(sa.String(16), nullable=True))


class OAuthGrant(SQLModel, table=True):
    """A person's approval: one client, one profile, one resource (the audience of every token it issues)."""

    __tablename__ = "oauth_grants"

    id: Optional[int] = Field(default=None, primary_key=True)
    grant_id: str = Field(sa_column=sa.Column(sa.String(32), nullable=False, unique=True))
    profile_id: int = Field(sa_column=sa.Column(sa.Integer, sa.ForeignKey("profiles.id"), nullable=False, index=True))
    client_id: int = Field(sa_column=sa.Column(sa.Integer, sa.ForeignKey("oauth_clients.id"), nullable=False))
    resource: str = Field(sa_column=sa.Column(sa.String(400), nullable=False))
    scopes: list[str] = Field(default_factory=list, sa_column=sa.Column(sa.JSON, nullable=False))
    # The static token (tokens.token_id) whose holder approved it; None when a consent code did.
    approved_token_id: Optional[str] = Field(default=None,
                                             sa_column=sa.Column(sa.String(32), nullable=True, index=True))
    created_at: datetime = _ts()
    revoked_at: Optional[datetime] = _ts(nullable=True)
    revoke_reason: Optional[str] = Field(default=None, sa_column=sa.Column(sa.String(200), nullable=True))


class OAuthCode(SQLModel, table=True):
    """An authorization code: 60 s, single use (a second use revokes its grant)."""

    __tablename__ = "oauth_codes"

    id: Optional[int] = Field(default=None, primary_key=True)
    code_hash: str = _hash()
    grant_id: int = Field(sa_column=sa.Column(sa.Integer, sa.ForeignKey("oauth_grants.id"), nullable=False))
    code_challenge: str = Field(sa_column=sa.Column(sa.String(128), nullable=False))
    redirect_uri: str = Field(sa_column=sa.Column(sa.String(2000), nullable=False))
    redirect_explicit: bool = Field(sa_column=sa.Column(sa.Boolean, nullable=False))
    created_at: datetime = _ts()
    expires_at: datetime = _ts()
    used_at: Optional[datetime] = _ts(nullable=True)


class OAuthTokenRow(SQLModel, table=True):
    """An access token (`kind` "access", 1 h) or a refresh token ("refresh", rotated: used_at is set when it is
    exchanged, and a second use revokes the grant)."""

    __tablename__ = "oauth_tokens"

    id: Optional[int] = Field(default=None, primary_key=True)
    token_hash: str = _hash()
    kind: str = Field(sa_column=sa.Column(sa.String(8), nullable=False))
    grant_id: int = Field(sa_column=sa.Column(sa.Integer, sa.ForeignKey("oauth_grants.id"), nullable=False,
                                              index=True))
    created_at: datetime = _ts()
    expires_at: datetime = _ts()
    used_at: Optional[datetime] = _ts(nullable=True)


class ConsentCode(SQLModel, table=True):
    """`memory grant code PROFILE`: typed into the consent page instead of the profile's token; 10 min, once."""

    __tablename__ = "oauth_consent_codes"

    id: Optional[int] = Field(default=None, primary_key=True)
    code_hash: str = _hash()
    profile_id: int = Field(sa_column=sa.Column(sa.Integer, sa.ForeignKey("profiles.id"), nullable=False))
    created_at: datetime = _ts()
    expires_at: datetime = _ts()
    used_at: Optional[datetime] = _ts(nullable=True)
