"""SQLModel tables of the canonical store. Every table holding profile data carries profile_id.

Nothing here is ever deleted: facts are retired or superseded, query-log rows are kept,
tokens are revoked. The schema is created and upgraded by Alembic (service/store/migrations).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Optional

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from service.store.column_types import UTCDateTime


def table_of(model: type[SQLModel]) -> sa.Table:
    """A table model's Core Table, typed (for Core statements built once, at import)."""
    return model.__table__  # type: ignore[attr-defined]  # SQLModel sets __table__ at run time, undeclared in its types


def _ts(nullable: bool = False, index: bool = False) -> Any:
    return Field(default=None, sa_column=sa.Column(UTCDateTime(), nullable=nullable, index=index))


class Profile(SQLModel, table=True):
    __tablename__ = "profiles"

    id: Optional[int] = Field(default=None, primary_key=True)
    name: str = Field(sa_column=sa.Column(sa.String(63), nullable=False, unique=True))
    created_at: datetime = _ts()
    # Bumped in every transaction that changes a fact of the profile; search indexes sync from it.
    fact_seq: int = Field(default=0, sa_column=sa.Column(sa.BigInteger, nullable=False, server_default="0"))


class ProfileRename(SQLModel, table=True):
    """A profile's former name (`memory profile rename`): kept as history, and read by the OpenSearch mirror,
    which drops the indices named after it (outbox entity "rename")."""

    __tablename__ = "profile_renames"

    id: Optional[int] = Field(default=None, primary_key=True)
    profile_id: int = Field(sa_column=sa.Column(sa.Integer, sa.ForeignKey("profiles.id"), nullable=False))
    old_name: str = Field(sa_column=sa.Column(sa.String(63), nullable=False))
    new_name: str = Field(sa_column=sa.Column(sa.String(63), nullable=False))
    renamed_at: datetime = _ts()


class Token(SQLModel, table=True):
    __tablename__ = "tokens"

    id: Optional[int] = Field(default=None, primary_key=True)
    token_id: str = Field(sa_column=sa.Column(sa.String(32), nullable=False, unique=True))
    profile_id: int = Field(sa_column=sa.Column(sa.Integer, sa.ForeignKey("profiles.id"), nullable=False, index=True))
    token_hash: str = Field(sa_column=sa.Column(sa.String(64), nullable=False, unique=True))
    created_at: datetime = _ts()
    revoked_at: Optional[datetime] = _ts(nullable=True)


class FactRow(SQLModel, table=True):
    __tablename__ = "facts"
    __table_args__ = (
        sa.Index("ix_facts_profile_status_updated", "profile_id", "status", "updated_at"),
        sa.Index("ix_facts_profile_seq", "profile_id", "change_seq"),
        sa.Index("ix_facts_profile_uid", "profile_id", "uid"),
        sa.Index("ix_facts_profile_created_day", "profile_id", "created_day"),
        sa.Index("ix_facts_profile_retired_day", "profile_id", "retired_day"),
        sa.Index("ix_facts_profile_id", "profile_id", "id"),  # the mirror's and the embedder's passes in id order
        # The listings' newest-first scans (all facts, or one status) by created_at then id, which stop after a
        # page (migration 0010; an imported fact keeps its created_at under a newer id).
        sa.Index("ix_facts_profile_created", "profile_id", "created_at", "id"),
        sa.Index("ix_facts_profile_status_created", "profile_id", "status", "created_at", "id"),
    )

    id: Optional[int] = Field(default=None, primary_key=True)
    profile_id: int = Field(sa_column=sa.Column(sa.Integer, sa.ForeignKey("profiles.id"), nullable=False))
    uid: str = Field(sa_column=sa.Column(sa.String(40), nullable=False, unique=True))
    title: str = Field(sa_column=sa.Column(sa.String(200), nullable=False))
    text: str = Field(sa_column=sa.Column(sa.Text, nullable=False))
    kind: str = Field(sa_column=sa.Column(sa.String(16), nullable=False))
    tags: list[str] = Field(default_factory=list, sa_column=sa.Column(sa.JSON, nullable=False))
    status: str = Field(sa_column=sa.Column(sa.String(16), nullable=False))
    created_at: datetime = _ts()
    updated_at: datetime = _ts()
    retired_at: Optional[datetime] = _ts(nullable=True)
    retire_reason: Optional[str] = Field(default=None, sa_column=sa.Column(sa.String(500), nullable=True))
    supersedes: Optional[str] = Field(default=None, sa_column=sa.Column(sa.String(40), nullable=True))
    superseded_by: Optional[str] = Field(default=None, sa_column=sa.Column(sa.String(40), nullable=True))
    created_day: date = Field(sa_column=sa.Column(sa.Date, nullable=False))
    retired_day: Optional[date] = Field(default=None, sa_column=sa.Column(sa.Date, nullable=True))
    change_seq: int = Field(default=0, sa_column=sa.Column(sa.BigInteger, nullable=False))
    # Set by `memory redact` (the record is a FactRedaction): title and text are markers, no vector, no index entry.
    redacted_at: Optional[datetime] = _ts(nullable=True)
    # Set by `memory import` when the fact came from another profile's export: the uid it had in the document
    # (taken in this store, so it was imported under a new uid), or the document's own copied_from. Never shown
    # to clients; how a repeated import recognises the copy.
    copied_from: Optional[str] = Field(default=None, sa_column=sa.Column(sa.String(40), nullable=True))


