"""The knowledge-gap report (GET /api/{profile}/queries/gaps) and one group's searches.

The window's zero-match searches are read from the canonical store (the query log lives there in either search
mode), split into two sections -- "zero_match" (nothing matched, not even a retired fact) and "retired_only"
(only retired or superseded facts matched) -- and each section is grouped into topics by service.domain.gaps:
semantically when the embedder can answer now, else lexically; `grouping` says which, and why.

Cost bound: at most DISTINCT_MAX distinct texts per section are grouped (the most searched; `capped` says when
there were more) and at most gaps.SEMANTIC_BUDGET of their forms are embedded, in one batch per section.
Nothing is cached: the texts and their vectors live for one request (a redacted query must not survive in a cache).
"""

from __future__ import annotations

import hashlib
from datetime import date
from typing import Any, Protocol

import numpy as np

from service import clock
from service.contract import DAYS_MAX, LISTING_MAX
from service.domain import gaps, validation
from service.domain.embed_gate import EmbedGate
from service.domain.ports import Embedder, EmbeddingUnavailable, Sourced
from service.domain.profiles import ProfileRef
from service.domain.querylog import row_to_dict
from service.domain.redaction import QUERY_MARKER
from service.errors import InvalidInput, NotFound

SECTIONS = ("zero_match", "retired_only")
PREFIX = {"zero_match": "z", "retired_only": "r"}
DISTINCT_MAX = 2000  # distinct missed texts grouped per section
RETIRED_FACTS_SHOWN = 10  # per group
GROUP_ID_LENGTH = 16


class MissReader(Protocol):
    """What the report reads from the canonical store (service.store.gaps.SqlMissReader)."""

    store_name: str  # "sqlite" or "postgres", for X-Memory-Source

    def misses(self, profile_id: int, first: date, last: date, section: str, limit: int
               ) -> tuple[list[gaps.MissedQuery], int, int]: ...

    def fact_labels(self, profile_id: int, uids: list[str]) -> dict[str, tuple[str, str]]: ...

    def searches(self, profile_id: int, first: date, last: date, section: str, queries: list[str], limit: int
                 ) -> tuple[list[Any], int]: ...


def group_id(section: str, representative: str) -> str:
    """`z…` or `r…` (the section) and 15 hex digits of SHA-256 over section and representative text."""
    digest = hashlib.sha256(f"{section}\x00{representative}".encode()).hexdigest()
    return PREFIX[section] + digest[: GROUP_ID_LENGTH - 1]


def parse_group_id(value: str) -> str:
    """The section of a group id, or a 400."""
    section = next((s for s, p in PREFIX.items() if value.startswith(p)), None)
    hexpart = value[1:]
    if section is None or len(value) != GROUP_ID_LENGTH or any(c not in "0123456789abcdef" for c in hexpart):
        raise InvalidInput("group must be a group id from the gap report (z or r and 15 hex digits)", param="group")
    return section


def _redacted(text: str) -> bool:
    """A redacted search's marker (`memory redact`): its own group, never grouped with another."""
    return QUERY_MARKER.match(text) is not None


