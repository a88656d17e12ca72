"""What the search adapters read of the canonical store and record in it: their only way to its data.

The store implements both (service.store.index_source, service.store.canonical) and service.container wires
them into the backends, so no module under service.search imports service.store (tests/test_layout.py).
- IndexSource: the embedded backend's indexes are caches of the store, kept in step with each profile's
  change sequence before every search;
- MirrorSource: the OpenSearch mirror's outbox (what to deliver, what was delivered or refused), the rows
  and vectors it sends, and the canonical counts its summaries are checked against.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Protocol

import numpy as np

from service.domain.late import Embedding, TokenVectors
from service.domain.models import Fact
from service.domain.ports.records import FactRecord, QueryLogRecord


@dataclass(frozen=True)
class ChangedFact:
    """A fact as the embedded index keeps it, read after a change of its profile."""

    fact_id: int
    uid: str
    title: str
    text: str
    kind: str
    tags: tuple[str, ...]
    active: bool
    present: bool  # False once redacted: its words and vector are gone from the index
    vector: np.ndarray | None  # only a vector of the model asked for
    change_seq: int
    fact: Fact | None = None  # the fact as every face shows it (None once redacted), handed back with its hits
    tokens: TokenVectors | None = None  # its content token vectors (service.domain.late), with the vector


class IndexSource(Protocol):
    def profile_ids(self) -> list[int]: ...

    def changes(self, profile_id: int, since: int, model: str) -> tuple[int, list[ChangedFact]]:
        """The profile's change sequence now and, when it passed `since`, its facts changed after `since`
        (oldest first), read in one connection."""
        ...

    def store_vectors(self, profile_id: int, model: str, made: dict[int, Embedding]) -> None:
        """Vectors made after their facts were written (fact id -> embedding), in one transaction."""
        ...


@dataclass(frozen=True)
class Pending:
    """An outbox row to deliver."""

    id: int
    entity: str  # "fact" | "query" (a "rename" is read by pending_renames)
    entity_id: int


class MirrorSource(Protocol):
    model_id: str  # vectors of another model are never mirrored (another space)
    dialect: str  # the canonical database's ("sqlite", "postgresql"): the summaries' fallback source

    # the outbox
    def pending(self, profile_id: int, limit: int = ...) -> list[Pending]: ...
    def since(self, profile_id: int, moment: datetime) -> list[Pending]: ...
    def pending_renames(self) -> list[tuple[int, str, str]]: ...
    def profiles_with_pending(self) -> list[tuple[int, str]]: ...
    def profiles(self) -> list[tuple[int, str]]: ...
    def delivered(self, ids: Sequence[int]) -> None: ...
    def failed(self, errors: dict[int, str]) -> None: ...
    def lag(self, profile_id: int | None = None) -> tuple[int, datetime | None]: ...
    def refused(self, profile_id: int) -> tuple[int, str | None]: ...
    def pending_of(self, profile_id: int, entity: str) -> int: ...
    def latest_versions(self, profile_id: int, entity: str) -> dict[int, int]: ...
    def redactions_after(self, after_id: int) -> list[tuple[int, int]]: ...

    # rows, vectors and counts
    def facts(self, profile_id: int, ids: Sequence[int] | None = None, after_id: int = 0,
              limit: int = ...) -> Sequence[tuple[FactRecord, np.ndarray | None]]: ...
    def fact(self, profile_id: int, uid: str) -> FactRecord | None: ...
    def titles(self, profile_id: int, uids: Iterable[str]) -> dict[str, str]: ...
    # the summary's top_facts from the canonical log: for a tie across the last place, which titles decide
    def top_facts(self, profile_id: int, first: date, last: date) -> list[tuple[str, int, str]]: ...
    def facts_with_vectors(self, profile_id: int, fact_ids: Sequence[int]) -> dict[int, tuple[Fact, Embedding | None]]: ...
    def queries(self, profile_id: int, ids: Sequence[int] | None = None, after_id: int = 0,
                limit: int = ...) -> Sequence[QueryLogRecord]: ...
    def all_facts(self, profile_id: int) -> Iterator[tuple[FactRecord, np.ndarray | None]]: ...
    def all_queries(self, profile_id: int) -> Iterator[QueryLogRecord]: ...
    def query_window(self, profile_id: int, first: date, last: date) -> tuple[int, int | None]: ...
    def unembedded(self, limit: int) -> Sequence[FactRecord]: ...
    def store_vectors(self, profile_id: int, made: dict[int, Embedding]) -> None: ...
    def counts(self, profile_id: int) -> tuple[int, int]: ...
    def fact_counts(self, profile_id: int) -> dict[tuple[str, str], int]: ...
