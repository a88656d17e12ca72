"""What the second ranking stage reads of a fact's words (service.domain.ranking), computed once per fact: its
Porter stems with their weighted counts, its length, its words, numbers, whether it names a time and whether it
asks something. Pure: the embedded index keeps each fact's as it indexes the fact (so a search computes none);
for other backends the stage computes them, kept in a cache.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from service.domain import lexical

_FIELD_WEIGHTS = (2.0, 1.0, 1.5)  # title, text, tags: as the embedded index's BM25 weighs them
_NUMBER = re.compile(r"\d+")
_TIME = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|ago|last|next|recently|recent|soon|weeks?|months?|years?|weekend|"
    r"mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|saturdays?|sundays?|january|february|march|april|may|"
    r"june|july|august|september|october|november|december|\d{4}|morning|evening|night|since|before|after|"
    r"during|earlier|later|upcoming)\b", re.IGNORECASE)


@lru_cache(maxsize=1)
def porter() -> Any:
    """The Porter stemmer, as the backends' own. Imported at first use: snowballstemmer imports every language's
    stemmer (~0.1 s), which a command line that stems nothing should not wait for."""
    import snowballstemmer

    return snowballstemmer.stemmer("porter")


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    return str(porter().stemWord(word))


@dataclass(frozen=True)
class FactWords:
    """What the stage reads of a fact's words (kept per title, text and tags: a fact's text never changes under
    its uid, and a changed title or tags is another key)."""

    stems: dict[str, float]  # stem -> weighted count (title 2, text 1, tags 1.5)
    length: int  # words of title and text
    words: frozenset[str]  # lower-cased words of title, text and tags
    numbers: frozenset[str]
    time_words: bool
    asks: bool  # it holds a question (a chat turn asking something seldom holds the answer)


def read_words(title: str, text: str, tags: tuple[str, ...]) -> FactWords:
    counts: dict[str, float] = {}
    fields = (lexical.tokens(title), lexical.tokens(text), [w for tag in tags for w in lexical.tokens(tag)])
    for words, weight in zip(fields, _FIELD_WEIGHTS):
        for word in words:
            key = stem(word)
            counts[key] = counts.get(key, 0.0) + weight
    return FactWords(stems=counts, length=len(fields[0]) + len(fields[1]),
                     words=frozenset(fields[0]) | frozenset(fields[1]) | frozenset(fields[2]),
                     numbers=frozenset(_NUMBER.findall(text)), time_words=bool(_TIME.search(text)), asks="?" in text)


fact_words = lru_cache(maxsize=32_768)(read_words)  # for facts no index keeps them for


def forget() -> None:
    """Drop the stems and word sets kept so far (a redaction: they may hold the removed words); they are read again
    as needed."""
    stem.cache_clear()
    fact_words.cache_clear()
