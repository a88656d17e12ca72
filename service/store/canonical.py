"""What the OpenSearch mirror reads from and records in the canonical store (the MirrorSource port of
service.domain.ports.sources): the outbox, rows with their versions and vectors, the counts summaries are
checked against. SQL only, on the store side; the search adapter calls it through the port, and no
OpenSearch is here.

Versions are always read BEFORE the content they go with (outbox rows first, canonical rows after): the
content sent is then at least as new as its version, never older, so the real newer change is never the
one refused with 409. This holds under READ COMMITTED, where each statement sees its own snapshot.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import date, datetime

import numpy as np
import sqlalchemy as sa
from sqlmodel import col

from service.clock import utcnow
from service.domain.late import Embedding
from service.domain.models import Fact
from service.domain.ports.sources import Pending
from service.store import aggregates
from service.store.changes import RENAME, Outbox
from service.store import repository as repo
from service.store import vectors
from service.store.engine import Database
from service.store.tables import FactRedaction, FactRow, FactVector, OutboxRow, Profile, ProfileRename, QueryLogRow

PAGE = 500
RETRIES_FIRST = 3  # rows that failed this often go behind fresh ones (order is free: versions are external)


class Canonical:
    def __init__(self, db: Database, model_id: str) -> None:
        self.db = db
        self.model_id = model_id  # vectors of another model are not mirrored (wrong space)
        self.dialect = db.dialect

    # --- outbox ------------------------------------------------------------------------------------

    def pending(self, profile_id: int, limit: int = PAGE) -> list[Pending]:
        """Undelivered rows, oldest first, except that rows failing again and again wait behind the rest."""
        with self.db.read() as session:
            rows = session.execute(
                sa.select(col(OutboxRow.id), col(OutboxRow.entity), col(OutboxRow.entity_id))
                .where(col(OutboxRow.delivered_at).is_(None), col(OutboxRow.profile_id) == profile_id,
                       col(OutboxRow.entity) != RENAME)
                .order_by(col(OutboxRow.attempts) >= RETRIES_FIRST, col(OutboxRow.id))
                .limit(limit)
            ).all()
        return [Pending(int(i), str(e), int(x)) for i, e, x in rows]

    def since(self, profile_id: int, moment: datetime) -> list[Pending]:
        """Rows undelivered or delivered at/after `moment` (a rebuild replays them into the new index)."""
        with self.db.read() as session:
            rows = session.execute(
                sa.select(col(OutboxRow.id), col(OutboxRow.entity), col(OutboxRow.entity_id))
                .where(col(OutboxRow.profile_id) == profile_id, col(OutboxRow.entity) != RENAME,
                       sa.or_(col(OutboxRow.delivered_at).is_(None), col(OutboxRow.delivered_at) >= moment))
                .order_by(col(OutboxRow.id))
            ).all()
        return [Pending(int(i), str(e), int(x)) for i, e, x in rows]

    def pending_renames(self) -> list[tuple[int, str, str]]:
        """(outbox id, old name, new name) of the renames the mirror has not followed yet, oldest first."""
        with self.db.read() as session:
            rows = session.execute(
                sa.select(col(OutboxRow.id), col(ProfileRename.old_name), col(ProfileRename.new_name))
                .join(ProfileRename, col(ProfileRename.id) == OutboxRow.entity_id)
                .where(col(OutboxRow.delivered_at).is_(None), col(OutboxRow.entity) == RENAME)
                .order_by(col(OutboxRow.id))
            ).all()
        return [(int(i), str(old), str(new)) for i, old, new in rows]

    def profiles_with_pending(self) -> list[tuple[int, str]]:
        with self.db.read() as session:
            rows = session.execute(
                sa.select(col(Profile.id), col(Profile.name))
                .where(col(Profile.id).in_(
                    sa.select(col(OutboxRow.profile_id)).where(col(OutboxRow.delivered_at).is_(None)).distinct()
                ))
                .order_by(col(Profile.id))
            ).all()
        return [(int(i), str(n)) for i, n in rows]

    def profiles(self) -> list[tuple[int, str]]:
        with self.db.read() as session:
            return [(int(p.id), p.name) for p in repo.profiles(session) if p.id is not None]

    def delivered(self, ids: Sequence[int]) -> None:
        if ids:
            with self.db.write() as session:
                session.execute(sa.update(OutboxRow).where(col(OutboxRow.id).in_(list(ids)))
                                .values(delivered_at=utcnow()))

    def failed(self, errors: dict[int, str]) -> None:
        with self.db.write() as session:
            for outbox_id, reason in errors.items():
                session.execute(sa.update(OutboxRow).where(col(OutboxRow.id) == outbox_id)
                                .values(attempts=OutboxRow.attempts + 1, last_error=reason[:500]))

    def lag(self, profile_id: int | None = None) -> tuple[int, datetime | None]:
        """(pending rows, created_at of the oldest pending row)."""
        stmt = sa.select(sa.func.count(), sa.func.min(OutboxRow.created_at)).where(
            col(OutboxRow.delivered_at).is_(None))
        if profile_id is not None:
            stmt = stmt.where(col(OutboxRow.profile_id) == profile_id)
        with self.db.read() as session:
            count, oldest = session.execute(stmt).one()
        return int(count), oldest

    def refused(self, profile_id: int) -> tuple[int, str | None]:
        """(pending rows the cluster refused at least once, the latest such refusal's reason)."""
        with self.db.read() as session:
            count, last_id = session.execute(
                sa.select(sa.func.count(), sa.func.max(OutboxRow.id)).where(
                    col(OutboxRow.delivered_at).is_(None), col(OutboxRow.profile_id) == profile_id,
                    col(OutboxRow.attempts) > 0)
            ).one()
            reason = session.execute(
                sa.select(col(OutboxRow.last_error)).where(col(OutboxRow.id) == last_id)).scalar() \
                if last_id is not None else None
        return int(count), reason

    def pending_of(self, profile_id: int, entity: str) -> int:
        with self.db.read() as session:
            return int(session.execute(
                sa.select(sa.func.count()).where(col(OutboxRow.delivered_at).is_(None),
                                                 col(OutboxRow.profile_id) == profile_id,
                                                 col(OutboxRow.entity) == entity)
            ).scalar_one())

    # --- rows and versions -------------------------------------------------------------------------

    def latest_versions(self, profile_id: int, entity: str) -> dict[int, int]:
        """entity id -> id of its latest outbox row. Read BEFORE the rows it versions: the content sent is
        then at least as new as its version, and any newer change has a larger id, delivered later."""
        with self.db.read() as session:
            rows = session.execute(
                sa.select(col(OutboxRow.entity_id), sa.func.max(OutboxRow.id))
                .where(col(OutboxRow.profile_id) == profile_id, col(OutboxRow.entity) == entity)
                .group_by(col(OutboxRow.entity_id))
            ).all()
        return {int(e): int(v) for e, v in rows}

    def redactions_after(self, after_id: int) -> list[tuple[int, int]]:
        """(record id, fact id) of every redaction recorded after record `after_id`, in order, every profile."""
        with self.db.read() as session:
            rows = session.execute(sa.select(col(FactRedaction.id), col(FactRedaction.fact_id))
                                   .where(col(FactRedaction.id) > after_id).order_by(col(FactRedaction.id))).all()
        return [(int(i), int(f)) for i, f in rows]

    def facts(self, profile_id: int, ids: Sequence[int] | None = None, after_id: int = 0,
              limit: int = PAGE) -> list[tuple[FactRow, np.ndarray | None]]:
        """Rows with their vector of the current model (or None); by ids, or a page in id order."""
        stmt = (
            sa.select(FactRow, FactVector)
            .join(FactVector, sa.and_(col(FactVector.fact_id) == FactRow.id, col(FactVector.model) == self.model_id),
                  isouter=True)
            .where(col(FactRow.profile_id) == profile_id)
        )
        stmt = stmt.where(col(FactRow.id).in_(list(ids))) if ids is not None else \
            stmt.where(col(FactRow.id) > after_id).order_by(col(FactRow.id)).limit(limit)
        with self.db.read() as session:
            rows = session.execute(stmt).all()
        return [(r[0], vectors.decode(r[1]) if r[1] is not None else None) for r in rows]

    def fact(self, profile_id: int, uid: str) -> FactRow | None:
        with self.db.read() as session:
            return repo.fact_row(session, profile_id, uid)

    def titles(self, profile_id: int, uids: Iterable[str]) -> dict[str, str]:
        with self.db.read() as session:
            return {u: r.title for u, r in repo.fact_rows_by_uid(session, profile_id, uids).items()}

    def top_facts(self, profile_id: int, first: date, last: date) -> list[tuple[str, int, str]]:
        with self.db.read() as session:
            return aggregates.top_facts(session, profile_id, first, last)

    def fact_counts(self, profile_id: int) -> dict[tuple[str, str], int]:
        """(status, kind) -> facts: what the mirror's store stats are checked against."""
        with self.db.read() as session:
            return aggregates.fact_counts(session, profile_id)

    def facts_with_vectors(self, profile_id: int, fact_ids: Sequence[int]) -> dict[int, tuple[Fact, Embedding | None]]:
        """These facts with their vectors (and token vectors) of the current model, in one read: a search's
        candidates, whose cosines and late interaction are computed here, not asked of the cluster again, and
        whose facts the domain then needs not read again."""
        if not fact_ids:
            return {}
        with self.db.connect() as conn:
            found = repo.facts_with_vectors(conn, profile_id, self.model_id, fact_ids)
        return {fact_id: (fact, vectors.embedding_from_bytes(row.vector_bytes, int(row.vector_dim))
                          if row.vector_bytes is not None else None)
                for fact_id, (fact, row) in found.items()}

    def queries(self, profile_id: int, ids: Sequence[int] | None = None, after_id: int = 0,
                limit: int = PAGE) -> list[QueryLogRow]:
        stmt = sa.select(QueryLogRow).where(col(QueryLogRow.profile_id) == profile_id)
        stmt = stmt.where(col(QueryLogRow.id).in_(list(ids))) if ids is not None else \
            stmt.where(col(QueryLogRow.id) > after_id).order_by(col(QueryLogRow.id)).limit(limit)
        with self.db.read() as session:
            return [r[0] for r in session.execute(stmt).all()]

    def all_facts(self, profile_id: int) -> Iterator[tuple[FactRow, np.ndarray | None]]:
        after = 0
        while page := self.facts(profile_id, after_id=after):
            yield from page
            after = int(page[-1][0].id or 0)

    def all_queries(self, profile_id: int) -> Iterator[QueryLogRow]:
        after = 0
        while page := self.queries(profile_id, after_id=after):
            yield from page
            after = int(page[-1].id or 0)

    def query_window(self, profile_id: int, first: date, last: date) -> tuple[int, int | None]:
        """(rows, largest id) of the profile's query log in the window: what the mirror must also hold."""
        with self.db.read() as session:
            count, top = session.execute(
                sa.select(sa.func.count(), sa.func.max(QueryLogRow.id)).where(
                    col(QueryLogRow.profile_id) == profile_id, col(QueryLogRow.day) >= first,
                    col(QueryLogRow.day) <= last)
            ).one()
        return int(count), None if top is None else int(top)

    # --- vectors -----------------------------------------------------------------------------------

    def unembedded(self, limit: int) -> list[FactRow]:
        """Facts (any profile) with no vector at all, oldest first (service.store.vectors.unembedded)."""
        return vectors.unembedded(self.db, limit)

    def store_vectors(self, profile_id: int, made: dict[int, Embedding]) -> None:
        """Save vectors made after the fact and enqueue the facts again (service.store.vectors.store)."""
        vectors.store(self.db, profile_id, self.model_id, made, requeue=Outbox(enabled=True))

    def counts(self, profile_id: int) -> tuple[int, int]:
        """(facts, query-log rows) of the profile, for progress bars."""
        with self.db.read() as session:
            facts = session.execute(
                sa.select(sa.func.count()).where(col(FactRow.profile_id) == profile_id)).scalar_one()
            queries = session.execute(
                sa.select(sa.func.count()).where(col(QueryLogRow.profile_id) == profile_id)).scalar_one()
        return int(facts), int(queries)
