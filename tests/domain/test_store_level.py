"""A store's off-topic level (service.domain.ranking.level): the probe questions, the median of their closest
cosines, and when a profile's level is measured again. The backends' SearchBackend.closest is checked against
each other on a real cluster (tests/opensearch/test_real_cluster.py) and against the facts' stored vectors
through memory_search (tests/search/test_second_stage.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from service.domain.ranking import level

OFFTOPIC = Path(__file__).resolve().parents[2] / "bench" / "data" / "conversational" / "offtopic.jsonl"


class Measured:
    """SearchBackend.closest's shape: answers `closest` and counts how often it was asked."""

    def __init__(self, closest: list[float]) -> None:
        self.closest, self.calls = np.array(closest, dtype=np.float32), 0

    def __call__(self, profile_id: int, profile: str, vectors: np.ndarray) -> np.ndarray:
        self.calls += 1
        assert vectors.shape == (len(level.probes()), 3)
        return self.closest


def levels(measured: Measured) -> level.StoreLevels:
    return level.StoreLevels(lambda texts: np.ones((len(texts), 3), dtype=np.float32), measured)


def test_the_probes_are_distinct_questions_the_benchmarks_never_ask() -> None:
    probes = level.probes()
    asked = {json.loads(line)["query"].lower() for line in OFFTOPIC.read_text(encoding="utf-8").splitlines()}
    assert len(probes) == len(set(probes)) == 40 and all(p.endswith("?") for p in probes)
    assert not {p.lower() for p in probes} & asked


def test_the_level_is_the_median_closest_cosine_with_nothing_below_0() -> None:
    assert level.level_of(np.array([0.1, 0.5, 0.3])) == pytest.approx(0.3)
    assert level.level_of(np.array([-0.4, -0.2, 0.2, 0.4])) == pytest.approx(0.1)  # -0.4, -0.2 count as 0
    assert level.level_of(np.zeros(0)) == 0.0


def test_a_profile_is_measured_once_then_again_when_its_facts_change_by_more_than_a_share() -> None:
    measured = Measured([0.2, 0.4, 0.3])
    store = levels(measured)
    assert store.level(1, "p", 100) == pytest.approx(0.3) and measured.calls == 1
    assert store.level(1, "p", 110) == pytest.approx(0.3) and measured.calls == 1  # 10 %: not yet
    assert store.level(1, "p", 90) == pytest.approx(0.3) and measured.calls == 1
    measured.closest = np.array([0.5, 0.5, 0.6], dtype=np.float32)
    assert store.level(1, "p", 111) == pytest.approx(0.5) and measured.calls == 2  # grown by more than 10 %
    assert store.level(1, "p", 99) == pytest.approx(0.5) and measured.calls == 3  # shrunk by more than 10 %
    assert store.level(2, "q", 99) == pytest.approx(0.5) and measured.calls == 4  # each profile its own


def test_a_small_store_is_measured_again_at_every_change() -> None:
    measured = Measured([0.1, 0.1, 0.1])
    store = levels(measured)
    for facts in (1, 2, 3, 2, 9, 10):
        store.level(1, "p", facts)
    assert measured.calls == 6
    store.level(1, "p", 11)  # 10 -> 11 is 10 %
    assert measured.calls == 6


def test_a_filtered_search_reads_the_last_level_and_measures_only_when_there_is_none() -> None:
    measured = Measured([0.2, 0.2, 0.2])
    store = levels(measured)
    assert store.level(1, "p", None) == pytest.approx(0.2) and measured.calls == 1
    assert store.level(1, "p", None) == pytest.approx(0.2) and measured.calls == 1
    store.level(1, "p", 50)  # the count it was measured at was unknown: measured again, now at 50
    assert measured.calls == 2
    store.level(1, "p", 52)
    assert measured.calls == 2


def test_the_last_level_stands_in_when_the_backend_cannot_measure() -> None:
    measured = Measured([0.35, 0.35, 0.35])
    store = levels(measured)
    assert store.last(1) == level.FALLBACK
    store.level(1, "p", 10)
    assert store.last(1) == pytest.approx(0.35)


def test_the_probes_are_embedded_once_and_warming_does_it_before_any_search() -> None:
    embedded: list[int] = []

    def probe_vectors(texts: list[str]) -> np.ndarray:
        embedded.append(len(texts))
        return np.ones((len(texts), 3), dtype=np.float32)

    store = level.StoreLevels(probe_vectors, Measured([0.1, 0.2, 0.3]))
    store.warm()
    assert embedded == [40]
    store.level(1, "p", 5)
    store.level(2, "q", 5)
    assert embedded == [40]
