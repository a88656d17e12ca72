"""The fitted weights of the second ranking stage (weights.json beside this module, written by
`python bench/fit_ranking.py`; docs/benchmarks.md says how they were fitted and what they give).

Each stage is a linear model over standardised features: score = sum(w_i * (x_i - mean_i) / scale_i) + bias.
The file names its features; they must be the ones features.py computes, or the service refuses to start
(a file from another version of the code would weigh the wrong numbers).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from service.domain.ranking import features
from service.errors import StartupFailed

WEIGHTS_FILE = Path(__file__).with_name("weights.json")
FORMAT = 1


class WeightsInvalid(StartupFailed):
    """weights.json does not fit this code (refit: `python bench/fit_ranking.py --locomo ... --write`)."""


@dataclass(frozen=True)
class Linear:
    features: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float

    def score(self, rows: np.ndarray) -> np.ndarray:
        """The model's score of each row (rows in `features` order)."""
        return ((rows - self.mean) / self.scale) @ self.weights + self.bias

    def to_dict(self) -> dict[str, Any]:
        return {"features": list(self.features), "mean": _floats(self.mean), "scale": _floats(self.scale),
                "weights": _floats(self.weights), "bias": round(float(self.bias), 6)}

    @classmethod
    def of(cls, raw: dict[str, Any], expected: tuple[str, ...], where: str) -> Linear:
        names = tuple(raw.get("features", ()))
        if names != expected:
            raise WeightsInvalid(f"{where}: features {list(names)} are not the code's {list(expected)}")
        arrays = [np.asarray(raw.get(key, ()), dtype=np.float64) for key in ("mean", "scale", "weights")]
        if any(a.shape != (len(names),) for a in arrays) or not all(np.isfinite(a).all() for a in arrays) \
                or (arrays[1] <= 0).any():
            raise WeightsInvalid(f"{where}: mean, scale and weights must be {len(names)} finite numbers each "
                                 "(scales positive)")
        return cls(names, arrays[0], arrays[1], arrays[2], float(raw.get("bias", 0.0)))


def _floats(values: np.ndarray) -> list[float]:
    return [round(float(v), 6) for v in values]


@dataclass(frozen=True)
class Weights:
    """One ranker and one gate for pools with token vectors (`late`), one of each without (`plain`)."""

    ranker_late: Linear
    ranker_plain: Linear
    gate_late: Linear
    gate_plain: Linear
    fitted: dict[str, Any]  # how and on what (for docs and the fit script's report)

    def ranker(self, late: bool) -> Linear:
        return self.ranker_late if late else self.ranker_plain

    def gate(self, late: bool) -> Linear:
        return self.gate_late if late else self.gate_plain

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "fitted": self.fitted,
                "ranker": {"late": self.ranker_late.to_dict(), "plain": self.ranker_plain.to_dict()},
                "gate": {"late": self.gate_late.to_dict(), "plain": self.gate_plain.to_dict()}}


def expected_features(stage: str, late: bool) -> tuple[str, ...]:
    if stage == "ranker":
        return features.CANDIDATE if late else tuple(n for n in features.CANDIDATE if n not in features.LATE)
    return features.QUERY  # the gate's numbers need no token vectors: the same with late interaction and without


def parse(raw: Any) -> Weights:
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise WeightsInvalid(f"not a weights file of format {FORMAT}")
    try:
        parts = {(stage, kind): Linear.of(raw[stage][kind], expected_features(stage, kind == "late"),
                                          f"{stage}.{kind}")
                 for stage in ("ranker", "gate") for kind in ("late", "plain")}
    except (KeyError, TypeError) as exc:
        raise WeightsInvalid(f"missing part: {exc}") from exc
    return Weights(parts["ranker", "late"], parts["ranker", "plain"], parts["gate", "late"], parts["gate", "plain"],
                   dict(raw.get("fitted") or {}))


@lru_cache(maxsize=1)
def shipped() -> Weights:
    """The weights that ship with the service (read once)."""
    try:
        return parse(json.loads(WEIGHTS_FILE.read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:
        raise WeightsInvalid(f"the ranking weights {WEIGHTS_FILE} cannot be used ({exc}): reinstall the service, or "
                             "refit them with bench/fit_ranking.py --write") from exc


def neutral() -> Weights:
    """Weights that order by cosine and never veto: what bench/fit_ranking.py collects its pools with (the shipped
    file may not fit the features being fitted yet)."""
    def linear(stage: str, late: bool) -> Linear:
        names = expected_features(stage, late)
        weights = np.array([1.0 if name == "cosine" else 0.0 for name in names])
        return Linear(names, np.zeros(len(names)), np.ones(len(names)), weights, 1.0 if stage == "gate" else 0.0)
    return Weights(linear("ranker", True), linear("ranker", False), linear("gate", True), linear("gate", False),
                   {"by": "weights.neutral"})
