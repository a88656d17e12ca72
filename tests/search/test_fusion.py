"""The shared fusion function against hand-computed examples (OpenSearch normalization-processor rules)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from service.search.fusion import MIN_SCORE, fuse, in_rank_order, min_max


def test_min_max_maps_minimum_to_0001_and_maximum_to_1() -> None:
    assert min_max({"a": 10.0, "b": 6.0, "c": 2.0}) == {"a": 1.0, "b": 0.5, "c": MIN_SCORE}


def test_single_result_and_equal_scores_map_to_one() -> None:
    assert min_max({"a": 3.7}) == {"a": 1.0}
    assert min_max({"a": 2.0, "b": 2.0}) == {"a": 1.0, "b": 1.0}
    assert min_max({}) == {}


def test_weighted_mean_with_a_document_missing_from_one_list() -> None:
    lexical = {"a": 10.0, "b": 6.0, "c": 2.0}  # -> a 1.0, b 0.5, c 0.001
    vector = {"b": 0.9, "d": 0.5, "a": 0.7}  # -> b 1.0, d 0.001, a 0.5
    ranked = dict(fuse([lexical, vector], [0.3, 0.7]))
    assert ranked["a"] == pytest.approx(0.3 * 1.0 + 0.7 * 0.5)
    assert ranked["b"] == pytest.approx(0.3 * 0.5 + 0.7 * 1.0)
    assert ranked["c"] == pytest.approx(0.3 * MIN_SCORE)  # missing from vectors: 0 there, weight still counts
    assert ranked["d"] == pytest.approx(0.7 * MIN_SCORE)
    assert [k for k, _ in fuse([lexical, vector], [0.3, 0.7])] == ["b", "a", "d", "c"]


def test_weights_are_normalised_by_their_sum() -> None:
    assert fuse([{"a": 1.0}, {"a": 5.0}], [1.0, 3.0]) == [("a", 1.0)]


def test_ties_are_broken_by_key() -> None:
    assert [k for k, _ in fuse([{"b": 1.0, "a": 1.0}], [1.0])] == ["a", "b"]


def test_ties_are_broken_by_fact_id_when_given() -> None:
    """Rows (or uids) are keys; the order of equal scores is the facts' (older first), on every backend."""
    fact_id = {"row-2": 7, "row-10": 3, "row-1": 12}
    ranked = fuse([{"row-2": 1.0, "row-10": 1.0, "row-1": 1.0}], [1.0], tie=fact_id.__getitem__)
    assert [k for k, _ in ranked] == ["row-10", "row-2", "row-1"]


def test_hits_ranked_elsewhere_take_the_same_order() -> None:
    """OpenSearch hands equal scores back in Lucene document order (2.19 and 3.x differ): put in the rule's order."""
    @dataclass
    class Hit:
        fact_id: int
        score: float

    hits = [Hit(9, 0.5), Hit(4, 0.5), Hit(2, 0.25), Hit(5, 0.75)]
    assert [h.fact_id for h in in_rank_order(hits)] == [5, 4, 9, 2]


def test_bad_weights_are_refused() -> None:
    with pytest.raises(ValueError, match="number of weights"):
        fuse([{"a": 1.0}], [0.5, 0.5])
    with pytest.raises(ValueError):
        fuse([{"a": 1.0}], [0.0])
