"""Pure domain types handed to the faces (MCP, REST, CLI). No I/O here."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from service.clock import isoformat
from service.contract import FactStatus  # noqa: F401 - declared with the contract, used by the domain from here

def embedding_text(title: str, text: str) -> str:
    """What is embedded for a fact (the same in every backend and in reindex)."""
    return f"{title}\n{text}"


@dataclass(frozen=True)
class ProfileRef:
    """An authenticated profile, as every layer below the faces sees it."""

    id: int
    name: str
    created_at: datetime


@dataclass(frozen=True)
class Fact:
    uid: str
    title: str
    text: str
    kind: str
    tags: list[str]
    status: str
    created_at: datetime
    updated_at: datetime
    retired_at: datetime | None
    supersedes: str | None
    superseded_by: str | None
    retire_reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "uid": self.uid,
            "title": self.title,
            "text": self.text,
            "kind": self.kind,
            "tags": list(self.tags),
            "status": self.status,
            "created_at": isoformat(self.created_at),
            "updated_at": isoformat(self.updated_at),
            "retired_at": isoformat(self.retired_at),
            "retire_reason": self.retire_reason,
            "supersedes": self.supersedes,
            "superseded_by": self.superseded_by,
        }


@dataclass(frozen=True)
class Revision:
    revision: int
    title: str
    kind: str
    tags: list[str]
    valid_from: datetime
    valid_to: datetime

    def to_dict(self) -> dict[str, Any]:
        return {
            "revision": self.revision,
            "title": self.title,
            "kind": self.kind,
            "tags": list(self.tags),
            "valid_from": isoformat(self.valid_from),
            "valid_to": isoformat(self.valid_to),
        }


@dataclass(frozen=True)
class WriteResult:
    fact: Fact
    similar: list[Fact] = field(default_factory=list)


@dataclass(frozen=True)
class UpdateResult:
    fact: Fact
    superseded_uid: str | None
    changed: bool


@dataclass(frozen=True)
class ScoredFact:
    fact: Fact
    score: float
    lexical: float | None = None
    vector: float | None = None


@dataclass(frozen=True)
class SearchOutcome:
    query: str
    matched_count: int | None
    returned_count: int
    facts: list[ScoredFact]
    mode: str
    query_id: int | None = None
