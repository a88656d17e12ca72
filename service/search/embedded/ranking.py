"""The embedded backend's ranking steps, one function each, public so that bench/ times and calls them
instead of copying them: the lexical pass (match rule + BM25 top list), the vector pass (threshold + cosine
top list), the fusion weights and the fused top of the list. EmbeddedSearch._search is these steps in order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from service.domain import lexical
from service.domain.ports import Candidate, Pool
from service.search.embedded.index import ProfileIndex
from service.search.fusion import fuse


@dataclass(frozen=True)
class Pass:
    """One sub-query over a profile's rows: which rows match by its rule, and the best `depth` of the
    active matches with their raw scores (the sub-query's list that fusion normalises)."""

    matched: np.ndarray  # bool per row, any status
    top: dict[int, float]


def best(rows: np.ndarray, scores: np.ndarray, depth: int) -> dict[int, float]:
    """The `depth` best rows by score (stable: ties keep row order), with their scores. Only the rows scoring at
    least the depth-th best score are sorted: a full sort of a large profile's cosines cost ~0.5 ms a search."""
    if 0 < depth < scores.size:
        cutoff = -np.partition(-scores, depth - 1)[depth - 1]  # the depth-th best score
        keep = np.nonzero(scores >= cutoff)[0]  # ascending, ties at the cutoff included: the stable sort below
        order = keep[np.argsort(-scores[keep], kind="stable")][:depth]  # orders them as a sort of all would
    else:
        order = np.argsort(-scores, kind="stable")[:depth]
    return {int(rows[i]): float(scores[i]) for i in order}


def term_counts(index: ProfileIndex, terms: list[str]) -> np.ndarray:
    """How many of the informative terms each row contains (zeros when there are none)."""
    return index.term_counts(terms) if terms else np.zeros(index.size, dtype=np.int32)


def lexical_pass(index: ProfileIndex, terms: list[str], counts: np.ndarray, active: np.ndarray,
                 depth: int) -> Pass:
    """The lexical rule (service.domain.lexical.required_terms) and BM25 of the active rows it matches."""
    if terms:
        matched = counts >= lexical.required_terms(len(terms))
    else:
        matched = np.zeros(index.size, dtype=bool)
    rows = np.nonzero(active & matched)[0]
    return Pass(matched, best(rows, index.bm25(terms, rows), depth))


def vector_pass(sims: np.ndarray | None, size: int, active: np.ndarray, min_similarity: float,
                depth: int) -> Pass:
    """Rows at cosine >= min_similarity, and the closest active ones (none without similarities)."""
    if sims is None:
        return Pass(np.zeros(size, dtype=bool), {})
    matched = sims >= min_similarity
    rows = np.nonzero(active & matched)[0]
    return Pass(matched, best(rows, sims[rows], depth))


def cut(top: dict[int, float], depth: int) -> dict[int, float]:
    """The first `depth` of a pass's top list (it is best first)."""
    return top if len(top) <= depth else dict(list(top.items())[:depth])


def pool(index: ProfileIndex, terms: list[str], sims: np.ndarray, active: np.ndarray, words: Pass, meaning: Pass,
         depth: int) -> Pool:
    """The second stage's candidates: the best `depth` active facts by meaning and by words (fact-id order), with
    the counts it weighs them with (service.domain.ports.Pool)."""
    rows = sorted(set(cut(meaning.top, depth)) | set(cut(words.top, depth)), key=index.fact_ids.__getitem__)
    at = np.array(rows, dtype=np.int64)
    candidates = [
        Candidate(uid=index.uids[r], fact_id=index.fact_ids[r], cosine=cosine, by_words=by_words, by_meaning=by_meaning,
                  tokens=index.tokens[r], fact=index.facts[r], words=index.words[r])
        for r, cosine, by_words, by_meaning in zip(rows, sims[at].tolist(), words.matched[at].tolist(),
                                                   meaning.matched[at].tolist())
    ]
    term_df = tuple(int(active[index.rows_with(term)].sum()) for term in terms)
    return Pool(candidates, scope=int(active.sum()), term_df=term_df, by_words=int((active & words.matched).sum()))


def fusion_weights(vectors_on: bool, lexical_weight: float, vector_weight: float) -> list[float]:
    """[lexical, vector] (just [1.0] without vectors); equal weights if both were set to 0."""
    weights = [lexical_weight, vector_weight] if vectors_on else [1.0]
    return weights if sum(weights) > 0 else [1.0] * len(weights)


def fused(lexical_top: dict[int, float], vector_top: dict[int, float], vectors_on: bool, weights: list[float],
          limit: int, fact_ids: list[int]) -> list[tuple[int, float]]:
    """The best `limit` rows by the shared fusion of the sub-query lists, with their fused scores (equal scores by
    the rows' fact ids, `fact_ids[row]`, as on every backend)."""
    sub_queries = [lexical_top, vector_top] if vectors_on else [lexical_top]
    return fuse(sub_queries, weights, tie=fact_ids.__getitem__)[:limit]
