"""The second ranking stage (service.domain.ranking) on pools built by hand: its numbers, its weights file, the
gate and its two rules, and the order and scores it hands back."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import numpy as np
import pytest

from service.domain.late import TokenVectors
from service.domain.models import Fact
from service.domain.ports import Candidate, Pool
from service.domain.ranking import features, stage
from service.domain.ranking import weights as w

NOW = datetime(2026, 12, 1, tzinfo=timezone.utc)


def fact(uid: str, text: str, tags: tuple[str, ...] = ()) -> Fact:
    return Fact(uid=uid, title=text[:80], text=text, kind="user", tags=list(tags), status="active", created_at=NOW,
                updated_at=NOW, retired_at=None, retire_reason=None, supersedes=None, superseded_by=None)


def pool_of(rows: list[tuple[str, float, bool, bool]], *, scope: int = 50, df: tuple[int, ...] = (),
            by_words: int = 0, tokens: bool = False) -> tuple[Pool, list[Fact]]:
    """rows: (text, cosine, by_words, by_meaning), fact ids 1, 2, ... in order."""
    rng = np.random.default_rng(0)
    candidates = [Candidate(f"f{i}", i + 1, cos, words, meaning,
                            tokens=TokenVectors.of(rng.normal(size=(3, 8))) if tokens else None)
                  for i, (_, cos, words, meaning) in enumerate(rows)]
    return Pool(candidates, scope=scope, term_df=df, by_words=by_words), [fact(f"f{i}", r[0]) for i, r in
                                                                          enumerate(rows)]


def linear(stage_name: str, late: bool, weights: dict[str, float], bias: float = 0.0) -> w.Linear:
    names = w.expected_features(stage_name, late)
    return w.Linear(names, np.zeros(len(names)), np.ones(len(names)),
                    np.array([weights.get(n, 0.0) for n in names]), bias)


def model(ranker: dict[str, float], gate: dict[str, float], gate_bias: float) -> w.Weights:
    return w.Weights(linear("ranker", True, ranker), linear("ranker", False, ranker), linear("gate", True, gate,
                     gate_bias), linear("gate", False, gate, gate_bias), {})


# --- the shipped weights ------------------------------------------------------------------------------------


def test_the_shipped_weights_fit_the_code_and_say_how_they_were_fitted() -> None:
    shipped = w.shipped()
    assert shipped.ranker(True).features == features.CANDIDATE
    assert shipped.gate(False).features == shipped.gate(True).features == features.QUERY
    assert shipped.fitted["by"] == "bench/fit_ranking.py" and "sha256" in shipped.fitted["data"]
    assert w.parse(json.loads(json.dumps(shipped.to_dict()))).to_dict() == shipped.to_dict()


@pytest.mark.parametrize("broken", [
    {"format": 2},
    {"format": 1, "ranker": {}},
    {"format": 1, "ranker": {"late": {"features": ["cosine"]}}},
])
def test_a_weights_file_that_does_not_fit_is_refused_naming_what(broken: dict) -> None:
    with pytest.raises(w.WeightsInvalid):
        w.parse(broken)


def test_weights_that_are_not_finite_are_refused() -> None:
    raw = w.shipped().to_dict()
    raw["gate"]["plain"]["weights"][0] = float("nan")
    with pytest.raises(w.WeightsInvalid, match="finite"):
        w.parse(raw)


# --- the numbers --------------------------------------------------------------------------------------------


def test_the_query_view_reads_terms_names_numbers_and_whether_it_asks_when() -> None:
    view = features.query_view("When did Caroline's team ship release 42 with Melanie?", None)
    assert view.names == {"caroline", "melanie"}  # "When" is a stop word; "Caroline's" is Caroline
    assert view.numbers == {"42"} and view.asks_when and view.tokens is None
    assert features.query_view("what did they ship", None).asks_when is False


def test_equal_numbers_share_a_rank() -> None:
    assert np.expm1(features._rank(np.array([0.5, 0.9, 0.5, 0.1]))).tolist() == [1.0, 0.0, 1.0, 3.0]


def test_bm25_here_counts_the_query_terms_the_facts_hold_rarer_ones_more() -> None:
    pool, facts = pool_of([("Caroline painted a sunrise over the lake", 0.5, True, True),
                           ("Caroline went to the lake", 0.5, True, True),
                           ("Melanie likes jazz", 0.2, False, False)], df=(40, 2), by_words=2)
    rows = features.rows(features.query_view("caroline sunrise", None), pool, facts, late=False)
    bm25, coverage = rows.bm25, rows.candidates[:, rows.names.index("coverage")]
    assert bm25[0] > bm25[1] > bm25[2] == 0.0
    assert coverage.tolist() == [1.0, 0.5, 0.0]


def test_without_token_vectors_the_plain_numbers_leave_late_interaction_out() -> None:
    pool, facts = pool_of([("a fact", 0.4, False, True)], df=(1,))
    view = features.query_view("a question", TokenVectors.of(np.ones((2, 8))))
    assert not stage.uses_late(view, pool)
    rows = features.rows(view, pool, facts, late=False)
    assert not set(features.LATE) & set(rows.names) and set(rows.query) == set(w.expected_features("gate", False))


def test_facts_written_next_to_the_closest_ones_are_placed_near_them() -> None:
    ids = np.array([1, 2, 9, 30])
    placed = features._placement(ids, np.array([0.9, 0.3, 0.2, 0.8]), np.array([0.9, 0.3, 0.2, 0.8]))
    assert placed["neighbour"].tolist() == [0.3, 0.9, -1.0, -1.0]  # ids 1 and 2 are each other's neighbour
    assert placed["locality"][1] > placed["locality"][2] > 0.0  # next to the best beats seven ids away


# --- the stage ----------------------------------------------------------------------------------------------


def test_matched_candidates_come_back_best_first_the_first_scoring_1() -> None:
    pool, facts = pool_of([("one", 0.35, False, True), ("two", 0.8, False, True), ("three", 0.9, False, False),
                           ("four", 0.5, False, True)], df=(1,))
    ranked = stage.rank(model({"cosine": 10.0}, {}, 1.0), features.query_view("q", None), pool, facts)
    assert ranked.knows and [i for i, _ in ranked.order] == [1, 3, 0]  # "three" matched nothing: context only
    scores = [score for _, score in ranked.order]
    assert scores[0] == 1.0 and 1.0 > scores[1] > scores[2] > 0.0


def test_the_gate_says_memory_does_not_know() -> None:
    pool, facts = pool_of([("Thanks, that was fun", 0.33, False, True)], df=(0, 0))
    ranked = stage.rank(model({"cosine": 1.0}, {"above_level": 10.0}, -5.0), features.query_view(
        "what port does the gateway use", None), pool, facts)
    assert (ranked.knows, ranked.order) == (False, [])


def test_the_gate_reads_the_closest_cosine_above_the_stores_level() -> None:
    """The same turn at cosine 0.45: above a curated store's level (0.15) memory knows; in a store of small talk
    whose level is 0.42, where unrelated questions come that close too, it does not."""
    pool, facts = pool_of([("Usually salt and red pepper", 0.45, False, True)], df=(0, 0, 1))
    gate = model({"cosine": 1.0}, {"above_level": 10.0}, -1.5)
    curated = features.query_view("what is the formula of table salt", None, level=0.15)
    chatty = features.query_view("what is the formula of table salt", None, level=0.42)
    assert features.rows(chatty, pool, facts, late=False).query["above_level"] == pytest.approx(0.03)
    assert stage.rank(gate, curated, pool, facts).knows
    assert not stage.rank(gate, chatty, pool, facts).knows
    shipped = w.shipped().gate(True)
    assert shipped.weights[shipped.features.index("above_level")] > 0


def test_the_gate_weighs_how_much_of_the_store_lies_near_the_query() -> None:
    """meaning_share: the candidates matched by meaning against the facts in scope. One turn of a chat store of
    1,000 at the similarity floor is an off-topic question's footprint; the same turn among 30 of 60 is not."""
    view = features.query_view("what is the speed of sound in air", None)
    lone, facts = pool_of([("Theyre fast and evasive", 0.36, False, True)], scope=1_000, df=(0, 0, 0))
    many_rows = [(f"turn {i}", 0.36 - i / 1_000, False, True) for i in range(30)]
    many, many_facts = pool_of(many_rows, scope=60, df=(0, 0, 0))
    share_lone = features.rows(view, lone, facts, late=False).query["meaning_share"]
    share_many = features.rows(view, many, many_facts, late=False).query["meaning_share"]
    assert share_lone == pytest.approx(np.log(2) - np.log(1_001)) and share_many == pytest.approx(np.log(31 / 61))
    gate = model({"cosine": 1.0}, {"meaning_share": 1.0}, 3.0)
    assert not stage.rank(gate, view, lone, facts).knows
    assert stage.rank(gate, view, many, many_facts).knows
    shipped = w.shipped().gate(True)
    assert shipped.weights[shipped.features.index("meaning_share")] > 0


def test_a_fact_holding_every_term_of_the_query_is_never_vetoed() -> None:
    pool, facts = pool_of([("JIRA-4412 tracks the migration", 0.05, True, False)], df=(1, 1), by_words=1)
    ranked = stage.rank(model({"cosine": 1.0}, {}, -100.0), features.query_view("JIRA-4412", None), pool, facts)
    assert ranked.knows and [i for i, _ in ranked.order] == [0]


def test_matches_by_meaning_that_only_ask_are_no_knowledge() -> None:
    asking, facts = pool_of([("Where is that? It looks gorgeous!", 0.4, False, True),
                             ("How far did you two hike?", 0.35, False, True)], df=(0, 0, 0))
    view = features.query_view("which region hosts the cluster", None)
    assert not stage.rank(model({"cosine": 1.0}, {}, 100.0), view, asking, facts).knows
    stating, facts = pool_of([("Where is that? It looks gorgeous!", 0.4, False, True),
                              ("The cluster runs in eu-west-1.", 0.35, False, True)], df=(0, 0, 1))
    assert stage.rank(model({"cosine": 1.0}, {}, 100.0), view, stating, facts).knows
