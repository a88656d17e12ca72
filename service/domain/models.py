"""Pure domain types handed to the faces (MCP, REST, CLI). No I/O here."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from collections.abc import Iterable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, WithJsonSchema

from service.clock import isoformat
from service.domain import lexical
from service.contract import KINDS, STATUSES, FactStatus  # noqa: F401 - FactStatus: used by the domain from here

Kind = Literal[KINDS]  # type: ignore[valid-type]  # a Literal of a runtime tuple (contract.py keeps one list): fine at run time, which mypy cannot see
Status = Literal[STATUSES]  # type: ignore[valid-type]  # a Literal of a runtime tuple (contract.py keeps one list): fine at run time, which mypy cannot see
# A field that may be null is declared `"type": [T, "null"]` rather than pydantic's `anyOf` of two schemas: the
# same values, and clients that check structured content against the schema (the MCP SDKs do, on every call)
# validate it faster -- a search's ten facts carry about fifty such fields (bench/floor.py).
OptStr = Annotated[str | None, WithJsonSchema({"type": ["string", "null"]})]
Instant = Annotated[datetime, PlainSerializer(isoformat, return_type=str, when_used="json"),
                    WithJsonSchema({"type": "string", "format": "date-time"})]
OptInstant = Annotated[datetime | None, PlainSerializer(isoformat, return_type=str | None, when_used="json"),
                       WithJsonSchema({"type": ["string", "null"], "format": "date-time"})]

def embedding_text(title: str, text: str, tags: Iterable[str]) -> str:
    """What is embedded for a fact (the same in every backend, in reindex and in import): its title and text, led
    by the tags its words do not say, sorted (tags are a set): "caroline: Did you go?". A tag is context a fact's
    words may leave out -- who said a chat turn, which project a note belongs to -- and the model reads only the
    words it is given; a tag the words already say is left out, as it would weigh that word twice. On LoCoMo's
    chat turns (speaker as the tag) recall@5 rose from 0.601 to 0.665, its observations (which name their
    speaker) stayed at 0.722 (docs/benchmarks.md)."""
    said = set(lexical.tokens(f"{title} {text}"))
    unsaid = sorted({tag for tag in tags if not set(lexical.tokens(tag)) <= said})
    return f"{', '.join(unsaid)}: {title}\n{text}" if unsaid else f"{title}\n{text}"


@dataclass(frozen=True)
class ProfileRef:
    """An authenticated profile, as every layer below the faces sees it."""

    id: int
    name: str
    created_at: datetime


class Fact(BaseModel):
    """A fact, declared once: the domain's value, and the schema of every face that shows one (the MCP tools'
    output schemas, REST's bodies, the export document). Times are UTC instants, shown as clock.isoformat."""

    model_config = ConfigDict(frozen=True)

    uid: str
    title: str
    text: str
    kind: Kind
    tags: list[str]
    status: Status
    created_at: Instant
    updated_at: Instant
    retired_at: OptInstant
    retire_reason: OptStr
    supersedes: OptStr
    superseded_by: OptStr

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class ReviewedFact(Fact):
    """A fact as REST shows it to reviewers: with how often memory recalled it (issue 39). The counts are the
    query log's, now (also in `as_of` views): searches whose returned facts included this fact."""

    recalled_count: int = Field(ge=0, description="Logged searches whose returned facts included this fact (now, "
                                                  "also in as_of views).")
    last_recalled_at: OptInstant = Field(description="When the last of them ran; null when no search returned it.")

    @classmethod
    def of(cls, fact: Fact, recalled: tuple[int, datetime] | None) -> ReviewedFact:
        count, last = recalled if recalled is not None else (0, None)
        return cls(**dict(fact), recalled_count=count, last_recalled_at=last)


class Revision(BaseModel):
    """An earlier state of a fact's title, kind and tags (an in-place amend), and when it held."""

    model_config = ConfigDict(frozen=True)

    revision: int
    title: str
    kind: Kind
    tags: list[str]
    valid_from: Instant
    valid_to: Instant

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


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
    since: datetime | None = None  # the time window searched, as resolved (service.domain.window)
    until: datetime | None = None
