"""The query-log summary and the store's stats from the mirror's aggregations, checked first.

Before an aggregate answer leaves, it is compared with the canonical store over the same window:
- summary: the number of query-log rows in the window and the largest row id (rows never change);
- stats: facts per status and active facts per kind, and no fact change still waiting in the outbox
  (an in-place amend changes tags or kind without changing any count).
On any difference the canonical answer is returned instead, marked `<db>; reason=mirror-lagging` (or
`mirror-unavailable` when the cluster cannot be asked); the decision is kept for /readyz.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import date
from typing import Any

from opensearchpy import OpenSearch

from service import clock
from service.contract import TOP_N
from service.domain import reports
from service.domain.models import ProfileRef
from service.domain.ports import Sourced
from service.domain.ports.sources import MirrorSource
from service.errors import BackendUnavailable
from service.search.opensearch import aggregations as aggs
from service.search.opensearch.documents import routing
from service.search.opensearch.client import translated
from service.search.opensearch.health import Health

Canonical_ = Callable[[], dict[str, Any]]


def _per_day(histogram: dict[str, Any], sub: str | None = None) -> dict[str, int]:
    """Counts per ISO day of a date histogram: the buckets' own, or those of their `sub` filter."""
    return {b["key_as_string"]: int(b[sub]["doc_count"] if sub else b["doc_count"]) for b in histogram["buckets"]}


def summary_body(response: dict[str, Any], distinct: int, top_facts: list[tuple[str, int, str]], *, profile: str,
                 days: int, first: date, last: date) -> dict[str, Any]:
    """The summary (domain/reports.py builds it, as for the canonical answer) from one aggregation response and
    the top facts with their titles (top_facts_of)."""
    a = response["aggregations"]
    return reports.summary_body(
        profile=profile, days=days, first=first, last=last,
        totals={"searches": int(response["hits"]["total"]["value"]), "distinct_queries": distinct,
                **{name: int(a[name]["doc_count"]) for name in ("zero_match", "unknown_matched", "retired_only")}},
        searches_daily=_per_day(a["daily"]), zero_match_daily=_per_day(a["daily"], "zero_match"),
        bucket_counts={label: int(b["doc_count"]) for label, b in a["match_buckets"]["buckets"].items()},
        top_queries=[(b["key"], b["doc_count"], b["zero_match"]["doc_count"]) for b in a["top_queries"]["buckets"]],
        top_tags=[(b["key"], b["doc_count"]) for b in a["top_tags"]["buckets"]],
        top_facts=top_facts)


def top_facts_of(buckets: list[dict[str, Any]], titles: dict[str, str]) -> list[tuple[str, int, str]] | None:
    """The top facts from the terms buckets of top_uid (count descending, TOP_N + 1 of them) and the facts'
    current titles, in reports.top_fact_order. None when a
    tie crosses the last place: which of the tied facts make the list then depends on titles the buckets
    beyond do not show, so the canonical list is the answer."""
    if len(buckets) > TOP_N and buckets[TOP_N]["doc_count"] == buckets[TOP_N - 1]["doc_count"]:
        return None
    shown = [(str(b["key"]), int(b["doc_count"]), titles.get(str(b["key"]), "")) for b in buckets[:TOP_N]]
    return sorted(shown, key=reports.top_fact_order)


def stats_body(response: dict[str, Any], *, profile: str, days: int, first: date, last: date) -> dict[str, Any]:
    """The stats (domain/reports.py builds them, as for the canonical answer) from one aggregation response."""
    a = response["aggregations"]

    def span(name: str) -> str | None:
        hits = a[name]["hits"]["hits"]
        return str(hits[0]["_source"]["created_at"]) if hits else None

    return reports.stats_body(
        profile=profile, days=days, first=first, last=last,
        by_status={b["key"]: int(b["doc_count"]) for b in a["status"]["buckets"]},
        active_kinds={b["key"]: int(b["doc_count"]) for b in a["active"]["kinds"]["buckets"]},
        top_tags=[(b["key"], b["doc_count"]) for b in a["active"]["top_tags"]["buckets"]],
        created_daily=_per_day(a["created"]["daily"]), retired_daily=_per_day(a["retired"]["daily"]),
        oldest=span("oldest"), newest=span("newest"))


