"""Names in a query, and the text a query is embedded as: without the names the store never mentions.

A name is a capitalised word of the query ("Emi", "Emi's", "PostgreSQL"), read as the one lexical term it
folds to (possessive 's dropped; a stop word such as a sentence's first "What" is none). The second ranking
stage weighs names (service.domain.ranking.features); and a search embeds its query without the names no active
fact of the profile holds. Such a name cannot be matched by meaning -- no fact's vector carries it -- and it
pulls the query's vector away from the facts that do answer: in a store of chat turns that never say who spoke,
"What did Emi cook?" finds "I made lasagna" closer as "What did cook?". A name the store holds stays (a speaker's
tag, a project's name in a note). The store's off-topic level is measured with its probe questions stripped by
the same rule (service.domain.ranking.level), so the two are read alike. docs/benchmarks.md has what it changes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence

from service.domain import lexical

_NAME = re.compile(r"[A-Z][\w'’-]*")
_POSSESSIVE = re.compile(r"['’]s$")
_SPACES = re.compile(r"\s+")


def names(text: str) -> list[tuple[str, str]]:
    """Each name of the text as (the word as written, the term it folds to), in order, duplicates kept."""
    out = []
    for word in _NAME.findall(text):
        folded = lexical.tokens(_POSSESSIVE.sub("", word))
        if len(folded) == 1 and folded[0] not in lexical.STOP_WORDS:
            out.append((word, folded[0]))
    return out


def terms(text: str) -> list[str]:
    """The distinct terms of the text's names, in order."""
    return list(dict.fromkeys(term for _, term in names(text)))


def without(text: str, dropped: Sequence[str]) -> str:
    """The text without the written words `dropped` (whole words only), spaces collapsed; the text itself when
    nothing of it would remain."""
    out = text
    for word in dropped:
        out = re.sub(r"(?<![\w'’-])" + re.escape(word) + r"(?![\w'’-])", " ", out)
    out = _SPACES.sub(" ", out).strip()
    return out if re.search(r"\w", out) else text


def keeping(text: str, held: Collection[str]) -> str:
    """`text` without its names whose terms are not in `held` (the terms some active fact holds); the text
    itself when it has no name."""
    found = names(text)
    return without(text, [word for word, term in found if term not in held]) if found else text


def meaning_text(text: str, holding: Callable[[list[str]], Sequence[int]]) -> str:
    """The text to embed: `text` without its names that no active fact holds. `holding(terms)`: how many active
    facts of the profile hold each term (SearchBackend.holding)."""
    asked = terms(text)
    if not asked:
        return text
    return keeping(text, {term for term, count in zip(asked, holding(asked)) if count > 0})
