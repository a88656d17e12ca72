"""The numbers the second ranking stage weighs: one row per candidate, and a few of the query as a whole.

Everything here is computed from what either backend hands over -- the pool's candidates (cosine, matched by
words or by meaning, fact id, token vectors) and counts (facts in scope, facts holding each query term), the
facts' own words, and the query -- so the same pool gives the same numbers on every backend. Nothing is tied to
one benchmark: names are the query's capitalised words, times are English time words, places in the store are
fact ids (facts written one after the other sit next to each other).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from service.domain import lexical
from service.domain import names as query_names
from service.domain.late import TokenVectors, maxsim
from service.domain.wording import fact_words, stem
from service.domain.models import Fact
from service.domain.ports import Pool

# Per candidate. LATE_* need token vectors (query and every candidate); without them the "plain" weights apply,
# which leave them out and place facts by cosine instead.
LATE = ("late", "late_gap", "late_rank", "late_z")
CANDIDATE = ("cosine", "cosine_gap", "cosine_rank", "cosine_z", "bm25", "bm25_rank", "coverage", "idf_coverage", "name_is_tag",
             "name_in_text", "number_shared", "length", "asks", "by_words", "by_meaning", "any_term", *LATE, "neighbour",
             "neighbour_gap", "when_time", "time_words", "near_best", "locality")
# Per query: what the gate ("does memory know?") weighs -- a few numbers, so that a gate fitted on some stores
# holds on others (a larger one, 15 numbers, did not carry over to chats it was not fitted on: docs/benchmarks.md).
QUERY = ("above_level", "meaning_share", "by_words", "known", "best_idf_coverage")
_PLAIN = tuple(name for name in CANDIDATE if name not in LATE)

_BM25_K1, _BM25_B = 1.2, 0.75
_NEAR = 2  # facts written at most this many ids apart count as written together
_LOCALITY_SPAN = 3.0  # ids: how fast a neighbour's weight falls off
_TOP = 3  # the best candidates the others are placed against
_NUMBER = re.compile(r"\d+")
_WHEN = re.compile(r"^\s*when\b|\bwhat (year|month|day|date|time)\b|\bhow long ago\b", re.IGNORECASE)
@dataclass(frozen=True)
class QueryView:
    """What the stage reads of a query."""

    terms: tuple[str, ...]  # informative terms (service.domain.lexical), in order
    stems: tuple[str, ...]
    names: frozenset[str]  # capitalised words, lower-cased, possessive 's dropped, stop words left out
    numbers: frozenset[str]
    asks_when: bool
    tokens: np.ndarray | None  # content token vectors, float32 unit rows (service.domain.late)
    level: float = 0.0  # the store's off-topic level (service.domain.ranking.level)


def query_view(text: str, tokens: TokenVectors | None, level: float = 0.0) -> QueryView:
    terms = tuple(lexical.informative_terms(text))
    return QueryView(terms=terms, stems=tuple(stem(t) for t in terms), names=frozenset(query_names.terms(text)),
                     numbers=frozenset(_NUMBER.findall(text)), asks_when=bool(_WHEN.search(text)),
                     tokens=tokens.matrix() if tokens is not None and len(tokens) else None, level=level)


def _rank(scores: np.ndarray) -> np.ndarray:
    """log(1 + rank) of each score within the pool: its rank is how many candidates score higher (0 for the best;
    equal scores share a rank, so candidates alike in everything else score alike)."""
    ordered = np.sort(-scores)
    return np.log1p(np.searchsorted(ordered, -scores, side="left").astype(float))


@dataclass(frozen=True)
class Rows:
    """The stage's numbers for one pool: `candidates` (len(pool) x len(names)) and `query` (len(QUERY))."""

    names: tuple[str, ...]
    candidates: np.ndarray
    query: dict[str, float]
    bm25: np.ndarray  # each candidate's raw BM25 (what a search reports as a fact's lexical score)


