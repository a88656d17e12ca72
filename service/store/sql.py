"""SqlStore: the canonical store port (service.domain.ports.canonical) over SQLite or PostgreSQL.

A unit of work is one Session of service.store.engine.Database (a read session, or one write transaction)
wrapped in SqlUnitOfWork; its members (service.store.members) are thin wrappers over the row access of
repository.py, history.py, redactions.py, aggregates.py and vectors.py, plus changes.py (the one owner of
"canonical data changed": change numbers and outbox rows), built on first use, so a
unit of work costs one small object besides the session it already needed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Any, Generic, TypeVar, overload

import numpy as np
from sqlmodel import Session

from service.contract import FactStatus
from service.domain.late import Embedding
from service.domain.models import Fact
from service.domain.ports.canonical import Committed
from service.domain.ports.oauth import AccessRecord
from service.domain.ports.records import CredentialRecord
from service.domain.ports.sources import ChangedFact
from service.store import members
from service.store import oauth as oauth_rows
from service.store import repository as repo
from service.store import vectors as stored_vectors
from service.store.engine import Database
from service.store import changes
from service.store.changes import Outbox

log = logging.getLogger(__name__)
_M = TypeVar("_M")


class _member(Generic[_M]):
    """A member built on first use and kept for the rest of the unit of work (functools.cached_property
    without its lock, which Python 3.11 takes on every first access)."""

    def __init__(self, build: Callable[[SqlUnitOfWork], _M]) -> None:
        self.build = build

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, uow: None, owner: type | None = None) -> _member[_M]: ...
    @overload
    def __get__(self, uow: SqlUnitOfWork, owner: type | None = None) -> _M: ...
    def __get__(self, uow: SqlUnitOfWork | None, owner: type | None = None) -> _M | _member[_M]:
        if uow is None:  # looked up on the class
            return self
        member = uow.__dict__[self.name] = self.build(uow)  # found in the instance from now on
        return member


class SqlUnitOfWork:
    session: Session
    mirror_outbox: Outbox
    profiles = _member(lambda u: members.SqlProfiles(u.session, u.mirror_outbox))
    tokens = _member(lambda u: members.SqlTokens(u.session))
    facts = _member(lambda u: members.SqlFacts(u.session))
    revisions = _member(lambda u: members.SqlRevisions(u.session))
    redactions = _member(lambda u: members.SqlRedactions(u.session))
    query_log = _member(lambda u: members.SqlQueryLog(u.session, u.mirror_outbox))
    aggregates = _member(lambda u: members.SqlAggregates(u.session))
    vectors = _member(lambda u: members.SqlVectors(u.session))
    oauth = _member(lambda u: oauth_rows.SqlOAuthRows(u.session))

    def __init__(self, session: Session, outbox: Outbox) -> None:
        self.session = session
        self.mirror_outbox = outbox


class _Unit(AbstractContextManager[SqlUnitOfWork]):
    """The Database's session context, handing out the session wrapped (a class, not a second generator:
    every search and every write passes here)."""

    __slots__ = ("session_context", "outbox")

    def __init__(self, session_context: AbstractContextManager[Session], outbox: Outbox) -> None:
        self.session_context, self.outbox = session_context, outbox

    def __enter__(self) -> SqlUnitOfWork:
        return SqlUnitOfWork(self.session_context.__enter__(), self.outbox)

    def __exit__(self, *exc: Any) -> bool | None:
        return self.session_context.__exit__(*exc)


class _WriteUnit(AbstractContextManager[SqlUnitOfWork]):
    """A write transaction whose changes the store records itself (changes.Tracked): for `profile_id`, the
    profile's lock and change number are taken on entry, and every fact row written is numbered and queued for
    the mirror before the commit; after it, the store's after-commit hook hears what changed. Without a
    profile, writing a fact row is refused (its change would go unnumbered)."""

    __slots__ = ("store", "profile_id", "session_context", "tracked")

    def __init__(self, store: SqlStore, profile_id: int | None) -> None:
        self.store, self.profile_id = store, profile_id
        self.session_context = store.db.write()
        self.tracked: changes.Tracked | None = None

    def __enter__(self) -> SqlUnitOfWork:
        session = self.session_context.__enter__()
        try:
            self.tracked = changes.Tracked(session, self.store.outbox, self.profile_id)
        except BaseException as exc:
            self.session_context.__exit__(type(exc), exc, exc.__traceback__)
            raise
        return SqlUnitOfWork(session, self.store.outbox)

    def __exit__(self, *exc: Any) -> bool | None:
        tracked = self.tracked
        if exc[0] is None and tracked is not None:
            try:
                tracked.finish()
            except BaseException as failed:
                self.session_context.__exit__(type(failed), failed, failed.__traceback__)  # rolled back
                raise
        suppressed = self.session_context.__exit__(*exc)  # the commit (or the rollback)
        if exc[0] is None and tracked is not None and tracked.changed and self.profile_id is not None:
            self.store.committed(Committed(self.profile_id, tracked.profile_name))
        return suppressed


class SqlStore:
    """`outbox`: enabled only when a mirror consumes it (MEMORY_SEARCH=opensearch; service.container)."""

    def __init__(self, db: Database, outbox: Outbox | None = None) -> None:
        self.db = db
        self.outbox = outbox or Outbox(enabled=False)
        self._after_commit: Callable[[Committed], None] | None = None

    def after_commit(self, hook: Callable[[Committed], None]) -> None:
        self._after_commit = hook

    def committed(self, change: Committed) -> None:
        """Run the after-commit hook; its failure is logged, never raised: the change is committed, and every
        search index and the mirror find it by themselves (change numbers, the outbox)."""
        if self._after_commit is None:
            return
        try:
            self._after_commit(change)
        except Exception:
            log.exception("the after-commit hook failed for profile %s", change.profile)

    def credential(self, token_hash: str, *, at_once: bool = False) -> CredentialRecord | None:
        with (self.db.at_once() if at_once else self.db.connect()) as conn:  # every request: one Core SELECT
            return repo.token_credential(conn, token_hash)

    def oauth_credential(self, token_hash: str) -> AccessRecord | None:
        with self.db.connect() as conn:
            return oauth_rows.access(conn, token_hash)

    def facts_by_uid(self, profile_id: int, uids: Iterable[str]) -> dict[str, Fact]:
        uids = list(uids)
        if not uids:  # a write without near-duplicates asks too: no connection for nothing
            return {}
        with self.db.connect() as conn:  # every search asks: Core rows straight to facts
            return repo.facts_by_uid(conn, profile_id, uids)

    def log_search(self, row: dict[str, Any], results: list[dict[str, object]], inactive_uids: list[str]) -> int:
        with self.db.transaction() as conn:  # every search writes: Core INSERTs on a plain connection
            query_id = repo.insert_query_log(conn, row, results, inactive_uids)
            changes.record(conn, self.outbox, int(row["profile_id"]), "query", query_id)
            return query_id

    def add_fact(self, fields: dict[str, Any], embedding: Embedding | None, model: str) -> Fact:
        """memory_write's transaction in Core INSERTs on a plain connection (the ORM unit of work cost ~1 ms
        of a write: bench/breakdown.py); the outbox entry for the mirror in the same transaction."""
        as_stored = None if embedding is None else np.asarray(embedding.vector, dtype=np.float32)
        stored = None if embedding is None or as_stored is None else {
            "model": model, "dim": int(as_stored.shape[0]), "vector": stored_vectors.to_bytes(embedding),
            "created_at": fields["created_at"]}
        with self.db.transaction() as conn:
            seq, profile = changes.lock_profile(conn, fields["profile_id"])
            fact_id = repo.insert_fact(conn, fields, seq, stored)
            changes.record(conn, self.outbox, fields["profile_id"], "fact", fact_id)
        fact = Fact(uid=fields["uid"], title=fields["title"], text=fields["text"], kind=fields["kind"],
                    tags=list(fields["tags"]), status=fields["status"], created_at=fields["created_at"],
                    updated_at=fields["updated_at"], retired_at=None, retire_reason=None, supersedes=None,
                    superseded_by=None)
        # what service.store.index_source would read back for the index (a new fact: present, not redacted)
        indexed = ChangedFact(fact_id=fact_id, uid=fact.uid, title=fact.title, text=fact.text, kind=fact.kind,
                              tags=tuple(fact.tags), active=fact.status == FactStatus.ACTIVE, present=True,
                              vector=as_stored, change_seq=seq, fact=fact,
                              tokens=None if embedding is None else embedding.tokens)
        self.committed(Committed(fields["profile_id"], profile, written=indexed, model=model))
        return fact

    def read(self) -> AbstractContextManager[SqlUnitOfWork]:
        return _Unit(self.db.read(), self.outbox)

    def unit_of_work(self) -> AbstractContextManager[SqlUnitOfWork]:
        return _WriteUnit(self, None)

    def changing(self, profile_id: int) -> AbstractContextManager[SqlUnitOfWork]:
        return _WriteUnit(self, profile_id)

    def purge_old_pages(self) -> list[str]:
        """Old page images: SQLite folds the WAL into the file (secure_delete zeroed the old cells) and truncates
        it; PostgreSQL keeps dead row versions until VACUUM (docs/reviewers.md, "Redaction")."""
        if self.db.dialect != "sqlite":
            return ["PostgreSQL keeps the old row versions until VACUUM: run VACUUM FULL on facts, "
                    "fact_revisions and query_log (docs/reviewers.md, Redaction); WAL archives and backups still hold them"]
        raw = self.db.engine.raw_connection()
        try:
            sqlite = raw.driver_connection  # the sqlite3 connection (typed Optional: a checked-out one has it)
            assert sqlite is not None
            busy, _, _ = sqlite.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            raw.close()
        if busy:
            return ["the WAL could not be checkpointed (another process is reading the database): old page "
                    "images stay in memory.db-wal until the next checkpoint; stop `memory serve` and run "
                    "`memory redact` again to finish"]
        return []