class FactTag(SQLModel, table=True):
    """One row per (fact, tag), kept in step with facts.tags, so tag counts are plain SQL GROUP BYs."""

    __tablename__ = "fact_tags"
    __table_args__ = (sa.Index("ix_fact_tags_profile_tag", "profile_id", "tag"),)

    fact_id: int = Field(sa_column=sa.Column(sa.Integer, sa.ForeignKey("facts.id"), primary_key=True))
    tag: str = Field(sa_column=sa.Column(sa.String(64), primary_key=True))
    profile_id: int = Field(sa_column=sa.Column(sa.Integer, sa.ForeignKey("profiles.id"), nullable=False))
    current: bool = Field(sa_column=sa.Column(sa.Boolean, nullable=False))  # the tag is on the fact now
    active: bool = Field(sa_column=sa.Column(sa.Boolean, nullable=False))  # current and the fact is active


class FactRevision(SQLModel, table=True):
    """The previous metadata of a fact amended in place (same uid): nothing is lost."""

    __tablename__ = "fact_revisions"
    __table_args__ = (sa.Index("ix_fact_revisions_fact", "fact_id", "revision"),)

    id: Optional[int] = Field(default=None, primary_key=True)
    profile_id: int = Field(sa_column=sa.Column(sa.Integer, sa.ForeignKey("profiles.id"), nullable=False))
    fact_id: int = Field(sa_column=sa.Column(sa.Integer, sa.ForeignKey("facts.id"), nullable=False))
    revision: int = Field(sa_column=sa.Column(sa.Integer, nullable=False))
    title: str = Field(sa_column=sa.Column(sa.String(200), nullable=False))
    kind: str = Field(sa_column=sa.Column(sa.String(16), nullable=False))
    tags: list[str] = Field(default_factory=list, sa_column=sa.Column(sa.JSON, nullable=False))
    valid_from: datetime = _ts()
    valid_to: datetime = _ts()


class FactVector(SQLModel, table=True):
    """The embedding of a fact, with the model that made it (a changed embedder is detected)."""

    __tablename__ = "fact_vectors"

    fact_id: int = Field(sa_column=sa.Column(sa.Integer, sa.ForeignKey("facts.id"), primary_key=True))
    profile_id: int = Field(sa_column=sa.Column(sa.Integer, sa.ForeignKey("profiles.id"), nullable=False, index=True))
    model: str = Field(sa_column=sa.Column(sa.String(200), nullable=False))
    dim: int = Field(sa_column=sa.Column(sa.Integer, nullable=False))
    vector: bytes = Field(sa_column=sa.Column(sa.LargeBinary, nullable=False))
    created_at: datetime = _ts()


