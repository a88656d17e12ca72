"""Output models of the five tools (they become each tool's outputSchema). A fact is the domain's Fact itself
(service.domain.models, declared once for every face); a search adds how each fact matched. Nullable fields are
type arrays, as the Fact's are (why: service.domain.models)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field, WithJsonSchema

from service.domain.models import Fact, OptStr, ScoredFact

OptInt = Annotated[int | None, WithJsonSchema({"type": ["integer", "null"]})]
OptFloat = Annotated[float | None, WithJsonSchema({"type": ["number", "null"]})]


class ScoredFactOut(Fact):
    score: float = Field(description="Ranking score in (0, 1], relative to this result list only (the best of a "
                                     "list scores 1.0, however weak): for ordering, not for judging.")
    rank: int = Field(description="1 for the best match.")
    matched_by: list[str] = Field(description='Why the fact matched: "words" (the query\'s terms), "meaning" '
                                              '(cosine similarity at or above the threshold), or both.')
    similarity: OptFloat = Field(description="Cosine similarity to the query when it matched by meaning "
                                                 "(about 0.3 is related, 0.6+ is close), else null.")

    @classmethod
    def scored(cls, item: ScoredFact, rank: int) -> "ScoredFactOut":
        matched_by = [name for name, part in (("words", item.lexical), ("meaning", item.vector)) if part is not None]
        similarity = round(item.vector, 4) if item.vector is not None else None
        return cls(**dict(item.fact), score=round(item.score, 6), rank=rank, matched_by=matched_by,
                   similarity=similarity)


class SearchOut(BaseModel):
    query: str
    matched_count: OptInt
    returned_count: int
    mode: str
    facts: list[ScoredFactOut]


class WriteOut(BaseModel):
    fact: Fact
    similar: list[Fact]


class UpdateOut(BaseModel):
    fact: Fact
    superseded_uid: OptStr


class ForgetOut(BaseModel):
    fact: Fact


class RecentOut(BaseModel):
    facts: list[Fact]


def dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json")
