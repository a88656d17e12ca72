"""The one owner of "canonical data changed" (issue 29): every change goes through here, which
- takes the profile's write lock and its next change number (`profiles.fact_seq`; the embedded search
  indexes of every process catch up from it), once per transaction and profile;
- stamps each changed fact with that number (`facts.change_seq`);
- records the transactional outbox row the OpenSearch mirror delivers from -- inside the transaction that
  makes the change, so the mirror can never miss a committed change (it may only lag).

The domain never says what changed: a unit of work that may change a profile's facts
(`SqlStore.changing(profile)`) takes the lock and the number on entry, and `Tracked` finds every fact row it
writes at flush time and records it at commit; the store's own Core paths (memory_write's transaction, a
search's query-log row, an imported one, a rename) call the functions below. No other module writes outbox rows or advances the sequence (tests/test_layout.py).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlmodel import Session

from service.clock import utcnow
from service.store import repository as repo
from service.store.tables import FactRow, OutboxRow, Profile, QueryLogRow, table_of

RENAME = "rename"  # entity of a profile's rename: entity_id is the profile_renames row naming the old name

_NEXT_CHANGE = (
    sa.update(table_of(Profile))
    .where(table_of(Profile).c.id == sa.bindparam("locked_profile"))
    .values(fact_seq=table_of(Profile).c.fact_seq + 1)
    .returning(table_of(Profile).c.fact_seq, table_of(Profile).c.name)
)
_INSERT_OUTBOX = sa.insert(table_of(OutboxRow))


class Outbox:
    """Whether outbox rows are written: only when a mirror consumes them (MEMORY_SEARCH=opensearch)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled


def lock_profile(conn: sa.Connection | Session, profile_id: int) -> tuple[int, str]:
    """Take the profile's write lock (a row lock on PostgreSQL; SQLite's writer lock) and its next change
    number; returns (that number, the profile's name)."""
    seq, name = conn.execute(_NEXT_CHANGE, {"locked_profile": profile_id}).one()
    return int(seq), str(name)


def record(conn: sa.Connection | Session, outbox: Outbox, profile_id: int, entity: str, entity_id: int) -> None:
    """The outbox row of one changed entity ("fact", "query" or RENAME), as a Core INSERT (it runs on a
    plain connection as well as in an ORM session)."""
    if outbox.enabled:
        conn.execute(_INSERT_OUTBOX, {"profile_id": profile_id, "entity": entity, "entity_id": entity_id,
                                      "created_at": utcnow()})


class Tracked:
    """What one unit of work changed, found by the store itself: every fact row the session writes (new or
    modified) and every query-log row it rewrites, caught at each flush (SQLAlchemy's before_flush event), so a
    row the domain mutates is recorded whether or not anyone says so.

    Inside `SqlStore.changing(profile)` fact rows of that profile are stamped with the unit's change number as
    they are flushed; `finish()` then keeps their tags in step and queues them, with the rewritten query-log
    rows, for the mirror (the outbox), in the same transaction. A fact row written in any other unit of work, or
    of another profile, is refused at its flush (ChangeOutsideProfile): no fact change goes unnumbered."""

    __slots__ = ("session", "outbox", "profile_id", "number", "profile_name", "facts", "queries")

    def __init__(self, session: Session, outbox: Outbox, profile_id: int | None = None) -> None:
        self.session, self.outbox, self.profile_id = session, outbox, profile_id
        self.number, self.profile_name = lock_profile(session, profile_id) if profile_id is not None else (0, "")
        self.facts: dict[int, FactRow] = {}  # id(row) -> row, in the order first flushed
        self.queries: dict[int, int] = {}  # rewritten query-log rows: id -> profile id
        sa.event.listen(session, "before_flush", self._before_flush)

    def _before_flush(self, session: Session, _context: Any, _instances: Any) -> None:
        dirty = session.dirty
        for row in (*session.new, *dirty):
            if isinstance(row, FactRow):
                if row in dirty and not session.is_modified(row):
                    continue
                if self.profile_id is None or row.profile_id != self.profile_id:
                    raise ChangeOutsideProfile(
                        f"fact {row.uid} of profile {row.profile_id} written outside store.changing() of its "
                        f"profile (this unit of work: {'no profile' if self.profile_id is None else self.profile_id})")
                row.change_seq = self.number
                self.facts.setdefault(id(row), row)
            elif isinstance(row, QueryLogRow) and row in dirty and row.id is not None:
                self.queries[row.id] = row.profile_id

    @property
    def changed(self) -> bool:
        """Something a search backend follows changed: a fact, or a query-log row (redacted)."""
        return bool(self.facts or self.queries)

    def finish(self) -> None:
        """Before the commit: the last flush, then each changed fact's tags and the mirror's outbox rows."""
        self.session.flush()
        for row in self.facts.values():
            assert row.id is not None
            repo.sync_fact_tags(self.session, row)
            record(self.session, self.outbox, row.profile_id, "fact", row.id)
        for query_id, profile_id in sorted(self.queries.items()):
            record(self.session, self.outbox, profile_id, "query", query_id)


class ChangeOutsideProfile(RuntimeError):
    """A fact row written where its change cannot be recorded: a programming error, never the caller's."""
