"""The lexical match rule shared by both search backends (docs/reviewers.md "How search decides what matched").

A query is cut into informative terms: lower-cased runs of letters and digits (the same split as SQLite
FTS5's unicode61 tokenizer and the `memory_text` analyzer of index_templates/), minus stop words, exact
duplicates dropped. A fact matches lexically when it contains at least `required_terms(n)` of the n terms
(each term stemmed the Porter way, in title, text or tags). That is OpenSearch's `minimum_should_match`
with an absolute number, so both backends count the same facts.

- 1 or 2 terms: all of them (an identifier such as `JIRA-4412` is the two terms jira + 4412, and still
  matches on its own; a bare URL is all its parts);
- 3 or more: at least ceil(LEXICAL_SHARE * n), never fewer than 2.
Sharing one word is never enough once a query has two informative terms.
"""

from __future__ import annotations

import math
import re
import unicodedata

LEXICAL_SHARE = 0.5
MAX_TERMS = 64

# Lucene's English stop set plus the words of questions and pronouns an agent's query is made of.
STOP_WORDS: frozenset[str] = frozenset(
    """
    a an and are as at be but by for if in into is it no not of on or such that the their then there these
    they this to was will with
    about above after again against all am any because been before being below between both can could did
    do does doing don down during each few from further had has have having he her here hers herself him
    himself his how i im its itself just me more most my myself nor now off once only other ought our
    ours ourselves out over own same she should so some than theirs them themselves those through too under
    until up very we were what when where which while who whom why would you your yours yourself
    yourselves s t d ll m re ve
    know tell remember recall use used uses using
    """.split()
)

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def _fold(text: str) -> str:
    """Lower-case and strip diacritics, as unicode61 (remove_diacritics) and asciifolding do."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(_fold(text))


def informative_terms(query: str) -> list[str]:
    """The query's terms that count for the match rule, in order, without stop words or exact repeats."""
    seen: dict[str, None] = {}
    for token in tokens(query):
        if token not in STOP_WORDS and token not in seen:
            seen[token] = None
            if len(seen) == MAX_TERMS:
                break
    return list(seen)


def required_terms(n: int) -> int:
    """How many of n informative terms a fact must contain to match lexically (0 when n is 0)."""
    if n <= 2:
        return n
    return max(2, math.ceil(LEXICAL_SHARE * n))
