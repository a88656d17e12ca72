"""Every number the docs state about `score`, checked through memory_search with the real model and the shipped
weights: docs/agents.md "The tools in detail" and docs/reviewers.md "Hybrid ranking"."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from service.config import Settings
from service.container import Services, build_services
from service.domain.ports import Embedder

pytestmark = pytest.mark.model

VIOLIN = ("Violin", "The user plays the violin in a community orchestra.", "user")
CACHE = ("Cache key", "The build cache key of the arm runners is qzx81vk.", "reference")
CACHE_AGAIN = ("Cache key history", "qzx81vk qzx81vk: the old runners also used qzx81vk.", "reference")


def _services(tmp_path: Path, minilm: Embedder, **settings: object) -> Services:
    return build_services(Settings(data_dir=tmp_path, embedder="minilm", **settings), embedder=minilm)


@pytest.fixture
def store(tmp_path: Path, minilm: Embedder) -> Iterator[Services]:
    services = _services(tmp_path, minilm)
    profile = services.profiles.create("alpha")
    for title, text, kind in (VIOLIN, CACHE, CACHE_AGAIN):
        services.facts.write(profile, title=title, text=text, kind=kind, tags=[])
    try:
        yield services
    finally:
        services.close()


def _scores(services: Services, query: str) -> list[tuple[str, float, tuple[str, ...]]]:
    found = services.search.search(services.profiles.get("alpha"), query)
    assert found.matched_count == len(found.facts)
    return [(f.fact.title, f.score, tuple(m for m, v in (("words", f.lexical), ("meaning", f.vector)) if v is not None))
            for f in found.facts]


def test_a_sole_match_scores_1_however_it_matched(store: Services) -> None:
    assert _scores(store, "violin orchestra") == [("Violin", 1.0, ("words", "meaning"))]
    assert _scores(store, "what musical instrument does the user practise") == [("Violin", 1.0, ("meaning",))]


def test_the_best_scores_1_and_the_others_less_best_first(store: Services) -> None:
    """The second stage's scores: exp(score - the best's), so 1.0 for the first, the rest in (0, 1), falling."""
    scores = _scores(store, "qzx81vk cache key")
    assert len(scores) == 2 and scores[0][1] == 1.0
    assert 0.0 < scores[1][1] < 1.0


def test_by_words_alone_scores_are_fused_a_sole_match_1_the_weakest_of_several_0_001(tmp_path: Path) -> None:
    """Without the model (MEMORY_EMBEDDER=none, mode lexical) the BM25 list is min-max normalised as OpenSearch's
    normalization-processor does: the best 1.0, the weakest of several 0.001."""
    services = build_services(Settings(data_dir=tmp_path, embedder="none"))
    try:
        profile = services.profiles.create("alpha")
        services.facts.write(profile, title=VIOLIN[0], text=VIOLIN[1], kind=VIOLIN[2], tags=[])
        assert _scores(services, "violin orchestra") == [("Violin", 1.0, ("words",))]
        for title, text, kind in (CACHE, CACHE_AGAIN):
            services.facts.write(profile, title=title, text=text, kind=kind, tags=[])
        scores = _scores(services, "qzx81vk")
        assert [s[2] for s in scores] == [("words",), ("words",)]
        assert [s[1] for s in scores] == [1.0, pytest.approx(0.001)]
    finally:
        services.close()
