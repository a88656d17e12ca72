"""The members of a SQL unit of work (service.store.sql): each implements one Protocol of
service.domain.ports.canonical over the session it is given, by calling the row access of the store's modules.
A statement that no other module needs is written here, next to the one method that runs it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import date, datetime
from typing import Any

import numpy as np
import sqlalchemy as sa
from sqlmodel import Session, col, select

from service.domain.window import ANY, Window
from service.domain.late import Embedding
from service.domain.ports.records import FactRecord, QueryLogRecord, RedactionRecord, RevisionRecord, TokenRecord
from service.store import aggregates as agg
from service.store import changes
from service.store import history
from service.store import recalls
from service.store import redactions
from service.store import repository as repo
from service.store import vectors
from service.store.tables import (
    NEWEST_QUERIES, FactRedaction, FactRevision, FactRow, Profile, ProfileRename, QueryLogResult, QueryLogRow, Token,
)

OWNERS_CHUNK = 500  # uids per IN (...) list


class _Member:
    __slots__ = ("session",)

    def __init__(self, session: Session) -> None:
        self.session = session

    def _save(self, row: Any) -> None:
        self.session.add(row)
        self.session.flush()


class SqlProfiles(_Member):
    __slots__ = ("outbox",)

    def __init__(self, session: Session, outbox: changes.Outbox) -> None:
        super().__init__(session)
        self.outbox = outbox

    def by_name(self, name: str) -> Profile | None:
        return repo.profile_by_name(self.session, name)

    def by_id(self, profile_id: int) -> Profile | None:
        return self.session.get(Profile, profile_id)

    def all(self) -> Sequence[Profile]:
        return repo.profiles(self.session)

    def add(self, name: str, created_at: datetime) -> Profile | None:
        row = Profile(name=name, created_at=created_at, fact_seq=0)
        self.session.add(row)
        try:
            self.session.flush()
        except sa.exc.IntegrityError:  # created concurrently by another process
            return None
        return row

    def rename(self, profile_id: int, old_name: str, new_name: str, at: datetime) -> int | None:
        row = self.session.get(Profile, profile_id)
        assert row is not None and row.name == old_name
        row.name = new_name
        record = ProfileRename(profile_id=profile_id, old_name=old_name, new_name=new_name, renamed_at=at)
        self.session.add_all([row, record])
        try:
            self.session.flush()
        except sa.exc.IntegrityError:  # the new name was taken meanwhile by another process
            return None
        assert record.id is not None
        changes.record(self.session, self.outbox, profile_id, changes.RENAME, record.id)  # the mirror moves it
        return record.id


class SqlTokens(_Member):
    def new(self, *, token_id: str, profile_id: int, token_hash: str, created_at: datetime) -> Token:
        row = Token(token_id=token_id, profile_id=profile_id, token_hash=token_hash, created_at=created_at)
        self.session.add(row)
        return row

    def save(self, token: TokenRecord) -> None:
        self._save(token)

    def by_id(self, token_id: str) -> Token | None:
        return repo.token_by_id(self.session, token_id)

    def of(self, profile_id: int) -> Sequence[Token]:
        return repo.tokens_of(self.session, profile_id)


class SqlFacts(_Member):
    def new(self, **fields: Any) -> FactRow:
        row = FactRow(**fields)
        self._save(row)  # its id is set; numbered and queued for the mirror by the unit of work (changes.Tracked)
        return row

    def get(self, profile_id: int, uid: str, *, for_update: bool = False) -> FactRow | None:
        return repo.fact_row(self.session, profile_id, uid, for_update=for_update)

    def any_profile(self, uid: str, *, for_update: bool = False) -> FactRow | None:
        return redactions.fact_row_any_profile(self.session, uid, for_update=for_update)

    def by_uids(self, profile_id: int, uids: Iterable[str]) -> dict[str, FactRow]:
        return repo.fact_rows_by_uid(self.session, profile_id, uids)

    def by_ids(self, profile_id: int, ids: Iterable[int]) -> dict[int, FactRow]:
        return repo.fact_rows_by_id(self.session, profile_id, ids)

    def owners(self, uids: Iterable[str]) -> dict[str, int]:
        wanted = list(uids)
        owners: dict[str, int] = {}
        for start in range(0, len(wanted), OWNERS_CHUNK):
            rows = self.session.exec(select(FactRow.uid, FactRow.profile_id).where(
                col(FactRow.uid).in_(wanted[start:start + OWNERS_CHUNK]))).all()
            owners.update({uid: owner for uid, owner in rows})
        return owners

    def copies(self, profile_id: int) -> dict[str, str]:
        rows = self.session.exec(select(FactRow.copied_from, FactRow.uid).where(
            FactRow.profile_id == profile_id, col(FactRow.copied_from).is_not(None)).order_by(col(FactRow.id).desc()))
        return {str(source): uid for source, uid in rows}  # id descending: the oldest copy is written last

    def recent(self, profile_id: int, *, limit: int, kind: str | None) -> list[FactRow]:
        return repo.recent_facts(self.session, profile_id, limit=limit, kind=kind)

    def page(self, profile_id: int, *, status: str | None, kind: str | None, tag: str | None, limit: int,
             before_id: int | None, recalled: str | None = None, order: str = "newest",
             before_recall: tuple[int, int] | None = None, window: Window = ANY) -> list[FactRow]:
        return repo.list_facts(self.session, profile_id, status=status, kind=kind, tag=tag, limit=limit,
                               before_id=before_id, recalled=recalled, order=order, before_recall=before_recall,
                               window=window)

    def recalls(self, profile_id: int, uids: Iterable[str]) -> dict[str, tuple[int, datetime]]:
        return recalls.of(self.session, profile_id, uids)

    def count(self, profile_id: int, status: str | None = "active") -> int:
        return repo.count_facts(self.session, profile_id, status)

    def all_of(self, profile_id: int) -> Sequence[FactRow]:
        # oldest first, so that an import into an empty profile numbers its facts in time order
        return self.session.exec(select(FactRow).where(FactRow.profile_id == profile_id)
                                 .order_by(col(FactRow.created_at), col(FactRow.id))).all()

    def at(self, profile_id: int, at: datetime, *, status: str, before_id: int | None,
           limit: int, recalled: str | None = None, order: str = "newest",
           before_recall: tuple[int, int] | None = None) -> list[FactRow]:
        return history.facts_at(self.session, profile_id, at, status=status, before_id=before_id, limit=limit,
                                recalled=recalled, order=order, before_recall=before_recall)


class SqlRevisions(_Member):
    def new(self, *, profile_id: int, fact_id: int, revision: int, title: str, kind: str, tags: list[str],
            valid_from: datetime, valid_to: datetime) -> None:
        self.session.add(FactRevision(profile_id=profile_id, fact_id=fact_id, revision=revision, title=title,
                                      kind=kind, tags=tags, valid_from=valid_from, valid_to=valid_to))

    def save(self, revision: RevisionRecord) -> None:
        self._save(revision)

    def next_number(self, fact_id: int) -> int:
        return repo.next_revision(self.session, fact_id)

    def of(self, fact_id: int) -> list[FactRevision]:
        return redactions.revision_rows(self.session, fact_id)

    def of_facts(self, fact_ids: Iterable[int]) -> dict[int, list[FactRevision]]:
        return history.revisions_by_fact(self.session, fact_ids)


class SqlRedactions(_Member):
    def new(self, **fields: Any) -> FactRedaction:
        record = FactRedaction(**fields)
        self.session.add(record)
        return record

    def save(self, record: RedactionRecord) -> None:
        self._save(record)

    def of(self, fact_id: int) -> FactRedaction | None:
        return redactions.record_of(self.session, fact_id)

    def mark(self) -> tuple[int, int]:
        return redactions.mark(self.session)


class SqlQueryLog(_Member):
    __slots__ = ("outbox",)

    def __init__(self, session: Session, outbox: changes.Outbox) -> None:
        super().__init__(session)
        self.outbox = outbox

    def insert(self, row: dict[str, Any], results: list[dict[str, object]], inactive_uids: list[str]) -> int:
        query_id = repo.insert_query_log(self.session, row, results, inactive_uids)
        changes.record(self.session, self.outbox, int(row["profile_id"]), "query", query_id)
        return query_id

    def save(self, row: QueryLogRecord) -> None:
        self._save(row)

    def newest(self, profile_id: int, limit: int) -> Sequence[QueryLogRow]:
        """By time, not by id: an imported row keeps its created_at under a newer id."""
        return self.session.exec(select(QueryLogRow).where(QueryLogRow.profile_id == profile_id)
                                 .order_by(*NEWEST_QUERIES).limit(limit)).all()

    def get(self, profile_id: int, query_id: int) -> QueryLogRow | None:
        return self.session.exec(
            select(QueryLogRow).where(QueryLogRow.profile_id == profile_id, QueryLogRow.id == query_id)
        ).first()

    def any_profile(self, query_id: int) -> QueryLogRow | None:
        return self.session.get(QueryLogRow, query_id)

    def by_ids(self, ids: list[int]) -> list[QueryLogRow]:
        return redactions.query_rows(self.session, ids)

    def results_of(self, query_id: int) -> QueryLogResult | None:
        return self.session.get(QueryLogResult, query_id)

    def all_of(self, profile_id: int) -> Iterator[tuple[QueryLogRow, QueryLogResult | None]]:
        # oldest first, so that an import into an empty profile numbers its rows in time order
        for row in self.session.exec(select(QueryLogRow).where(QueryLogRow.profile_id == profile_id)
                                     .order_by(col(QueryLogRow.created_at), col(QueryLogRow.id))):
            yield row, self.session.get(QueryLogResult, row.id)

    def texts(self, profile_id: int) -> Iterator[tuple[int, str]]:
        return redactions.query_texts(self.session, profile_id)

    def copies(self, profile_id: int) -> dict[int, list[datetime]]:
        found: dict[int, list[datetime]] = {}
        for source, created in self.session.exec(select(QueryLogRow.copied_from, QueryLogRow.created_at).where(
                QueryLogRow.profile_id == profile_id, col(QueryLogRow.copied_from).is_not(None))):
            if source is not None:  # always (NULLs are filtered out above): narrows the column's Optional type
                found.setdefault(int(source), []).append(created)
        return found

    def kept_ids(self) -> None:
        repo.advance_id_sequence(self.session, QueryLogRow)


class SqlAggregates(_Member):
    def summary_by_day(self, profile_id: int, first: date, last: date) -> dict[date, dict[str, int]]:
        return agg.summary_by_day(self.session, profile_id, first, last)

    def top_queries(self, profile_id: int, first: date, last: date) -> tuple[list[tuple[str, int, int]], int]:
        return agg.top_queries(self.session, profile_id, first, last)

    def top_query_tags(self, profile_id: int, first: date, last: date) -> list[tuple[str, int]]:
        return agg.top_query_tags(self.session, profile_id, first, last)

    def top_facts(self, profile_id: int, first: date, last: date) -> list[tuple[str, int, str]]:
        return agg.top_facts(self.session, profile_id, first, last)

    def fact_counts(self, profile_id: int) -> dict[tuple[str, str], int]:
        return agg.fact_counts(self.session, profile_id)

    def top_fact_tags(self, profile_id: int) -> list[tuple[str, int]]:
        return agg.top_fact_tags(self.session, profile_id)

    def facts_daily(self, profile_id: int, first: date, last: date) -> dict[date, tuple[int, int]]:
        return agg.facts_daily(self.session, profile_id, first, last)

    def fact_span(self, profile_id: int) -> tuple[datetime | None, datetime | None]:
        oldest, newest = agg.fact_span(self.session, profile_id)
        return oldest, newest


class SqlVectors(_Member):
    def put(self, row: FactRecord, model: str, embedding: Embedding, now: datetime) -> None:
        vectors.put(self.session, row, model, embedding, now)

    def store(self, profile_id: int, model: str, made: dict[int, Embedding]) -> None:
        vectors.store_in(self.session, profile_id, model, made)

    def drop(self, fact_id: int) -> bool:
        return redactions.drop_vector(self.session, fact_id)

    def needing(self, profile_id: int, model: str, *, everything: bool) -> list[int]:
        return vectors.needing(self.session, profile_id, model, everything=everything)

    def models_of(self, profile_id: int) -> dict[str, int]:
        return vectors.models_of(self.session, profile_id)

    def active_of(self, profile_id: int, model: str) -> tuple[list[str], np.ndarray, int]:
        return vectors.active_of(self.session, profile_id, model)
