"""bench/fit_ranking.py's chat-turn offset: the gate's weight for "the closest fact speaks in the first person",
set as low as the budget allows (each store loses at most LOSE of its answerable questions, the labelled set
none), never above 0."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from tests.bench.test_benchmarks_run import ROOT

sys.path.insert(0, str(ROOT))

from bench import fit_ranking  # noqa: E402
from service.domain.ranking.weights import Linear  # noqa: E402

GATE = Linear(("score", "best_speaks"), np.zeros(2), np.ones(2), np.array([1.0, 0.0]), 0.0)


def rows(scores: list[float], speaks: float) -> np.ndarray:
    return np.array([[s, speaks] for s in scores])


def offset(guarded: np.ndarray) -> float:
    chat = rows([float(s) for s in range(2, 102)], 1.0)  # 100 answerable chat questions scoring 2..101
    curated = rows([0.5] * 10, 0.0)
    off_topic = rows([1.0, 6.0], 1.0)
    x = np.vstack([chat, curated, off_topic])
    labels = np.array([1.0] * 110 + [0.0] * 2)
    stores = np.array(["chat"] * 100 + ["curated"] * 10 + ["chat"] * 2)
    return fit_ranking.chat_turn_offset(GATE, x, labels, stores, guarded, speaks=1)


def test_the_offset_goes_as_low_as_the_stores_budget_allows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fit_ranking, "LOSE", 0.01)  # of 100 chat questions, one may go: the second lowest (3) holds
    found = offset(np.zeros((0, 2)))
    assert -3.0 <= found <= -3.0 + 2 * fit_ranking.MARGIN
    monkeypatch.setattr(fit_ranking, "LOSE", 0.0)  # none may go: the lowest (2) holds
    assert -2.0 <= offset(np.zeros((0, 2))) <= -2.0 + 2 * fit_ranking.MARGIN


def test_the_labelled_set_loses_nothing_to_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fit_ranking, "LOSE", 0.01)
    assert -2.5 <= offset(rows([2.5], 1.0)) <= -2.5 + 2 * fit_ranking.MARGIN  # a guarded chat-like question at 2.5
    assert offset(rows([-1.0], 1.0)) == 0.0  # already below: the offset cannot help it, and never rises above 0
