"""Score fusion exactly as OpenSearch's normalization-processor does it (min_max + arithmetic_mean).

One pure function, used by the embedded backend and by the OpenSearch backend's fallback, so that both
rank alike (see docs/reviewers.md "Hybrid ranking"):
- each sub-query's scores are min-max normalised over that sub-query's own result list;
  the minimum maps to 0.001 (not 0) and a list whose scores are all equal maps them to 1.0;
- a document missing from a sub-query scores 0 there, and that sub-query's weight still counts;
- the combined score is the weighted arithmetic mean: sum(w_i * s_i) / sum(w_i).
Equal scores are ordered by fact id, older fact first (`fuse`'s `tie`, `in_rank_order`): the same order on every
backend and cluster version (OpenSearch orders them by Lucene document, which differs between 2.19 and 3.x).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

K = TypeVar("K", bound=Hashable)


class Ranked(Protocol):
    @property
    def score(self) -> float: ...
    @property
    def fact_id(self) -> int: ...


R = TypeVar("R", bound=Ranked)

MIN_SCORE = 0.001  # MinMaxScoreNormalizationTechnique.MIN_SCORE
SINGLE_RESULT_SCORE = 1.0  # MinMaxScoreNormalizationTechnique.SINGLE_RESULT_SCORE


def depth(configured: int, limit: int) -> int:
    """How many results of each sub-query take part in the fusion: MEMORY_FUSION_DEPTH, and never fewer than
    the search's limit (a list cut shorter than the limit would cut the answer short too)."""
    return max(configured, limit)


def min_max(scores: Mapping[K, float]) -> dict[K, float]:
    """Normalise one sub-query's raw scores to (0, 1]."""
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    out: dict[K, float] = {}
    for key, score in scores.items():
        if high == low:
            out[key] = SINGLE_RESULT_SCORE
            continue
        normalised = (score - low) / (high - low)
        out[key] = MIN_SCORE if normalised == 0.0 else normalised
    return out


def fuse(sub_queries: Sequence[Mapping[K, float]], weights: Sequence[float], *,
         tie: Callable[[K], Any] | None = None) -> list[tuple[K, float]]:
    """Combine raw sub-query scores into one ranking, best first; equal scores by `tie(key)` (the key's fact id:
    the module's rule), or by the key itself when no `tie` is given."""
    if len(sub_queries) != len(weights):
        raise ValueError(f"number of weights [{len(weights)}] must match number of sub-queries [{len(sub_queries)}]")
    if any(w < 0 for w in weights) or sum(weights) <= 0:
        raise ValueError("weights must be non-negative and not all zero")
    normalised = [min_max(scores) for scores in sub_queries]
    keys: dict[K, None] = {}
    for scores in normalised:
        keys.update(dict.fromkeys(scores))
    total_weight = float(sum(weights))
    combined = {
        key: sum(w * scores.get(key, 0.0) for w, scores in zip(weights, normalised)) / total_weight for key in keys
    }
    order = tie if tie is not None else (lambda key: key)
    return sorted(combined.items(), key=lambda item: (-item[1], order(item[0])))


def in_rank_order(hits: Sequence[R]) -> list[R]:
    """Hits ranked elsewhere (OpenSearch's hybrid query) in the module's order: best first, equal scores by fact
    id."""
    return sorted(hits, key=lambda hit: (-hit.score, hit.fact_id))
