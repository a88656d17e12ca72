"""The canonical store port: what the domain needs from the store of record (service.store.sql.SqlStore).

The domain opens a unit of work -- `store.read()` for reads, `store.unit_of_work()` for one transaction,
committed when the block ends and rolled back entirely on any exception -- and reaches the rows through its
members (facts, revisions, profiles, tokens, redactions, query_log, aggregates, vectors, oauth). Every
decision about those rows (lifecycle, validation, what a redaction replaces) stays in the domain; the store
only reads and writes them. Rows are handed over as the Protocols of ports/records.py, never copied.

Three steps of every call are single operations of the store itself, each its own unit of work, made as cheap
as the store can make them (they are most of a search's time outside the ranking): the token check
(`credential`), reading a search's hits (`facts_by_uid`) and recording the search (`log_search`).

Writes follow the unit-of-work pattern: `new(...)` adds a row to the unit of work, and a record the domain
changed is written by `save(...)` (which also flushes, so a new row has its id afterwards). Facts change only
inside `store.changing(profile)`, and the store owns the change (issue 56): every fact row the unit writes --
new, or an attribute set -- is stamped with the profile's change number (what every process's embedded index
catches up from) and its outbox row for the mirror is recorded, in the same transaction; after the commit the
store's after-commit hook tells the search backend. The domain never says what changed: it sets a row's
fields (service.domain.lifecycle for the status transitions) and the store finds it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Protocol

import numpy as np

from service.domain.window import ANY, Window
from service.contract import MATCH_BUCKETS
from service.domain.late import Embedding
from service.domain.models import Fact
from service.domain.ports.oauth import AccessRecord, OAuthRows
from service.domain.ports.sources import ChangedFact
from service.domain.ports.records import (
    CredentialRecord, FactRecord, ProfileRecord, QueryLogRecord, QueryResultRecord, RedactionRecord, RevisionRecord,
    TokenRecord,
)

# The counters of Aggregates.summary_by_day: contract.MATCH_BUCKETS beyond "0" (which is zero_match), one
# counter each (b1, b2_5, b6_20, b21), between the totals and retired_only.
BUCKET_COUNTERS = tuple(f"b{label.replace('-', '_').rstrip('+')}" for label, _, _ in MATCH_BUCKETS[1:])
COUNTERS = ("searches", "zero_match", "unknown_matched", *BUCKET_COUNTERS, "retired_only")


class Profiles(Protocol):
    def by_name(self, name: str) -> ProfileRecord | None: ...

    def by_id(self, profile_id: int) -> ProfileRecord | None: ...

    def all(self) -> Sequence[ProfileRecord]:
        """Every profile, by name."""

    def add(self, name: str, created_at: datetime) -> ProfileRecord | None:
        """The new profile; None when the name was taken meanwhile (another process): the unit of work
        cannot go on and must be left by raising."""

    def rename(self, profile_id: int, old_name: str, new_name: str, at: datetime) -> int | None:
        """Give the profile its new name and keep the former one (a rename record, queued for the search mirror,
        which moves the profile's indices); returns the record's id,
        or None when the new name was taken meanwhile (another process): the unit of work must be left by
        raising."""


class Tokens(Protocol):
    def new(self, *, token_id: str, profile_id: int, token_hash: str, created_at: datetime) -> TokenRecord: ...

    def save(self, token: TokenRecord) -> None: ...

    def by_id(self, token_id: str) -> TokenRecord | None: ...

    def of(self, profile_id: int) -> Sequence[TokenRecord]:
        """The profile's tokens, oldest first."""


class Facts(Protocol):
    def new(self, **fields: Any) -> FactRecord:
        """A fact row with the FactRecord attributes given (id None until saved)."""

    def get(self, profile_id: int, uid: str, *, for_update: bool = False) -> FactRecord | None: ...

    def any_profile(self, uid: str, *, for_update: bool = False) -> FactRecord | None:
        """A fact by uid whatever its profile (uids are unique in the store)."""

    def by_uids(self, profile_id: int, uids: Iterable[str]) -> Mapping[str, FactRecord]: ...

    def by_ids(self, profile_id: int, ids: Iterable[int]) -> Mapping[int, FactRecord]: ...

    def owners(self, uids: Iterable[str]) -> dict[str, int]:
        """uid -> profile id, for the uids that exist in any profile."""

    def copies(self, profile_id: int) -> dict[str, str]:
        """copied_from -> uid of the profile's facts imported from another profile's export (the oldest fact
        when two name the same source)."""

    def recent(self, profile_id: int, *, limit: int, kind: str | None) -> Sequence[FactRecord]:
        """Active facts, newest updated_at first."""

    def page(self, profile_id: int, *, status: str | None, kind: str | None, tag: str | None, limit: int,
             before_id: int | None, recalled: str | None = None, order: str = "newest",
             before_recall: tuple[int, int] | None = None, window: Window = ANY) -> Sequence[FactRecord]:
        """Newest first (by id), keyset-paged with before_id; `tag`: facts carrying it now; `window`: updated_at
        inside it (both ends included). order "recalled":
        most recalled first, ties newest first, paged with before_recall (count, id); recalled "never" / "ever":
        facts no logged search returned / some did."""

    def recalls(self, profile_id: int, uids: Iterable[str]) -> dict[str, tuple[int, datetime]]:
        """uid -> (recalled_count, last_recalled_at) of the uids some logged search returned."""
        ...

    def count(self, profile_id: int, status: str | None = "active") -> int: ...

    def all_of(self, profile_id: int) -> Sequence[FactRecord]:
        """Every fact of the profile, any status, in id order."""

    def at(self, profile_id: int, at: datetime, *, status: str, before_id: int | None,
           limit: int, recalled: str | None = None, order: str = "newest",
           before_recall: tuple[int, int] | None = None) -> Sequence[FactRecord]:
        """Facts created at or before `at` whose status then was `status`, newest first, keyset-paged
        (a fact retired or superseded after `at` was active then); `recalled` and `order` as for page()."""


class Revisions(Protocol):
    def new(self, *, profile_id: int, fact_id: int, revision: int, title: str, kind: str, tags: list[str],
            valid_from: datetime, valid_to: datetime) -> None: ...

    def save(self, revision: RevisionRecord) -> None: ...

    def next_number(self, fact_id: int) -> int: ...

    def of(self, fact_id: int) -> Sequence[RevisionRecord]:
        """The fact's revisions, by number."""

    def of_facts(self, fact_ids: Iterable[int]) -> Mapping[int, Sequence[RevisionRecord]]:
        """Each fact's revisions, by number (an empty list for a fact without any)."""


class Redactions(Protocol):
    def new(self, **fields: Any) -> RedactionRecord:
        """A redaction record with the RedactionRecord attributes given (id None until saved)."""

    def save(self, record: RedactionRecord) -> None: ...

    def of(self, fact_id: int) -> RedactionRecord | None: ...

    def mark(self) -> tuple[int, int]:
        """(the newest record's id, the searches redacted in all): it moves with every redaction and with every
        later `--match` that redacts more searches; (0, 0) before the first."""


class QueryLogStore(Protocol):
    def insert(self, row: dict[str, Any], results: list[dict[str, object]], inactive_uids: list[str]) -> int:
        """One search's row (the QueryLogRecord attributes; `id` only to keep an imported one), what it handed
        back and its tags, queued for the search mirror; returns the row's id. The hot path of every search: kept cheap by the store."""

    def save(self, row: QueryLogRecord) -> None: ...

    def newest(self, profile_id: int, limit: int) -> Sequence[QueryLogRecord]: ...

    def get(self, profile_id: int, query_id: int) -> QueryLogRecord | None: ...

    def any_profile(self, query_id: int) -> QueryLogRecord | None: ...

    def by_ids(self, ids: list[int]) -> Sequence[QueryLogRecord]: ...

    def results_of(self, query_id: int) -> QueryResultRecord | None: ...

    def all_of(self, profile_id: int) -> Iterator[tuple[QueryLogRecord, QueryResultRecord | None]]:
        """Every row of the profile in id order, with what it handed back."""

    def texts(self, profile_id: int) -> Iterator[tuple[int, str]]:
        """(id, query) of every row of the profile, in id order, read a page at a time."""

    def copies(self, profile_id: int) -> dict[int, list[datetime]]:
        """copied_from -> created_at of the profile's rows imported under a new id (their id was taken)."""

    def kept_ids(self) -> None:
        """After rows were inserted with their own ids: new rows get ids past them."""


class Aggregates(Protocol):
    """GROUP BYs in the store, never a scan of rows in the domain. Windows are whole UTC days [first, last];
    top lists are at most contract.TOP_N long, count descending, ties by name ascending (byte-wise)."""

    def summary_by_day(self, profile_id: int, first: date, last: date) -> dict[date, dict[str, int]]:
        """Every counter of COUNTERS per day that has searches."""

    def top_queries(self, profile_id: int, first: date, last: date) -> tuple[list[tuple[str, int, int]], int]:
        """(query, searches, zero-match searches) and the exact number of distinct queries."""

    def top_query_tags(self, profile_id: int, first: date, last: date) -> list[tuple[str, int]]: ...

    def top_facts(self, profile_id: int, first: date, last: date) -> list[tuple[str, int, str]]:
        """(uid, times it was the best hit, its current title)."""

    def fact_counts(self, profile_id: int) -> dict[tuple[str, str], int]:
        """(status, kind) -> count."""

    def top_fact_tags(self, profile_id: int) -> list[tuple[str, int]]:
        """Tags over active facts."""

    def facts_daily(self, profile_id: int, first: date, last: date) -> dict[date, tuple[int, int]]:
        """day -> (created, retired)."""

    def fact_span(self, profile_id: int) -> tuple[datetime | None, datetime | None]:
        """created_at of the oldest and the newest fact."""


class Vectors(Protocol):
    def put(self, row: FactRecord, model: str, embedding: Embedding, now: datetime) -> None:
        """The fact's vector (and token vectors) of `model`, replacing any earlier one."""

    def store(self, profile_id: int, model: str, made: dict[int, Embedding]) -> None:
        """Vectors (fact id -> embedding) made after the facts were written."""

    def drop(self, fact_id: int) -> bool:
        """Remove the fact's vector (it is derived from words being redacted); True when there was one."""

    def needing(self, profile_id: int, model: str, *, everything: bool) -> list[int]:
        """Ids of the facts without a vector of `model` (all of them with `everything`), redacted ones aside."""

    def models_of(self, profile_id: int) -> dict[str, int]:
        """Stored vectors per model."""

    def active_of(self, profile_id: int, model: str) -> tuple[list[str], np.ndarray, int]:
        """The profile's active facts with a vector of `model` (uids oldest first, one matrix row each), and
        how many active facts have none of this model."""
        ...


@dataclass(frozen=True)
class Committed:
    """What the store's after-commit hook hears: a profile's facts changed in a committed unit of work; with
    `written`, the one fact memory_write added, as a search index keeps it (its vector of `model`)."""

    profile_id: int
    profile: str
    written: ChangedFact | None = None
    model: str | None = None


class UnitOfWork(Protocol):
    @property
    def profiles(self) -> Profiles: ...

    @property
    def tokens(self) -> Tokens: ...

    @property
    def facts(self) -> Facts: ...

    @property
    def revisions(self) -> Revisions: ...

    @property
    def redactions(self) -> Redactions: ...

    @property
    def query_log(self) -> QueryLogStore: ...

    @property
    def aggregates(self) -> Aggregates: ...

    @property
    def vectors(self) -> Vectors: ...

    @property
    def oauth(self) -> OAuthRows: ...


class WouldWait(Exception):
    """Asked to answer at once, the store cannot without waiting (a database over the network, or busy): ask
    again where waiting is allowed (a worker thread)."""


class CanonicalStore(Protocol):
    def credential(self, token_hash: str, *, at_once: bool = False) -> CredentialRecord | None:
        """The token with this hash and the profile it opens (the check every authenticated call makes). With
        `at_once`, from the event loop's thread: raises WouldWait rather than wait on I/O or a lock."""

    def oauth_credential(self, token_hash: str) -> AccessRecord | None:
        """The OAuth token with this hash, its grant and profile (the check of an MCP call with one)."""

    def facts_by_uid(self, profile_id: int, uids: Iterable[str]) -> dict[str, Fact]:
        """The profile's facts with these uids (a search's hits)."""

    def add_fact(self, fields: dict[str, Any], embedding: Embedding | None, model: str) -> Fact:
        """Record a new fact in its own transaction: the profile's lock and next change number (its
        change_seq), the row (`fields`: FactRecord's columns but id and change_seq), its tags, its vector
        of `model` when given, and the outbox entry for the mirror; then the after-commit hook hears it, with
        the fact as a search index keeps it (Committed.written). Returns the fact as stored."""

    def log_search(self, row: dict[str, Any], results: list[dict[str, object]], inactive_uids: list[str]) -> int:
        """Record one search in its own transaction (QueryLogStore.insert, and the outbox entry for the
        mirror); returns the row's id."""

    def read(self) -> AbstractContextManager[UnitOfWork]:
        """A unit of work for reading (no commit)."""

    def unit_of_work(self) -> AbstractContextManager[UnitOfWork]:
        """One transaction: committed when the block ends, rolled back entirely on any exception. It changes no
        fact: writing a fact row here fails (use `changing`)."""

    def changing(self, profile_id: int) -> AbstractContextManager[UnitOfWork]:
        """One transaction that may change the profile's facts: the profile's write lock and change number are
        taken on entry (before anything is read: a profile's writers serialize), every fact row it writes is
        recorded by the store -- numbered, its tags kept in step, queued for the search mirror -- and, once
        committed, the after-commit hook hears that the profile changed. A rewritten query-log row is queued
        for the mirror too. Nothing else for the domain to say."""

    def after_commit(self, hook: Callable[[Committed], None]) -> None:
        """The one hook run after every commit that changed facts (the container wires it to the search
        backend); a failure of the hook is logged, never raised: the change is committed."""

    def purge_old_pages(self) -> list[str]:
        """Make the store drop old copies of rewritten rows where it can (after a redaction); notes on
        what it could not drop, and how the operator finishes."""