class FactRedaction(SQLModel, table=True):
    """Who removed a fact's words, when and why, with a SHA-256 of what was removed (`memory redact`)."""

    __tablename__ = "fact_redactions"

    id: Optional[int] = Field(default=None, primary_key=True)
    profile_id: int = Field(sa_column=sa.Column(sa.Integer, sa.ForeignKey("profiles.id"), nullable=False))
    fact_id: int = Field(sa_column=sa.Column(sa.Integer, sa.ForeignKey("facts.id"), nullable=False, unique=True))
    redacted_at: datetime = _ts()
    operator: str = Field(sa_column=sa.Column(sa.String(200), nullable=False))
    reason: str = Field(sa_column=sa.Column(sa.String(500), nullable=False))
    text_sha256: str = Field(sa_column=sa.Column(sa.String(64), nullable=False))
    title_sha256: str = Field(sa_column=sa.Column(sa.String(64), nullable=False))
    revisions: int = Field(sa_column=sa.Column(sa.Integer, nullable=False))  # revision titles replaced
    queries: int = Field(sa_column=sa.Column(sa.Integer, nullable=False))  # query-log rows redacted
    retired: bool = Field(sa_column=sa.Column(sa.Boolean, nullable=False))  # the fact was active and got retired


class QueryLogRow(SQLModel, table=True):
    __tablename__ = "query_log"
    __table_args__ = (
        sa.Index("ix_query_log_profile_id", "profile_id", "id"),
        sa.Index("ix_query_log_profile_created", "profile_id", "created_at", "id"),  # the listing, newest first
        # Covering indexes of the summary's GROUP BYs (no visit to the wide rows that carry `results`).
        sa.Index("ix_query_log_profile_day_counts", "profile_id", "day", "matched_count", "inactive_matched"),
        sa.Index("ix_query_log_profile_day_query_mc", "profile_id", "day", "query", "matched_count"),
        sa.Index("ix_query_log_profile_day_top", "profile_id", "day", "top_uid"),
    )

    id: Optional[int] = Field(default=None, primary_key=True)
    profile_id: int = Field(sa_column=sa.Column(sa.Integer, sa.ForeignKey("profiles.id"), nullable=False))
    query: str = Field(sa_column=sa.Column(sa.String(1000), nullable=False))
    tags: list[str] = Field(default_factory=list, sa_column=sa.Column(sa.JSON, nullable=False))
    kind: Optional[str] = Field(default=None, sa_column=sa.Column(sa.String(16), nullable=True))
    limit: int = Field(sa_column=sa.Column("result_limit", sa.Integer, nullable=False))
    matched_count: Optional[int] = Field(default=None, sa_column=sa.Column(sa.Integer, nullable=True))
    returned_count: int = Field(sa_column=sa.Column(sa.Integer, nullable=False))
    inactive_matched: Optional[int] = Field(default=None, sa_column=sa.Column(sa.Integer, nullable=True))
    top_uid: Optional[str] = Field(default=None, sa_column=sa.Column(sa.String(40), nullable=True))
    mode: str = Field(sa_column=sa.Column(sa.String(16), nullable=False))
    latency_ms: float = Field(sa_column=sa.Column(sa.Float, nullable=False))
    created_at: datetime = _ts()
    day: date = Field(sa_column=sa.Column(sa.Date, nullable=False))
    # The search's time window on updated_at (service.domain.window), each end as resolved when it ran.
    window_since: Optional[datetime] = Field(default=None, sa_column=sa.Column(UTCDateTime(), nullable=True))
    window_until: Optional[datetime] = Field(default=None, sa_column=sa.Column(UTCDateTime(), nullable=True))
    # Set by `memory import` when the row's id in the document was taken (it was renumbered): that id.
    copied_from: Optional[int] = Field(default=None, sa_column=sa.Column(sa.Integer, nullable=True))



