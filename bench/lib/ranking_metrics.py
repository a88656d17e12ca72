"""Ranking metrics of one query's result list against its relevant facts, and tables of them by category."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence

import numpy as np

KEYS = ("R@1", "R@5", "R@10", "nDCG@10", "MRR@10")


def of(ranked: Sequence[str], relevant: set[str]) -> dict[str, float]:
    out = {f"R@{k}": len(set(ranked[:k]) & relevant) / len(relevant) for k in (1, 5, 10)}
    dcg = sum(1 / math.log2(i + 2) for i, uid in enumerate(ranked[:10]) if uid in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
    out["nDCG@10"] = dcg / ideal
    first = next((i for i, uid in enumerate(ranked[:10]) if uid in relevant), None)
    out["MRR@10"] = 0.0 if first is None else 1 / (first + 1)
    return out


def table(rows: Iterable[tuple[int, dict[str, float]]], names: dict[int, str]) -> list[str]:
    """Lines of a table: one per category (in `names` order) and the headline of all of them."""
    groups: dict[object, list[dict[str, float]]] = defaultdict(list)
    for category, metrics in rows:
        groups[category].append(metrics)
        groups["all"].append(metrics)
    lines = [f"  {'category':<16}{'n':>6}" + "".join(f"{k:>9}" for k in KEYS)]
    labels = [(c, f"{c} {n}") for c, n in names.items()] + [("all", "1-4 (headline)")]
    for key, label in labels:
        if groups.get(key):
            lines.append(f"  {label:<16}{len(groups[key]):>6}"
                         + "".join(f"{np.mean([m[k] for m in groups[key]]):>9.3f}" for k in KEYS))
    return lines


def mean(rows: Iterable[tuple[int, dict[str, float]]], key: str = "R@5") -> float:
    values = [m[key] for _, m in rows]
    return float(np.mean(values)) if values else float("nan")
