"""The OAuth rows of a unit of work (service.domain.ports.oauth.OAuthRows) over SQLite or PostgreSQL, and the
one Core SELECT an MCP call with an OAuth token makes (`access`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlmodel import Session, col, func, select

from service.store.oauth_tables import ConsentCode, OAuthClient, OAuthCode, OAuthGrant, OAuthRequest, OAuthTokenRow
from service.store.tables import Profile, table_of

_R = TypeVar("_R")
_TOKENS, _GRANTS = table_of(OAuthTokenRow), table_of(OAuthGrant)
_PROFILES = table_of(Profile)
_CODES, _CONSENT_CODES = table_of(OAuthCode), table_of(ConsentCode)
_ACCESS = (
    sa.select(_TOKENS.c.kind, _TOKENS.c.expires_at, _TOKENS.c.used_at, _GRANTS.c.resource, _GRANTS.c.revoked_at,
              _PROFILES.c.id.label("profile_id"), _PROFILES.c.name.label("profile_name"),
              _PROFILES.c.created_at.label("profile_created_at"))
    .join(_GRANTS, _GRANTS.c.id == _TOKENS.c.grant_id)
    .join(_PROFILES, _PROFILES.c.id == _GRANTS.c.profile_id)
    .where(_TOKENS.c.token_hash == sa.bindparam("token_hash"))
)


def access(conn: sa.Connection, token_hash: str) -> sa.Row[*tuple[Any, ...]] | None:
    return conn.execute(_ACCESS, {"token_hash": token_hash}).first()


@dataclass(frozen=True)
class Listing:
    grant: OAuthGrant
    client: OAuthClient
    last_issued_at: datetime | None


class SqlOAuthRows:
    __slots__ = ("session",)

    def __init__(self, session: Session) -> None:
        self.session = session

    def _add(self, row: _R) -> _R:
        self.session.add(row)
        self.session.flush()
        return row

    def save(self, *records: Any) -> None:
        self.session.add_all(records)
        self.session.flush()

    def _mark_used(self, table: sa.Table, pk: int, at: datetime) -> bool:
        result = self.session.exec(sa.update(table).where(table.c.id == pk, table.c.used_at.is_(None))
                                   .values(used_at=at))  # an UPDATE: a CursorResult
        return bool(result.rowcount == 1)

    # --- clients ------------------------------------------------------------------------------------

    def new_client(self, **fields: Any) -> OAuthClient | None:
        """The new client's row, or None when one with its client_id was stored meanwhile by another process (a
        metadata-document client adopted by two replicas at once): the caller rolls back and reads that one."""
        try:
            return self._add(OAuthClient(**fields))
        except sa.exc.IntegrityError:
            return None

    def client(self, client_id: str) -> OAuthClient | None:
        return self.session.exec(select(OAuthClient).where(OAuthClient.client_id == client_id)).first()

    def client_by_pk(self, pk: int) -> OAuthClient | None:
        return self.session.get(OAuthClient, pk)

    def unused_clients_since(self, since: datetime) -> int:
        return int(self.session.exec(select(func.count()).select_from(OAuthClient).where(
            col(OAuthClient.first_grant_at).is_(None), col(OAuthClient.created_at) >= since)).one())

    # --- requests and grants ------------------------------------------------------------------------

    def new_request(self, **fields: Any) -> OAuthRequest:
        return self._add(OAuthRequest(**fields))

    def request(self, request_id: str, *, for_update: bool = False) -> OAuthRequest | None:
        stmt = select(OAuthRequest).where(OAuthRequest.request_id == request_id)
        return self.session.exec(stmt.with_for_update() if for_update else stmt).first()

    def new_grant(self, **fields: Any) -> OAuthGrant:
        return self._add(OAuthGrant(**fields))

    def grant(self, grant_id: str) -> OAuthGrant | None:
        return self.session.exec(select(OAuthGrant).where(OAuthGrant.grant_id == grant_id)).first()

    def grant_by_pk(self, pk: int) -> OAuthGrant | None:
        return self.session.get(OAuthGrant, pk)

    def grants_of(self, profile_id: int) -> Sequence[Listing]:
        last = (select(OAuthTokenRow.grant_id, func.max(OAuthTokenRow.created_at).label("last"))
                .group_by(col(OAuthTokenRow.grant_id)).subquery())
        rows = self.session.exec(
            select(OAuthGrant, OAuthClient, last.c.last)
            .join(OAuthClient, col(OAuthClient.id) == OAuthGrant.client_id)
            .outerjoin(last, last.c.grant_id == OAuthGrant.id)
            .where(OAuthGrant.profile_id == profile_id)
            .order_by(col(OAuthGrant.id).desc())).all()
        return [Listing(grant, client, issued) for grant, client, issued in rows]

    def grants_approved_with(self, token_id: str) -> Sequence[OAuthGrant]:
        return self.session.exec(select(OAuthGrant).where(
            OAuthGrant.approved_token_id == token_id, col(OAuthGrant.revoked_at).is_(None))).all()

    # --- codes and tokens ---------------------------------------------------------------------------

    def new_code(self, **fields: Any) -> OAuthCode:
        return self._add(OAuthCode(**fields))

    def code(self, code_hash: str) -> OAuthCode | None:
        return self.session.exec(select(OAuthCode).where(OAuthCode.code_hash == code_hash)).first()

    def use_code(self, pk: int, at: datetime) -> bool:
        return self._mark_used(_CODES, pk, at)

    def new_token(self, **fields: Any) -> OAuthTokenRow:
        return self._add(OAuthTokenRow(**fields))

    def token(self, token_hash: str) -> OAuthTokenRow | None:
        return self.session.exec(select(OAuthTokenRow).where(OAuthTokenRow.token_hash == token_hash)).first()

    def use_token(self, pk: int, at: datetime) -> bool:
        return self._mark_used(_TOKENS, pk, at)

    def new_consent_code(self, **fields: Any) -> ConsentCode:
        return self._add(ConsentCode(**fields))

    def consent_code(self, code_hash: str) -> ConsentCode | None:
        return self.session.exec(select(ConsentCode).where(ConsentCode.code_hash == code_hash)).first()

    def use_consent_code(self, pk: int, at: datetime) -> bool:
        return self._mark_used(_CONSENT_CODES, pk, at)
