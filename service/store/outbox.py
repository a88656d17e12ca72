"""Transactional outbox: changes to mirror into the search index are recorded inside the transaction
that makes them, so the mirror can never miss a committed change (it may only lag)."""

from __future__ import annotations

import sqlalchemy as sa
from sqlmodel import Session

from service.clock import utcnow
from service.store.tables import FactRow, OutboxRow, QueryLogRow


RENAME = "rename"  # entity of a profile's rename: entity_id is the profile_renames row naming the old name


class Outbox:
    """Enabled only when a mirror consumes it (MEMORY_SEARCH=opensearch)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def fact_changed(self, session: Session, row: FactRow) -> None:
        if self.enabled:
            assert row.id is not None
            session.add(OutboxRow(profile_id=row.profile_id, entity="fact", entity_id=row.id,
                                  created_at=utcnow()))

    def fact_id_changed(self, conn: sa.Connection | Session, profile_id: int, fact_id: int) -> None:
        """fact_changed as a Core INSERT, for a transaction on a plain connection (memory_write's)."""
        if self.enabled:
            conn.execute(sa.insert(OutboxRow.__table__).values(  # type: ignore[attr-defined]
                profile_id=profile_id, entity="fact", entity_id=fact_id, created_at=utcnow()))

    def profile_renamed(self, session: Session, profile_id: int, rename_id: int) -> None:
        """The profile's mirror moves to its new name: the mirror drops the indices named after the old one
        (and any left under the new one) and rebuilds the profile from the canonical store."""
        if self.enabled:
            session.add(OutboxRow(profile_id=profile_id, entity=RENAME, entity_id=rename_id, created_at=utcnow()))

    def query_logged(self, session: Session, row: QueryLogRow) -> None:
        assert row.id is not None
        self.query_id_logged(session, row.profile_id, row.id)

    def query_id_logged(self, conn: sa.Connection | Session, profile_id: int, query_id: int) -> None:
        """A Core INSERT, so it also runs on the plain connection of the query log's transaction."""
        if self.enabled:
            conn.execute(sa.insert(OutboxRow.__table__).values(  # type: ignore[attr-defined]
                profile_id=profile_id, entity="query", entity_id=query_id, created_at=utcnow()))
