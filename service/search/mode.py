"""The search mode and whether a search's counts are exact: one rule, called by both backends.

- "lexical": the embedder is off (MEMORY_EMBEDDER=none); counts are exact;
- "hybrid": the embedder is on and the query was matched by words and by meaning over facts that all
  have a vector -- or the query has nothing to mean (service.search.readable), so the vectors play no
  part; counts are exact;
- "degraded": the embedder is on but there is no usable query vector, a fact passing the filters has no
  vector yet, or the engine could only give a lower bound of a count; counts are unknown (null), never a
  guess (docs/reviewers.md "How search decides what matched").
"""

from __future__ import annotations

LEXICAL, HYBRID, DEGRADED = "lexical", "hybrid", "degraded"


def search_mode(*, vectors_on: bool, semantic: bool = True, query_vector: bool = True, all_embedded: bool = True,
                counts_known: bool = True) -> str:
    """The mode of one search (see the module docstring). `semantic`: the query can be matched by meaning;
    `query_vector`: a usable query vector was there; `all_embedded`: every fact passing the filters has a
    vector; `counts_known`: the engine counted exactly (OpenSearch may report a lower bound)."""
    if not vectors_on:
        return LEXICAL if counts_known else DEGRADED
    if not semantic:
        return HYBRID
    if query_vector and all_embedded and counts_known:
        return HYBRID
    return DEGRADED


def exact(mode: str) -> bool:
    """matched_count and inactive_matched are known exactly in this mode."""
    return mode != DEGRADED