def rows(query: QueryView, pool: Pool, facts: Sequence[Fact], *, late: bool) -> Rows:
    """The numbers of every candidate (in the pool's order) and of the query. `late`: with late interaction
    (query and every candidate have token vectors); otherwise LATE_* are left out and facts are placed by
    cosine. Every search runs this over ~60 candidates: one pass in Python reads each candidate, the rest is
    whole-column arithmetic."""
    n, terms = len(pool.candidates), len(query.terms)
    assert len(pool.term_df) == terms, "the pool counts other terms than the query's"
    words = [c.words or fact_words(f.title, f.text, tuple(f.tags)) for c, f in zip(pool.candidates, facts)]
    # one pass over the candidates for everything read one by one: the columns of `each` as named below, then
    # the weighted count of each query stem (0 when the fact does not hold it)
    names_, numbers_, when, stems = query.names, query.numbers, query.asks_when, query.stems
    each = np.array([(c.cosine if c.cosine is not None else -1.0, c.fact_id,
                      bool(names_) and not names_.isdisjoint(f.tags), bool(names_) and not names_.isdisjoint(w.words),
                      bool(numbers_) and not numbers_.isdisjoint(w.numbers), w.length, w.asks, c.by_words,
                      c.by_meaning, when and w.time_words, w.time_words, *[w.stems.get(s, 0.0) for s in stems])
                     for c, f, w in zip(pool.candidates, facts, words)], dtype=np.float64).reshape(n, 11 + terms)
    cosine, ids, tf = each[:, 0], each[:, 1].astype(np.int64), each[:, 11:]
    present = tf > 0.0
    df = np.asarray(pool.term_df, dtype=np.float64)
    idf = np.log((pool.scope - df + 0.5) / (df + 0.5) + 1.0) if terms else np.zeros(0)
    bm25 = _bm25(tf, each[:, 5], idf)
    closeness = maxsim(query.tokens, [c.tokens for c in pool.candidates]) if late and query.tokens is not None \
        else cosine
    best_cosine, best_bm25 = float(cosine.max()), float(bm25.max())
    idf_sum = float(idf.sum())
    f: dict[str, np.ndarray] = {
        "cosine": cosine,
        "cosine_gap": cosine - best_cosine,
        "cosine_rank": _rank(cosine),
        "cosine_z": (cosine - cosine.mean()) / max(float(cosine.std()), 1e-6),
        "bm25": bm25 / best_bm25 if best_bm25 > 0 else bm25,
        "bm25_rank": np.where(bm25 > 0, _rank(bm25), math.log1p(n)),
        "coverage": present.sum(axis=1) / terms if terms else np.zeros(n),
        "idf_coverage": (present @ idf) / idf_sum if terms and idf_sum > 0 else np.zeros(n),
        "name_is_tag": each[:, 2],
        "name_in_text": each[:, 3],
        "number_shared": each[:, 4],
        "length": np.log1p(each[:, 5]),
        "asks": each[:, 6],
        "by_words": each[:, 7],
        "by_meaning": each[:, 8],
        "any_term": (bm25 > 0).astype(float),
        "when_time": each[:, 9],
        "time_words": each[:, 10],
    }
    if late:
        f.update(late=closeness, late_gap=closeness - closeness.max(), late_rank=_rank(closeness),
                 late_z=(closeness - closeness.mean()) / max(float(closeness.std()), 1e-6))
    f.update(_placement(ids, cosine, closeness))
    names = CANDIDATE if late else _PLAIN
    table = np.empty((n, len(names)), dtype=np.float64)
    for column, name in enumerate(names):
        table[:, column] = f[name]
    query_numbers = {
        # how far the closest fact stands above the store's off-topic level: in a store of small talk a turn
        # lies near anything, and a closest cosine that would say "known" in a curated store says nothing there
        "above_level": best_cosine - query.level,
        # how much of what is searched lies near the query: the candidates matched by meaning (at most the pool's
        # depth) against the facts in scope. An off-topic question finds a turn or two of a large chat store at
        # the similarity floor; a question the store answers finds many.
        "meaning_share": math.log1p(float(each[:, 8].sum())) - math.log1p(pool.scope),
        "by_words": math.log1p(pool.by_words),
        "known": float(idf[df > 0].sum() / idf_sum) if terms and idf_sum > 0 else 0.0,
        "best_idf_coverage": float(f["idf_coverage"].max()),
    }
    return Rows(names=names, candidates=table, query=query_numbers, bm25=bm25)


def _median(values: np.ndarray) -> float:
    """np.median's number (the middle value, or the mean of the two middle ones) without its generality: it
    costs more than the rest of a column's arithmetic on a pool this size."""
    ordered = np.sort(values)
    middle = ordered.size // 2
    return float(ordered[middle]) if ordered.size % 2 else float((ordered[middle - 1] + ordered[middle]) / 2.0)


def _bm25(tf: np.ndarray, length: np.ndarray, idf: np.ndarray) -> np.ndarray:
    """BM25 of the query's terms in each candidate, from the facts' own words (the same on every backend; the
    backends' BM25 differ: FTS5's and Lucene's): `tf` the weighted count of each query stem in each candidate,
    `length` each candidate's words, idf from the scope's counts, lengths against the pool's mean."""
    if tf.shape[1] == 0 or tf.shape[0] == 0:
        return np.zeros(tf.shape[0])
    norm = _BM25_K1 * (1 - _BM25_B + _BM25_B * length / max(float(length.mean()), 1e-9))
    return (tf * (_BM25_K1 + 1) / (tf + norm[:, None])) @ idf


def _placement(ids: np.ndarray, cosine: np.ndarray, closeness: np.ndarray) -> dict[str, np.ndarray]:
    """Where each candidate was written among the others: the cosine of the candidate written just before or
    after it (when in the pool), whether it was written next to (or is) one of the closest few, and how close the
    candidates written around it are (each one's closeness above the pool's median, weighted by distance)."""
    apart = np.abs(ids[:, None] - ids[None, :])
    np.fill_diagonal(apart, np.iinfo(np.int64).max)
    neighbour = np.where(apart <= 1, cosine[None, :], -1.0).max(axis=1)
    best = ids[np.argsort(-closeness, kind="stable")[:_TOP]]
    near = (np.abs(ids[:, None] - best[None, :]) <= _NEAR).any(axis=1)  # the closest few themselves too
    weight = np.exp(-np.minimum(apart, 10_000) / _LOCALITY_SPAN)
    return {"neighbour": neighbour, "neighbour_gap": neighbour - cosine.max(), "near_best": near.astype(float),
            "locality": weight @ np.maximum(closeness - _median(closeness), 0.0)}
