"""Knowledge gaps: the rule that groups missed searches into topics (pure; both canonical stores feed it).

Input: the window's distinct missed query texts, each with its number of searches, first and last time seen,
and the kind/tag filters and retired facts of those searches. Output: groups of texts that ask the same thing.

1. Canonical order: texts by searches descending, then by text (code points). Every step below walks this
   order, so the same log gives the same groups whatever order its rows were read in.
2. Forms: texts with the same set of informative terms, Porter-stemmed (the search's own tokenizer and stop
   words, service.domain.lexical), are one form: "Deploying to staging?" and "deploy staging" are one form.
   A text with no informative term ("what do you know?") is a form with the texts of the same words.
3. Lexical groups: leader clustering over forms, in canonical order. A form joins the group whose leader (its
   first form) has the highest Jaccard similarity of stemmed term sets with it, when that reaches
   LEXICAL_THRESHOLD (ties: the earlier group); otherwise it leads a new group.
4. Semantic groups (when an embedder answers): the lexical groups, most searched first, are leader-clustered
   the same way by the cosine similarity of their representatives' embeddings, >= SEMANTIC_THRESHOLD (rounded to
   6 decimals, so a last-bit difference cannot flip a decision). Only the first SEMANTIC_BUDGET lexical groups
   are embedded (the cost bound: one batch of at most that many texts per section); the others stay lexical
   groups and are counted in `lexical_tail`.
5. A group's representative is its leader's first text; groups are ordered by searches descending, then by
   representative; a group's texts by searches descending, then by text.

SEMANTIC_THRESHOLD was chosen on bench/data/gaps/labelled.jsonl (60 queries in 19 labelled topics, with
look-alike topics such as "python version" / "node version"): `python bench/gaps.py --check` prints pairwise
precision and recall of the grouping for thresholds 0.40-0.80; docs/benchmarks.md "Knowledge-gap grouping" has
the table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from service.domain.lexical import informative_terms, tokens

LEXICAL_THRESHOLD = 0.5
SEMANTIC_THRESHOLD = 0.55
SEMANTIC_BUDGET = 64  # lexical groups embedded per section and report (bench/gaps.py: ~0.1 s of MiniLM idle)


@dataclass(frozen=True)
class MissedQuery:
    """One distinct missed query text in the window, with what its searches asked for."""

    query: str
    count: int
    first_seen: datetime
    last_seen: datetime
    kinds: Mapping[str, int] = field(default_factory=dict)  # kind filter -> searches
    tags: Mapping[str, int] = field(default_factory=dict)  # tag filter -> searches
    retired: Mapping[str, int] = field(default_factory=dict)  # retired/superseded fact uid -> searches


@dataclass
class Form:
    terms: frozenset[str]
    queries: list[MissedQuery]
    apart: bool = False  # a text that must stay a group of its own (a redaction marker)

    @property
    def text(self) -> str:
        return self.queries[0].query


@dataclass
class Group:
    forms: list[Form]

    @property
    def queries(self) -> list[MissedQuery]:
        return sorted((q for f in self.forms for q in f.queries), key=canonical_key)

    @property
    def representative(self) -> str:
        return self.forms[0].text

    @property
    def count(self) -> int:
        return sum(q.count for f in self.forms for q in f.queries)


@dataclass
class Grouping:
    groups: list[Group]
    lexical_tail: int = 0  # forms placed lexically because the semantic budget was spent


def canonical_key(item: MissedQuery) -> tuple[int, str]:
    return (-item.count, item.query)


def _surface(text: str) -> str:
    """All of a text's words, folded as the search folds them (punctuation and case dropped)."""
    return " ".join(tokens(text)) or " ".join(text.split())


def term_sets(texts: Sequence[str]) -> list[frozenset[str]]:
    """The Porter-stemmed informative terms of each text. A fresh stemmer per call (it keeps state between
    words) and each distinct word stemmed once per call (the pure-Python stemmer is the slow part)."""
    import snowballstemmer  # here, not at the top: importing it costs every command line ~0.1 s (wording.porter)

    stemmer = snowballstemmer.stemmer("porter")
    stems: dict[str, str] = {}

    def stem(word: str) -> str:
        found = stems.get(word)
        if found is None:
            found = stems[word] = stemmer.stemWord(word)
        return found

    return [frozenset(stem(w) for w in informative_terms(t)) for t in texts]


def forms_of(items: Iterable[MissedQuery], apart: Callable[[str], bool] | None = None) -> list[Form]:
    """Texts with equal stemmed term sets merged into forms, in canonical order. A text for which `apart`
    is true (a redacted query's marker: its words are gone, so it cannot be said to ask what another asked)
    is a form of its own that nothing joins."""
    ordered = sorted(items, key=canonical_key)
    by_key: dict[object, Form] = {}
    for item, terms in zip(ordered, term_sets([i.query for i in ordered])):
        if apart is not None and apart(item.query):
            by_key[("apart", item.query)] = Form(frozenset(), [item], apart=True)
            continue
        key: object = terms if terms else ("text", _surface(item.query))
        form = by_key.get(key)
        if form is None:
            by_key[key] = Form(terms, [item])
        else:
            form.queries.append(item)
    return list(by_key.values())


