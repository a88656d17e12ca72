"""The second ranking stage applied to a pool: does memory know, and in which order are the matched facts.

The gate weighs the query's numbers (features.QUERY): a score below 0 means memory does not know -- nothing
matched, whatever a stray word or a distant neighbour said (matched_count 0) -- unless a matched candidate holds
every informative term of the query (an identifier, a name, all the words asked about): that is never vetoed.
Before it, one rule: facts that only ask (a chat turn "Where is that?") hold no knowledge, so when nothing matched
by words and every match by meaning is a question, memory does not know either. Otherwise the matched candidates
(by words or by meaning; the others only lent their numbers) are ordered by the ranker's score; each fact's
`score` is exp(its score - the best's): 1.0 for the first, relative to this list only. Equal scores keep the
pool's order (fact id, older first), as fusion does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from service.domain.models import Fact
from service.domain.ports import Pool
from service.domain.ranking import features
from service.domain.ranking.features import QueryView
from service.domain.ranking.weights import Weights


@dataclass(frozen=True)
class Ranked:
    knows: bool
    order: list[tuple[int, float]]  # (candidate's index in the pool, score in (0, 1]), best first
    lexical: list[float] = field(default_factory=list)  # each candidate's BM25 (features.bm25_of), pool order


def uses_late(query: QueryView, pool: Pool) -> bool:
    """Late interaction takes token vectors of the query and of every candidate."""
    return query.tokens is not None and all(c.tokens is not None for c in pool.candidates)


def holds_every_term(query: QueryView, numbers: features.Rows, matched: Sequence[int] | np.ndarray) -> bool:
    """A matched candidate holds every informative term of the query (there is at least one)."""
    coverage = numbers.candidates[np.asarray(matched, dtype=np.int64), numbers.names.index("coverage")]
    return bool(query.terms) and bool((coverage >= 1.0).any())


def only_questions(pool: Pool, numbers: features.Rows) -> bool:
    """Nothing matched by words, and every candidate that matched by meaning only asks something."""
    asks = numbers.candidates[:, numbers.names.index("asks")]
    by_meaning = [i for i, c in enumerate(pool.candidates) if c.by_meaning]
    return not any(c.by_words for c in pool.candidates) and bool(by_meaning) and bool((asks[by_meaning] > 0).all())


def rank(weights: Weights, query: QueryView, pool: Pool, facts: Sequence[Fact]) -> Ranked:
    if not pool.candidates:
        return Ranked(knows=False, order=[])
    matched = np.array([i for i, c in enumerate(pool.candidates) if c.by_words or c.by_meaning], dtype=np.int64)
    if matched.size == 0:  # before the numbers: nothing to weigh
        return Ranked(knows=False, order=[])
    late = uses_late(query, pool)
    numbers = features.rows(query, pool, facts, late=late)
    if only_questions(pool, numbers):
        return Ranked(knows=False, order=[])
    gate = weights.gate(late)
    if not holds_every_term(query, numbers, matched) and \
            float(gate.score(np.array([numbers.query[name] for name in gate.features]))) < 0.0:
        return Ranked(knows=False, order=[])
    scores = weights.ranker(late).score(numbers.candidates)
    best_first = matched[np.argsort(-scores[matched], kind="stable")]
    top = float(scores[best_first[0]])
    return Ranked(knows=True, order=[(int(i), float(np.exp(scores[i] - top))) for i in best_first],
                  lexical=[float(b) for b in numbers.bm25])
