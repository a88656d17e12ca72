"""The two fits of the second ranking stage (bench/fit_ranking.py), in numpy: small and inspectable.

- listwise: a linear score per candidate, fitted so that each query's softmax over its matched candidates puts
  its mass on the relevant ones (cross-entropy against the uniform distribution over them; ListNet);
- logistic: a linear "does memory know?" over the query's numbers, classes weighted equally.
Features are standardised (mean and scale kept with the weights), and both carry a little L2.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def standardise(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = rows.mean(axis=0)
    scale = rows.std(axis=0)
    return mean, np.where(scale > 1e-9, scale, 1.0)


def listwise(groups: Sequence[tuple[np.ndarray, np.ndarray]], stores: Sequence[str], *, balance: float = 1.0,
             l2: float = 1e-3, steps: int = 400, rate: float = 0.05) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """groups: (rows, relevant 0/1) per query, its matched candidates only. A store of n queries weighs n^(1 -
    balance) in total: with balance 1 every store the same, with 0 every query. Returns (mean, scale, weights)."""
    kept = [i for i, (x, y) in enumerate(groups) if y.sum() > 0 and len(y) > 1]
    used = [groups[i] for i in kept]
    names = [stores[i] for i in kept]
    per_store = {store: names.count(store) for store in set(names)}
    query_weight = np.array([per_store[store] ** -balance for store in names])
    query_weight *= len(used) / query_weight.sum()
    rows = np.vstack([x for x, _ in used])
    mean, scale = standardise(rows)
    z = (rows - mean) / scale
    relevant = np.concatenate([y for _, y in used])
    sizes = np.array([len(y) for _, y in used])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    group = np.repeat(np.arange(len(used)), sizes)
    target = relevant / np.add.reduceat(relevant, starts)[group]
    w, m1, m2 = np.zeros(z.shape[1]), np.zeros(z.shape[1]), np.zeros(z.shape[1])
    for t in range(1, steps + 1):  # Adam
        s = z @ w
        e = np.exp(s - np.maximum.reduceat(s, starts)[group])
        p = e / np.add.reduceat(e, starts)[group]
        g = z.T @ ((p - target) * query_weight[group]) / len(used) + l2 * w
        m1 = 0.9 * m1 + 0.1 * g
        m2 = 0.999 * m2 + 0.001 * g * g
        w -= rate * (m1 / (1 - 0.9 ** t)) / (np.sqrt(m2 / (1 - 0.999 ** t)) + 1e-8)
    return mean, scale, w


def logistic(rows: np.ndarray, labels: np.ndarray, groups: Sequence[str], *, l2: float = 1e-2, steps: int = 50
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Logistic regression (Newton's method), each (group, label) weighing the same in total: a store with few
    questions counts as much as one with many. Returns (mean, scale, weights, bias)."""
    mean, scale = standardise(rows)
    z = np.hstack([(rows - mean) / scale, np.ones((len(rows), 1))])
    keys = list(zip(groups, labels.tolist()))
    sizes = {key: keys.count(key) for key in set(keys)}
    weight = np.array([len(rows) / (len(sizes) * sizes[key]) for key in keys])
    w = np.zeros(z.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-z @ w))
        g = z.T @ (weight * (p - labels)) + l2 * w
        h = (z * (weight * p * (1 - p))[:, None]).T @ z + l2 * np.eye(len(w))
        w -= np.linalg.solve(h, g)
    return mean, scale, w[:-1], float(w[-1])