class GapReport:
    def __init__(self, reader: MissReader, embedder: Embedder, gate: EmbedGate | None = None, *,
                 mirrored: bool = False) -> None:
        self.reader = reader
        self.mirrored = mirrored  # the search backend keeps a mirror (Capabilities.mirrored)
        self.embedder = embedder
        self.gate = gate or EmbedGate(embedder)

    def sourced_report(self, profile: ProfileRef, days: int) -> Sourced:
        """The report, marked with the canonical store's name when the service also runs a mirror (whose
        summary and stats may come from OpenSearch): the gap report never does."""
        body = self.report(profile, days)
        return Sourced(body, self.reader.store_name if self.mirrored else None)

    def report(self, profile: ProfileRef, days: int) -> dict[str, Any]:
        days = validation.bounded_int(days, low=1, high=DAYS_MAX, param="days")
        first, last = clock.window(days)
        read = {s: self.reader.misses(profile.id, first, last, s, DISTINCT_MAX) for s in SECTIONS}
        grouped, grouping = self._group({s: items for s, (items, _, _) in read.items()})
        sections = {}
        for section, (items, distinct, searches) in read.items():
            groups = [self._describe(g, section) for g in grouped[section].groups]
            body: dict[str, Any] = {
                "searches": searches,
                "distinct_queries": distinct,
                "grouped_queries": len(items),
                "grouped_searches": sum(i.count for i in items),
                "capped": distinct > len(items),
                "lexical_tail": grouped[section].lexical_tail,
                "groups": groups,
            }
            sections[section] = body
        self._label_retired(profile, sections["retired_only"]["groups"])
        return {"profile": profile.name, "days": days, "from": first.isoformat(), "to": last.isoformat(),
                "grouping": grouping, **sections}

    def searches(self, profile: ProfileRef, days: int, group: str, limit: int) -> dict[str, Any]:
        """One group of the report (as the report shows it now) and its searches, newest first."""
        days = validation.bounded_int(days, low=1, high=DAYS_MAX, param="days")
        limit = validation.bounded_int(limit, low=1, high=LISTING_MAX, param="limit")
        section = parse_group_id(group)
        first, last = clock.window(days)
        items, _, _ = self.reader.misses(profile.id, first, last, section, DISTINCT_MAX)
        grouped, grouping = self._group({section: items})
        found = next((g for g in grouped[section].groups if group_id(section, g.representative) == group), None)
        if found is None:
            raise NotFound(f"no gap group {group} in the last {days} days (the log may have changed since)",
                           param="group")
        described = self._describe(found, section)
        if section == "retired_only":
            self._label_retired(profile, [described])
        rows, total = self.reader.searches(profile.id, first, last, section, [q.query for q in found.queries], limit)
        return {"profile": profile.name, "days": days, "from": first.isoformat(), "to": last.isoformat(),
                "section": section, "grouping": grouping, "group": described, "total": total,
                "queries": [row_to_dict(r) for r in rows]}

    # --- helpers ----------------------------------------------------------------------------------

    def _group(self, items: dict[str, list[gaps.MissedQuery]]) -> tuple[dict[str, gaps.Grouping], dict[str, Any]]:
        """Every section grouped the same way: semantically if the embedder answers for all, else lexically."""
        reason = self._semantic_unavailable()
        if reason is None:
            try:
                grouped = {s: gaps.group_semantic(v, self._embed, apart=_redacted) for s, v in items.items()}
                return grouped, {"method": "semantic", "model": self.embedder.model_id,
                                 "threshold": gaps.SEMANTIC_THRESHOLD, "embedded_forms_max": gaps.SEMANTIC_BUDGET,
                                 "tail_rule": f"lexical, threshold {gaps.LEXICAL_THRESHOLD}"}
            except EmbeddingUnavailable as exc:
                self.gate.failed()
                reason = f"the embedder failed: {exc}"
        grouped = {s: gaps.group_lexical(v, apart=_redacted) for s, v in items.items()}
        return grouped, {"method": "lexical", "rule": "Jaccard similarity of Porter-stemmed informative terms",
                         "threshold": gaps.LEXICAL_THRESHOLD, "reason": reason}

    def _semantic_unavailable(self) -> str | None:
        if not self.embedder.enabled:
            return f"MEMORY_EMBEDDER={self.embedder.model_id}: no embedder"
        if not self.gate.usable():
            return f"the embedder is not ready ({self.embedder.status().get('state')})"
        return None

    def _embed(self, texts: list[str]) -> np.ndarray:
        return self.embedder.embed_documents(texts)

    def _describe(self, group: gaps.Group, section: str) -> dict[str, Any]:
        return {"id": group_id(section, group.representative), **gaps.describe(group, section, clock.isoformat)}

    def _label_retired(self, profile: ProfileRef, groups: list[dict[str, Any]]) -> None:
        """Each group's retired facts: the RETIRED_FACTS_SHOWN most matched, with their title and status now."""
        for g in groups:
            g["retired_facts"] = g["retired_facts"][:RETIRED_FACTS_SHOWN]
        uids = sorted({f["uid"] for g in groups for f in g["retired_facts"]})
        labels = self.reader.fact_labels(profile.id, uids) if uids else {}
        for g in groups:
            for fact in g["retired_facts"]:
                title, status = labels.get(fact["uid"], (None, None))
                fact["title"], fact["status"] = title, status