class MirrorAggregates:
    def __init__(self, client: OpenSearch, canonical: MirrorSource, health: Health, facts_alias: str,
                 queries_alias: str) -> None:
        self.client = client
        self.facts_alias, self.queries_alias = facts_alias, queries_alias
        self.canonical = canonical
        self.health = health
        self.fallback_name = "postgres" if canonical.dialect == "postgresql" else canonical.dialect
        self._lock = threading.Lock()
        self.decisions: dict[str, dict[str, Any]] = {}

    def query_summary(self, profile: ProfileRef, days: int, canonical: Canonical_) -> Sourced:
        first, last = clock.window(days)
        try:
            self._reachable()
            with translated("summary"):
                response = self.client.search(index=self.queries_alias, body=aggs.summary(profile.id, first, last),
                                              routing=routing(profile.id))
            distinct = self._distinct(profile.id, first, last)
        except BackendUnavailable as exc:
            return self._canonical(profile, "summary", canonical, "mirror-unavailable", str(exc))
        rows, top_id = self.canonical.query_window(profile.id, first, last)
        mirrored = int(response["hits"]["total"]["value"])
        value = response["aggregations"]["last_log_id"]["value"]
        mirrored_top = None if value is None else int(value)
        if (rows, top_id) != (mirrored, mirrored_top):
            detail = f"canonical {rows} searches (last id {top_id}), mirror {mirrored} (last id {mirrored_top})"
            return self._canonical(profile, "summary", canonical, "mirror-lagging", detail)
        buckets = response["aggregations"]["top_facts"]["buckets"]
        top_facts = top_facts_of(buckets, self.canonical.titles(profile.id, [b["key"] for b in buckets[:TOP_N]]))
        if top_facts is None:
            top_facts = self.canonical.top_facts(profile.id, first, last)
        body = summary_body(response, distinct, top_facts, profile=profile.name, days=days, first=first, last=last)
        return self._mirror(profile, "summary", body)

    def store_stats(self, profile: ProfileRef, days: int, canonical: Canonical_) -> Sourced:
        first, last = clock.window(days)
        try:
            self._reachable()
            with translated("stats"):
                response = self.client.search(index=self.facts_alias, body=aggs.stats(profile.id, first, last),
                                              routing=routing(profile.id))
        except BackendUnavailable as exc:
            return self._canonical(profile, "stats", canonical, "mirror-unavailable", str(exc))
        body = stats_body(response, profile=profile.name, days=days, first=first, last=last)
        counts = self.canonical.fact_counts(profile.id)
        expected = reports.status_totals(counts)
        seen = {"active": body["facts"], "retired": body["retired"], "superseded": body["superseded"]}
        kinds = reports.active_kinds(counts)
        pending = self.canonical.pending_of(profile.id, "fact")
        if expected != seen or kinds != body["kinds"] or pending:
            detail = f"canonical {expected} {kinds}, mirror {seen} {body['kinds']}, {pending} fact changes pending"
            return self._canonical(profile, "stats", canonical, "mirror-lagging", detail)
        return self._mirror(profile, "stats", body)

    def report(self) -> dict[str, Any]:
        with self._lock:
            return {name: dict(d) for name, d in self.decisions.items()}

    # --- helpers ----------------------------------------------------------------------------------

    def _reachable(self) -> None:
        if not self.health.usable():
            raise BackendUnavailable(f"opensearch, a moment ago: {self.health.report()['last_error']}")

    def _distinct(self, profile_id: int, first: date, last: date) -> int:
        """Exact number of distinct query texts: every page of the composite aggregation."""
        count, after = 0, None
        while True:
            with translated("distinct queries"):
                page = self.client.search(index=self.queries_alias, routing=routing(profile_id),
                                          body=aggs.distinct_queries(profile_id, first, last, after))
            found = page["aggregations"]["distinct"]
            count += len(found["buckets"])
            after = found.get("after_key")
            if not found["buckets"] or after is None or len(found["buckets"]) < aggs.COMPOSITE_PAGE:
                return count

    def _mirror(self, profile: ProfileRef, what: str, body: dict[str, Any]) -> Sourced:
        self._decide(profile, what, {"source": "opensearch"})
        return Sourced(body, "opensearch")

    def _canonical(self, profile: ProfileRef, what: str, canonical: Canonical_, reason: str, detail: str) -> Sourced:
        self._decide(profile, what, {"source": self.fallback_name, "reason": reason, "detail": detail[:300]})
        return Sourced(canonical(), self.fallback_name, reason)

    def _decide(self, profile: ProfileRef, what: str, decision: dict[str, Any]) -> None:
        with self._lock:
            self.decisions.setdefault(profile.name, {})[what] = {**decision, "at": clock.isoformat(clock.utcnow())}
