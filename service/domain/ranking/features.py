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
from functools import lru_cache

import numpy as np

from service.domain import lexical
from service.domain.late import TokenVectors, maxsim
from service.domain.wording import FactWords, fact_words, stem
from service.domain.models import Fact
from service.domain.ports import Pool

# Per candidate. LATE_* need token vectors (query and every candidate); without them the "plain" weights apply,
# which leave them out and place facts by cosine instead.
LATE = ("late", "late_gap", "late_rank", "late_z")
CANDIDATE = ("cosine", "cosine_gap", "cosine_rank", "cosine_z", "bm25", "bm25_rank", "coverage", "idf_coverage", "name_is_tag",
             "name_in_text", "number_shared", "length", "asks", "by_words", "by_meaning", "any_term", *LATE, "neighbour",
             "neighbour_gap", "when_time", "time_words", "near_best", "locality")
# Per query: what the gate ("does memory know?") weighs.
QUERY = ("best_cosine", "cosine_lead", "late_best", "late_at_top", "late_lead", "by_words", "known", "terms",
         "best_length", "best_cosine_by_length", "best_by_meaning_only", "by_meaning", "best_idf_coverage",
         "best_asks")
QUERY_LATE = ("late_best", "late_at_top", "late_lead")

_BM25_K1, _BM25_B = 1.2, 0.75
_NEAR = 2  # facts written at most this many ids apart count as written together
_LOCALITY_SPAN = 3.0  # ids: how fast a neighbour's weight falls off
_TOP = 3  # the best candidates the others are placed against
_GATE_TOP = 10  # the closest candidates by cosine the gate looks at
_NAME = re.compile(r"[A-Z][\w'’-]*")
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


def query_view(text: str, tokens: TokenVectors | None) -> QueryView:
    terms = tuple(lexical.informative_terms(text))
    names = set()
    for word in _NAME.findall(text):
        folded = lexical.tokens(re.sub(r"['’]s$", "", word))
        if len(folded) == 1 and folded[0] not in lexical.STOP_WORDS:
            names.add(folded[0])
    return QueryView(terms=terms, stems=tuple(stem(t) for t in terms), names=frozenset(names),
                     numbers=frozenset(_NUMBER.findall(text)), asks_when=bool(_WHEN.search(text)),
                     tokens=tokens.matrix() if tokens is not None and len(tokens) else None)


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
    cosine."""
    n, terms = len(pool.candidates), len(query.terms)
    assert len(pool.term_df) == terms, "the pool counts other terms than the query's"
    words = [c.words or fact_words(f.title, f.text, tuple(f.tags)) for c, f in zip(pool.candidates, facts)]
    # one pass over the candidates for everything read one by one (columns of `each`, as named below)
    names_, numbers_, when = query.names, query.numbers, query.asks_when
    each = np.array([(c.cosine if c.cosine is not None else -1.0, c.fact_id, bool(names_ and names_ & set(f.tags)),
                      bool(names_ and names_ & w.words), bool(numbers_ and numbers_ & w.numbers), w.length, w.asks,
                      c.by_words, c.by_meaning, when and w.time_words, w.time_words)
                     for c, f, w in zip(pool.candidates, facts, words)], dtype=np.float64).reshape(n, 11)
    cosine, ids = each[:, 0], each[:, 1].astype(np.int64)
    present = np.array([[s in w.stems for s in query.stems] for w in words], dtype=bool).reshape(n, terms)
    df = np.asarray(pool.term_df, dtype=np.float64)
    idf = np.log((pool.scope - df + 0.5) / (df + 0.5) + 1.0) if terms else np.zeros(0)
    bm25 = _bm25(query, words, idf)
    closeness = maxsim(query.tokens, [c.tokens for c in pool.candidates]) if late and query.tokens is not None \
        else cosine
    f: dict[str, np.ndarray] = {
        "cosine": cosine,
        "cosine_gap": cosine - cosine.max(),
        "cosine_rank": _rank(cosine),
        "cosine_z": (cosine - cosine.mean()) / max(float(cosine.std()), 1e-6),
        "bm25": bm25 / bm25.max() if bm25.max() > 0 else bm25,
        "bm25_rank": np.where(bm25 > 0, _rank(bm25), math.log1p(n)),
        "coverage": present.sum(axis=1) / terms if terms else np.zeros(n),
        "idf_coverage": (present @ idf) / idf.sum() if terms and idf.sum() > 0 else np.zeros(n),
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
    names = CANDIDATE if late else tuple(name for name in CANDIDATE if name not in LATE)
    by_cosine = np.argsort(-cosine, kind="stable")[:_GATE_TOP]
    closest = int(by_cosine[0])
    best_length = math.log1p(words[closest].length)  # a short fact close by meaning is weak evidence
    query_numbers = {
        "best_cosine": float(cosine.max()),
        "cosine_lead": _lead(cosine),
        "by_words": math.log1p(pool.by_words),
        "known": float(idf[df > 0].sum() / idf.sum()) if terms and idf.sum() > 0 else 0.0,
        "terms": math.log1p(terms),
        "best_length": best_length,
        "best_cosine_by_length": float(cosine.max()) * best_length,
        "best_by_meaning_only": float(not pool.candidates[closest].by_words),
        "by_meaning": math.log1p(float(each[:, 8].sum())),
        "best_idf_coverage": float(f["idf_coverage"].max()),
        "best_asks": float(words[closest].asks),
    }
    if late:
        query_numbers.update(late_best=float(closeness[by_cosine].max()), late_at_top=float(closeness[by_cosine[0]]),
                             late_lead=_lead(closeness))
    return Rows(names=names, candidates=np.column_stack([f[name] for name in names]), query=query_numbers,
                bm25=bm25)


def _lead(scores: np.ndarray) -> float:
    """How far the best candidate stands out: its score less the pool's median (0 for a pool of one)."""
    return float(scores.max() - np.median(scores))


def _bm25(query: QueryView, words: Sequence[FactWords], idf: np.ndarray) -> np.ndarray:
    """BM25 of the query's terms in each candidate, from the facts' own words (the same on every backend; the
    backends' BM25 differ: FTS5's and Lucene's), idf from the scope's counts, lengths against the pool's mean."""
    if not query.stems or not words:
        return np.zeros(len(words))
    tf = np.array([[w.stems.get(s, 0.0) for s in query.stems] for w in words])
    length = np.array([w.length for w in words], dtype=np.float64)
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
            "locality": weight @ np.maximum(closeness - np.median(closeness), 0.0)}
