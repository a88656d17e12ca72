"""Output models of the five tools (they become each tool's outputSchema)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from service.domain.models import Fact, ScoredFact


class FactOut(BaseModel):
    uid: str
    title: str
    text: str
    kind: str
    tags: list[str]
    status: str
    created_at: str
    updated_at: str
    retired_at: str | None
    retire_reason: str | None = None
    supersedes: str | None
    superseded_by: str | None

    @classmethod
    def of(cls, fact: Fact) -> "FactOut":
        return cls(**fact.to_dict())


class ScoredFactOut(FactOut):
    score: float

    @classmethod
    def scored(cls, item: ScoredFact) -> "ScoredFactOut":
        return cls(**item.fact.to_dict(), score=round(item.score, 6))


class SearchOut(BaseModel):
    query: str
    matched_count: int | None
    returned_count: int
    mode: str
    facts: list[ScoredFactOut]


class WriteOut(BaseModel):
    fact: FactOut
    similar: list[FactOut]


class UpdateOut(BaseModel):
    fact: FactOut
    superseded_uid: str | None


class ForgetOut(BaseModel):
    fact: FactOut


class RecentOut(BaseModel):
    facts: list[FactOut]


def dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json")
