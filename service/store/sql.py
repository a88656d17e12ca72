"""SqlStore: the canonical store port (service.domain.ports.canonical) over SQLite or PostgreSQL.

A unit of work is one Session of service.store.engine.Database (a read session, or one write transaction)
wrapped in SqlUnitOfWork; its members (service.store.members) are thin wrappers over the row access of
repository.py, history.py, redactions.py, aggregates.py, vectors.py and outbox.py, built on first use, so a
unit of work costs one small object besides the session it already needed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property

from sqlmodel import Session

from service.store import members
from service.store.engine import Database
from service.store.outbox import Outbox


class SqlUnitOfWork:
    def __init__(self, session: Session, outbox: Outbox) -> None:
        self.session = session
        self._outbox = outbox

    @cached_property
    def profiles(self) -> members.SqlProfiles:
        return members.SqlProfiles(self.session)

    @cached_property
    def tokens(self) -> members.SqlTokens:
        return members.SqlTokens(self.session)

    @cached_property
    def facts(self) -> members.SqlFacts:
        return members.SqlFacts(self.session)

    @cached_property
    def revisions(self) -> members.SqlRevisions:
        return members.SqlRevisions(self.session)

    @cached_property
    def redactions(self) -> members.SqlRedactions:
        return members.SqlRedactions(self.session)

    @cached_property
    def query_log(self) -> members.SqlQueryLog:
        return members.SqlQueryLog(self.session)

    @cached_property
    def aggregates(self) -> members.SqlAggregates:
        return members.SqlAggregates(self.session)

    @cached_property
    def vectors(self) -> members.SqlVectors:
        return members.SqlVectors(self.session)

    @cached_property
    def outbox(self) -> members.SqlOutbox:
        return members.SqlOutbox(self.session, self._outbox)


class SqlStore:
    """`outbox`: enabled only when a mirror consumes it (MEMORY_SEARCH=opensearch; service.container)."""

    def __init__(self, db: Database, outbox: Outbox | None = None) -> None:
        self.db = db
        self.outbox = outbox or Outbox(enabled=False)

    @contextmanager
    def read(self) -> Iterator[SqlUnitOfWork]:
        with self.db.read() as session:
            yield SqlUnitOfWork(session, self.outbox)

    @contextmanager
    def unit_of_work(self) -> Iterator[SqlUnitOfWork]:
        with self.db.write() as session:
            yield SqlUnitOfWork(session, self.outbox)

    def purge_old_pages(self) -> list[str]:
        """Old page images: SQLite folds the WAL into the file (secure_delete zeroed the old cells) and truncates
        it; PostgreSQL keeps dead row versions until VACUUM (README, "Redaction")."""
        if self.db.dialect != "sqlite":
            return ["PostgreSQL keeps the old row versions until VACUUM: run VACUUM FULL on facts, "
                    "fact_revisions and query_log (README: Redaction); WAL archives and backups still hold them"]
        raw = self.db.engine.raw_connection()
        try:
            busy, _, _ = raw.driver_connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            raw.close()
        if busy:
            return ["the WAL could not be checkpointed (another process is reading the database): old page "
                    "images stay in memory.db-wal until the next checkpoint; stop `memory serve` and run "
                    "`memory redact` again to finish"]
        return []