class _LexicalLeaders:
    """The groups' leaders indexed by term, so a form is compared only with leaders sharing a term."""

    def __init__(self) -> None:
        self.by_term: dict[str, list[int]] = {}
        self.sizes: dict[int, int] = {}

    def add(self, group: int, terms: frozenset[str]) -> None:
        self.sizes[group] = len(terms)
        for term in terms:
            self.by_term.setdefault(term, []).append(group)

    def best(self, terms: frozenset[str], threshold: float) -> int | None:
        shared: Counter[int] = Counter()
        for term in terms:
            shared.update(self.by_term.get(term, ()))
        best, best_score = None, -1.0
        for group in sorted(shared):  # strictly better only: of equal scores, the earlier group
            inter = shared[group]
            score = round(inter / (len(terms) + self.sizes[group] - inter), 6)
            if score >= threshold and score > best_score:
                best, best_score = group, score
        return best


def group_lexical(items: Iterable[MissedQuery], threshold: float = LEXICAL_THRESHOLD,
                  apart: Callable[[str], bool] | None = None) -> Grouping:
    groups: list[Group] = []
    leaders = _LexicalLeaders()
    for form in forms_of(items, apart):
        _place_lexically(form, groups, leaders, threshold)
    return Grouping(_ordered(groups))


def _place_lexically(form: Form, groups: list[Group], leaders: _LexicalLeaders, threshold: float) -> None:
    target = leaders.best(form.terms, threshold) if form.terms else None
    if target is None:
        groups.append(Group([form]))
        leaders.add(len(groups) - 1, form.terms)
    else:
        groups[target].forms.append(form)


def group_semantic(items: Iterable[MissedQuery], embed: Callable[[list[str]], np.ndarray],
                   threshold: float = SEMANTIC_THRESHOLD, budget: int = SEMANTIC_BUDGET,
                   lexical_threshold: float = LEXICAL_THRESHOLD, apart: Callable[[str], bool] | None = None
                   ) -> Grouping:
    """The lexical groups, merged by meaning: their representatives are embedded (`embed`: texts -> unit
    vectors, one call, in group order) and leader-clustered by cosine. Only the first `budget` groups are
    embedded; the rest stay as they are (`lexical_tail`)."""
    lexical = group_lexical(items, lexical_threshold, apart).groups
    alone = [g for g in lexical if g.forms[0].apart]
    lexical = [g for g in lexical if not g.forms[0].apart]
    head, tail = lexical[:budget], lexical[budget:]
    vectors = np.asarray(embed([g.representative for g in head]), dtype=np.float32) if head else None
    merged: list[Group] = []
    leader_rows: list[int] = []  # row of `vectors` of each merged group's leader
    for row, group in enumerate(head):
        target = None
        if leader_rows and vectors is not None:
            sims = np.round(vectors[leader_rows] @ vectors[row], 6)
            best = int(np.argmax(sims))  # the first of equal maxima: the earlier group
            if sims[best] >= threshold:
                target = best
        if target is None:
            merged.append(Group(list(group.forms)))
            leader_rows.append(row)
        else:
            merged[target].forms.extend(group.forms)
    return Grouping(_ordered(merged + tail + alone), lexical_tail=len(tail))


def _ordered(groups: list[Group]) -> list[Group]:
    return sorted(groups, key=lambda g: (-g.count, g.representative))


def _top(counts: Counter[str], name: str) -> list[dict[str, object]]:
    return [{name: key, "count": n} for key, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def describe(group: Group, section: str, iso: Callable[[datetime], str | None]) -> dict[str, object]:
    """A group as the REST answer shows it (retired facts as uids with counts; the caller adds titles)."""
    queries = group.queries
    kinds: Counter[str] = Counter()
    tags: Counter[str] = Counter()
    retired: Counter[str] = Counter()
    for q in queries:
        kinds.update(q.kinds)
        tags.update(q.tags)
        retired.update(q.retired)
    out: dict[str, object] = {
        "representative": group.representative,
        "count": group.count,
        "queries": [{"query": q.query, "count": q.count} for q in queries],
        "first_seen": iso(min(q.first_seen for q in queries)),
        "last_seen": iso(max(q.last_seen for q in queries)),
        "kinds": _top(kinds, "kind"),
        "tags": _top(tags, "tag"),
    }
    if section == "retired_only":
        out["retired_facts"] = _top(retired, "uid")
    return out
