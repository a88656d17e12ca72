"""Output models of the five tools (they become each tool's outputSchema).

A field that may be null is declared `"type": [T, "null"]` rather than pydantic's `anyOf` of two schemas:
the same values, and clients that check structured content against the schema (the MCP SDKs do, on
every call) validate it faster -- a search's ten facts carry about fifty such fields (bench/floor.py).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field, WithJsonSchema

OptStr = Annotated[str | None, WithJsonSchema({"type": ["string", "null"]})]
OptInt = Annotated[int | None, WithJsonSchema({"type": ["integer", "null"]})]
OptFloat = Annotated[float | None, WithJsonSchema({"type": ["number", "null"]})]

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
    retired_at: OptStr
    retire_reason: OptStr = None
    supersedes: OptStr
    superseded_by: OptStr

    @classmethod
    def of(cls, fact: Fact) -> "FactOut":
        return cls(**fact.to_dict())


class ScoredFactOut(FactOut):
    score: float = Field(description="Fused ranking score in (0, 1], relative to this result list only (the best "
                                     "of a list scores highest, however weak): for ordering, not for judging.")
    rank: int = Field(description="1 for the best match.")
    matched_by: list[str] = Field(description='Why the fact matched: "words" (the query\'s terms), "meaning" '
                                              '(cosine similarity at or above the threshold), or both.')
    similarity: OptFloat = Field(description="Cosine similarity to the query when it matched by meaning "
                                                 "(about 0.3 is related, 0.6+ is close), else null.")

    @classmethod
    def scored(cls, item: ScoredFact, rank: int) -> "ScoredFactOut":
        matched_by = [name for name, part in (("words", item.lexical), ("meaning", item.vector)) if part is not None]
        similarity = round(item.vector, 4) if item.vector is not None else None
        return cls(**item.fact.to_dict(), score=round(item.score, 6), rank=rank, matched_by=matched_by,
                   similarity=similarity)


class SearchOut(BaseModel):
    query: str
    matched_count: OptInt
    returned_count: int
    mode: str
    facts: list[ScoredFactOut]


class WriteOut(BaseModel):
    fact: FactOut
    similar: list[FactOut]


class UpdateOut(BaseModel):
    fact: FactOut
    superseded_uid: OptStr


class ForgetOut(BaseModel):
    fact: FactOut


class RecentOut(BaseModel):
    facts: list[FactOut]


def dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json")
