"""The rows the canonical store hands the domain, as Protocols of the attributes the domain reads and sets.

The store's own row objects (service.store.tables) satisfy them as they are: no copy is made between the store
and the domain (a search hydrates its hits, an export walks every row of a profile), and a change the domain
makes to a record is written when it hands the record back (`save` of the unit of work's member). The domain
never constructs a record itself: it asks the unit of work (`new`), which knows the tables.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Protocol, TypeVar

from service.domain.models import Fact, Revision


class ProfileRecord(Protocol):
    id: int | None
    name: str
    created_at: datetime
    fact_seq: int  # bumped by every transaction that changes one of its facts


class TokenRecord(Protocol):
    token_id: str
    profile_id: int
    token_hash: str
    created_at: datetime
    revoked_at: datetime | None


class CredentialRecord(Protocol):
    """A token and the profile it opens, as the authentication check of every call reads them."""

    token_id: str
    token_hash: str
    revoked_at: datetime | None
    profile_id: int
    profile_name: str
    profile_created_at: datetime


class FactRecord(Protocol):
    id: int | None
    profile_id: int
    uid: str
    title: str
    text: str
    kind: str
    tags: list[str]
    status: str
    created_at: datetime
    updated_at: datetime
    retired_at: datetime | None
    retire_reason: str | None
    supersedes: str | None
    superseded_by: str | None
    created_day: date
    retired_day: date | None
    change_seq: int
    redacted_at: datetime | None  # set by `memory redact`: title and text are markers
    copied_from: str | None  # set by `memory import`: the uid the fact had in the document it came from


class RevisionRecord(Protocol):
    """The title, kind and tags a fact had before an in-place amend, valid over [valid_from, valid_to)."""

    fact_id: int
    revision: int
    title: str
    kind: str
    tags: list[str]
    valid_from: datetime
    valid_to: datetime


class RedactionRecord(Protocol):
    id: int | None
    profile_id: int
    fact_id: int
    redacted_at: datetime
    operator: str
    reason: str
    text_sha256: str
    title_sha256: str
    revisions: int  # revision titles replaced
    queries: int  # query-log rows redacted
    retired: bool  # the fact was active and got retired


class QueryLogRecord(Protocol):
    id: int | None
    profile_id: int
    query: str
    tags: list[str]
    kind: str | None
    limit: int
    matched_count: int | None
    returned_count: int
    inactive_matched: int | None
    top_uid: str | None
    mode: str
    latency_ms: float
    created_at: datetime
    day: date
    window_since: datetime | None  # the search's time window (service.domain.window), as resolved when it ran
    window_until: datetime | None
    copied_from: int | None  # set by `memory import` when the row was renumbered: its id in the document


class QueryResultRecord(Protocol):
    """What one search handed back (uids and scores) and the inactive facts it matched."""

    results: list[dict[str, Any]]
    inactive_uids: list[str] | None


def to_fact(row: FactRecord) -> Fact:
    return _copied(Fact, row)


def to_revision(row: RevisionRecord) -> Revision:
    return _copied(Revision, row)


_FIELD_NAMES = {cls: tuple(cls.model_fields) for cls in (Fact, Revision)}
T = TypeVar("T", Fact, Revision)


def _copied(cls: type[T], row: Any) -> T:
    """The domain value of a row whose attributes carry the same names (its tags as a list of its own)."""
    values = {name: getattr(row, name) for name in _FIELD_NAMES[cls]}
    values["tags"] = list(values["tags"] or [])
    return cls(**values)
