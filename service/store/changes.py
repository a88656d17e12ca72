"""The one owner of "canonical data changed" (issue 29): every change goes through here, which
- takes the profile's write lock and its next change number (`profiles.fact_seq`; the embedded search
  indexes of every process catch up from it), once per transaction and profile;
- stamps each changed fact with that number (`facts.change_seq`);
- records the transactional outbox row the OpenSearch mirror delivers from -- inside the transaction that
  makes the change, so the mirror can never miss a committed change (it may only lag).

The domain says what changed through the unit of work's `changes` member (SqlChanges); the store's own
Core paths (memory_write's transaction, a search's query-log row, vectors stored later) call the functions
below. No other module writes outbox rows or advances the sequence (tests/test_layout.py).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlmodel import Session

from service.clock import utcnow
from service.store import repository as repo
from service.store.tables import OutboxRow, Profile

RENAME = "rename"  # entity of a profile's rename: entity_id is the profile_renames row naming the old name

_NEXT_CHANGE = (
    sa.update(Profile.__table__)  # type: ignore[attr-defined]
    .where(Profile.__table__.c.id == sa.bindparam("locked_profile"))  # type: ignore[attr-defined]
    .values(fact_seq=Profile.__table__.c.fact_seq + 1)  # type: ignore[attr-defined]
    .returning(Profile.__table__.c.fact_seq)  # type: ignore[attr-defined]
)
_INSERT_OUTBOX = sa.insert(OutboxRow.__table__)  # type: ignore[attr-defined]


class Outbox:
    """Whether outbox rows are written: only when a mirror consumes them (MEMORY_SEARCH=opensearch)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled


def next_change(conn: sa.Connection | Session, profile_id: int) -> int:
    """Take the profile's write lock (a row lock on PostgreSQL; SQLite's writer lock) and its next change
    number."""
    return int(conn.execute(_NEXT_CHANGE, {"locked_profile": profile_id}).scalar_one())


def record(conn: sa.Connection | Session, outbox: Outbox, profile_id: int, entity: str, entity_id: int) -> None:
    """The outbox row of one changed entity ("fact", "query" or RENAME), as a Core INSERT (it runs on a
    plain connection as well as in an ORM session)."""
    if outbox.enabled:
        conn.execute(_INSERT_OUTBOX, {"profile_id": profile_id, "entity": entity, "entity_id": entity_id,
                                      "created_at": utcnow()})


class SqlChanges:
    """The unit of work's `changes` member (the Changes port of service.domain.ports.canonical)."""

    __slots__ = ("session", "outbox", "numbers")

    def __init__(self, session: Session, outbox: Outbox) -> None:
        self.session, self.outbox = session, outbox
        self.numbers: dict[int, int] = {}  # profile id -> this transaction's change number

    def begin(self, profile_id: int) -> int:
        number = self.numbers.get(profile_id)
        if number is None:
            number = self.numbers[profile_id] = next_change(self.session, profile_id)
        return number

    def facts(self, *rows: Any) -> None:
        for row in rows:
            row.change_seq = self.begin(row.profile_id)
            self.session.add(row)
        self.session.flush()
        for row in rows:
            repo.sync_fact_tags(self.session, row)
            assert row.id is not None
            record(self.session, self.outbox, row.profile_id, "fact", row.id)

    def query_logged(self, profile_id: int, query_id: int) -> None:
        record(self.session, self.outbox, profile_id, "query", query_id)

    def profile_renamed(self, profile_id: int, rename_id: int) -> None:
        record(self.session, self.outbox, profile_id, RENAME, rename_id)

