"""What an agent reads in a search result: the rank, how each fact matched, and its similarity -- not the
min-max score alone (0.001 for a real second match, 1.0 for a sole one)."""

from __future__ import annotations

import pytest

from service.domain.models import ScoredFact
from service.mcp import schemas
from service.mcp.tools import _why
from tests.conftest import ProfileAccess
from tests.support.mcp_client import mcp_client

pytestmark = pytest.mark.anyio


async def test_each_fact_says_its_rank_and_how_it_matched(base_url: str, alpha: ProfileAccess) -> None:
    async with mcp_client(base_url, "alpha", alpha.token) as client:
        for title in ("Deploy runbook", "Deploy checklist for the cluster"):
            await client.call_tool("memory_write", {"title": title, "text": "How to deploy.", "kind": "reference"})
        result = await client.call_tool("memory_search", {"query": "deploy"})
    facts = result.structured_content["facts"]
    assert [f["rank"] for f in facts] == [1, 2]
    assert all(f["matched_by"] == ["words"] and f["similarity"] is None for f in facts)  # MEMORY_EMBEDDER=none
    text = result.content[0].text
    assert "1. [" in text and "2. [" in text and text.count("matched by words") == 2 and "score=" not in text


def test_matched_by_meaning_shows_the_similarity() -> None:
    both = ScoredFact(fact=_fact(), score=1.0, lexical=3.2, vector=0.61234)
    meaning = ScoredFact(fact=_fact(), score=0.001, lexical=None, vector=0.34)
    assert _why(both) == "matched by words and meaning (similarity 0.61)"
    assert _why(meaning) == "matched by meaning (similarity 0.34)"
    out = schemas.ScoredFactOut.scored(meaning, 2)
    assert (out.rank, out.matched_by, out.similarity, out.score) == (2, ["meaning"], 0.34, 0.001)


def _fact():  # noqa: ANN202
    from datetime import datetime, timezone

    from service.domain.models import Fact

    now = datetime(2026, 11, 24, tzinfo=timezone.utc)
    return Fact(uid="f_1", title="T", text="x", kind="user", tags=[], status="active", created_at=now,
                updated_at=now, retired_at=None, retire_reason=None, supersedes=None, superseded_by=None)