# The query log newest first: by time, then id (an imported row keeps its created_at under a newer id).
NEWEST_QUERIES = (table_of(QueryLogRow).c.created_at.desc(), table_of(QueryLogRow).c.id.desc())

class QueryLogResult(SQLModel, table=True):
    """What a search handed back (uids with lexical, vector and fused scores), read one row at a time.
    Kept out of query_log so the summary's scans stay narrow."""

    __tablename__ = "query_log_results"

    query_id: int = Field(sa_column=sa.Column(sa.Integer, sa.ForeignKey("query_log.id"), primary_key=True))
    profile_id: int = Field(sa_column=sa.Column(sa.Integer, sa.ForeignKey("profiles.id"), nullable=False))
    results: list[dict[str, Any]] = Field(default_factory=list, sa_column=sa.Column(sa.JSON, nullable=False))
    # Retired/superseded facts the search matched (a few, closest first): what memory once knew. NULL on
    # rows written before migration 0005.
    inactive_uids: Optional[list[str]] = Field(default=None, sa_column=sa.Column(sa.JSON, nullable=True))


class QueryLogTag(SQLModel, table=True):
    """One row per (search, tag filter), so top_tags of the summary is a SQL GROUP BY over the window."""

    __tablename__ = "query_log_tags"
    __table_args__ = (sa.Index("ix_query_log_tags_profile_day", "profile_id", "day", "tag"),)

    query_id: int = Field(sa_column=sa.Column(sa.Integer, sa.ForeignKey("query_log.id"), primary_key=True))
    tag: str = Field(sa_column=sa.Column(sa.String(64), primary_key=True))
    profile_id: int = Field(sa_column=sa.Column(sa.Integer, sa.ForeignKey("profiles.id"), nullable=False))
    day: date = Field(sa_column=sa.Column(sa.Date, nullable=False))


class FactRecall(SQLModel, table=True):
    """How many logged searches returned a fact, and when the last one did (issue 39: curation signals).
    Kept in step with the query log: written in the transaction that logs the search (repository.
    insert_query_log), so the counts are the log's own; a redaction rewrites queries, never results, so it
    leaves them as they are. No row: never returned."""

    __tablename__ = "fact_recalls"
    __table_args__ = (sa.Index("ix_fact_recalls_profile_count", "profile_id", "recalled_count"),)

    uid: str = Field(sa_column=sa.Column(sa.String(40), primary_key=True))
    profile_id: int = Field(sa_column=sa.Column(sa.Integer, sa.ForeignKey("profiles.id"), nullable=False))
    recalled_count: int = Field(sa_column=sa.Column(sa.Integer, nullable=False))
    last_recalled_at: datetime = _ts()


class OutboxRow(SQLModel, table=True):
    """A change to mirror into the search index (MEMORY_SEARCH=opensearch), written in the same transaction
    as the change itself. Its id is the document's external version in the index: changes of one profile
    are serialised by the profile lock, so a later change of a fact always has a larger id.
    Delivered rows are marked, not removed: the outbox is also an audit trail."""

    __tablename__ = "outbox"
    __table_args__ = (sa.Index("ix_outbox_pending", "delivered_at", "id"),)

    id: Optional[int] = Field(default=None, primary_key=True)
    profile_id: int = Field(sa_column=sa.Column(sa.Integer, sa.ForeignKey("profiles.id"), nullable=False))
    entity: str = Field(sa_column=sa.Column(sa.String(16), nullable=False))  # "fact" | "query" | "rename"
    # facts.id, query_log.id or profile_renames.id
    entity_id: int = Field(sa_column=sa.Column(sa.Integer, nullable=False))
    created_at: datetime = _ts()
    delivered_at: Optional[datetime] = _ts(nullable=True)
    attempts: int = Field(default=0, sa_column=sa.Column(sa.Integer, nullable=False, server_default="0"))
    last_error: Optional[str] = Field(default=None, sa_column=sa.Column(sa.String(500), nullable=True))


from service.store import oauth_tables  # noqa: E402,F401 - registers the OAuth tables (they use UTCDateTime)
