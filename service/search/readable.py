"""Whether a query can be matched by meaning at all (docs/reviewers.md "How search decides what matched").

An embedding model turns anything into a vector, gibberish included, and a vector always has
neighbours: on the labelled set, keyboard mashes such as `asdf qwer zxcv` land at cosine 0.35 from
facts full of host names and ticket ids. So the semantic half of the match rule only applies to a
query that has something to mean: at least one informative term is a word of the embedder's
vocabulary or occurs in the profile's facts. A query of stop words only is read as it is; one with no
letter or digit at all is not. Embedders that publish no vocabulary (openai) skip the check.

A WordPiece vocabulary holds ~30k whole words but few plurals and little jargon (no "dashboards",
"timeout", "config"), so a term also counts as a word when an inflection-stripped form is in it
(dashboards -> dashboard) or when it is two such words of 3+ letters run together (time+out,
micro+services, web+socket). Keyboard mashes and invented words (asdf, ekkmn, blenticular) are neither.

Both backends decide with this one function; only "occurs in the profile's facts" is asked of each.
An unreadable query can match nothing at all then (none of its terms occurs in any fact, so the lexical
rule cannot match either): matched_count 0, exact, in mode "hybrid".
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from service.domain import lexical


def semantic_applies(
    query: str,
    terms: list[str],
    vocabulary: Collection[str] | None,
    known_to_memory: Callable[[list[str]], bool],
) -> bool:
    """True when cosine similarity may count as a match for this query.

    `terms` are the query's informative terms (lexical.informative_terms); `known_to_memory(terms)`
    tells whether any of them occurs in any fact of the profile (it is only asked when needed).
    """
    decided = semantic_applies_without_memory(query, terms, vocabulary)
    return known_to_memory(terms) if decided is None else decided


def semantic_applies_without_memory(query: str, terms: list[str], vocabulary: Collection[str] | None) -> bool | None:
    """semantic_applies when the vocabulary alone decides it; None when it takes asking whether a term occurs
    in the profile's facts (a backend that asks in the same round trip as its search calls this)."""
    if vocabulary is None:
        return True
    if not terms:
        return bool(lexical.tokens(query))
    if any(is_word(term, vocabulary) for term in terms):
        return True
    return None


_ENDINGS = (("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"), ("ing", ""), ("ing", "e"), ("ly", ""))


def _listed(word: str, vocabulary: Collection[str]) -> bool:
    """The word or one of its inflection-stripped forms (3+ letters left) is in the vocabulary."""
    if word in vocabulary:
        return True
    return any(
        word.endswith(ending) and len(word) - len(ending) >= 3 and word[: -len(ending)] + base in vocabulary
        for ending, base in _ENDINGS
    )


def is_word(term: str, vocabulary: Collection[str]) -> bool:
    """A vocabulary word, an inflected one, or two of them (3+ letters each) run together."""
    if _listed(term, vocabulary):
        return True
    if not term[:1].isalpha():
        return False
    return any(_listed(term[:i], vocabulary) and _listed(term[i:], vocabulary) for i in range(3, len(term) - 2))
