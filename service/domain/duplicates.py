"""Which active facts say nearly the same thing: the grouping rule of GET /api/{profile}/duplicates and
`memory duplicates` (issue 39). Pure: vectors in, groups out.

Two facts are near-duplicates when the cosine of their vectors (their dot product: stored vectors are unit
length, and the write path's `similar` compares them the same way) is at least the threshold, the setting
MEMORY_SIMILAR_THRESHOLD that memory_write's `similar` uses. A group is a connected set of such pairs (A~B and
B~C put A, B and C together even when A and C are further apart), so every pair memory_write called `similar`
that is still active falls in one group, and a fact with no near-duplicate is in none.

Exact: every pair is compared, in blocks of rows (the upper triangle only), so the time grows with the square
of the facts compared (bench/curation.py prints it) and the memory with block x facts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

BLOCK_CELLS = 1 << 24  # similarities held at once (64 MB of float32), whatever the profile's size
# The write path compares on the search backend (numpy here, the k-NN plugin on OpenSearch): a pair it called
# similar must not fall out of a group by a rounding difference at the threshold.
TOLERANCE = 1e-5


@dataclass(frozen=True)
class Group:
    uids: tuple[str, ...]  # in the order given (oldest first)
    similarity: float  # of the closest pair in the group
    closest: tuple[str, str]


def group(uids: Sequence[str], vectors: np.ndarray, threshold: float) -> list[Group]:
    """The groups of near-duplicates among `uids` (one row of `vectors` each), closest pair first."""
    n = len(uids)
    if n < 2:
        return []
    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    best: dict[int, tuple[float, int, int]] = {}  # root -> (similarity, i, j) of its closest pair
    matrix = np.ascontiguousarray(vectors, dtype=np.float32)
    rows = max(1, BLOCK_CELLS // n)
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        sims = matrix[start:stop] @ matrix[start:].T  # block rows against themselves and every later row
        sims[np.tril_indices(stop - start, 0, sims.shape[1])] = -np.inf  # each pair once, no fact with itself
        for a, b in zip(*np.nonzero(sims >= threshold - TOLERANCE)):
            pair = (float(sims[a, b]), start + int(a), start + int(b))
            ri, rj = root(pair[1]), root(pair[2])
            if ri != rj:
                parent[rj] = ri
                merged = max(best.pop(rj, pair), best.get(ri, pair))
            else:
                merged = best.get(ri, pair)
            best[ri] = max(merged, pair)
    members: dict[int, list[int]] = {}
    for i in range(n):
        r = root(i)
        if r in best:
            members.setdefault(r, []).append(i)
    groups = [Group(tuple(uids[i] for i in members[r]), min(1.0, best[r][0]), (uids[best[r][1]], uids[best[r][2]]))
              for r in members]
    return sorted(groups, key=lambda g: (-g.similarity, g.uids[0]))
