"""Query-log accounting: recording each search, the capped listing, one row, and the summary.

Rules (docs/reviewers.md, "The summary"):
- zero_match counts rows with matched_count 0 (searches that handed the caller nothing);
- rows with matched_count null count in unknown_matched only, never as misses;
- match_buckets "0", "1", "2-5", "6-20", "21+" cover known counts, so buckets + unknown_matched = searches;
- retired_only counts misses (matched_count 0) where retired or superseded facts would have matched;
- daily has one item per day of the window, quiet days included;
- top lists: at most 10, count descending, ties by name ascending.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from service import clock
from service.contract import BUCKET_LABELS, DAYS_DEFAULT, DAYS_MAX, LISTING_DEFAULT, LISTING_MAX
from service.domain import reports, validation
from service.domain.models import ScoredFact
from service.domain.ports import AggregateMirror, SearchHits, SearchRequest, Sourced
from service.domain.ports.canonical import BUCKET_COUNTERS, COUNTERS, CanonicalStore
from service.domain.ports.records import QueryLogRecord
from service.domain.profiles import ProfileRef
from service.errors import NotFound

BUCKETS = BUCKET_LABELS


def sourced(mirror: Callable[[ProfileRef, int, Callable[[], dict[str, Any]]], Sourced] | None, profile: ProfileRef,
            days: int, canonical: Callable[[ProfileRef, int], dict[str, Any]]) -> Sourced:
    """An aggregate from the search backend's mirror when it has one (`mirror`: one of an AggregateMirror's
    methods, given the canonical answer to fall back on), else the canonical answer itself."""
    days = validation.bounded_int(days, low=1, high=DAYS_MAX, param="days")
    if mirror is not None:
        return mirror(profile, days, lambda: canonical(profile, days))
    return Sourced(canonical(profile, days))


def _score(value: float | None) -> float | None:
    return None if value is None else round(float(value), 6)


def row_to_dict(row: QueryLogRecord, results: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": row.id,
        "query": row.query,
        "tags": list(row.tags or []),
        "kind": row.kind,
        "limit": row.limit,
        "matched_count": row.matched_count,
        "returned_count": row.returned_count,
        "top_uid": row.top_uid,
        "inactive_matched": row.inactive_matched,
        "mode": row.mode,
        "latency_ms": round(row.latency_ms, 3),
        "created_at": clock.isoformat(row.created_at),
        "since": clock.isoformat(row.window_since),
        "until": clock.isoformat(row.window_until),
    }
    if results is not None:
        out["results"] = results
    return out


class QueryLog:
    def __init__(self, store: CanonicalStore, mirror: AggregateMirror | None = None) -> None:
        self.store = store
        self.mirror = mirror  # the search backend's, when it has one (Capabilities.aggregates)

    def record(
        self,
        profile: ProfileRef,
        *,
        request: SearchRequest,
        found: SearchHits,
        returned: list[ScoredFact],
        latency_ms: float,
    ) -> int:
        now = clock.utcnow()
        results: list[dict[str, object]] = [
            {"uid": s.fact.uid, "score": _score(s.score), "lexical": _score(s.lexical), "vector": _score(s.vector)}
            for s in returned
        ]
        return self.store.log_search({
            "profile_id": profile.id, "query": request.query, "tags": list(request.tags), "kind": request.kind,
            "limit": request.limit, "matched_count": found.matched_count, "returned_count": len(returned),
            "inactive_matched": found.inactive_matched, "top_uid": returned[0].fact.uid if returned else None,
            "mode": found.mode, "latency_ms": latency_ms, "created_at": now, "day": now.date(),
            "window_since": request.window.since, "window_until": request.window.until,
        }, results, list(found.inactive_uids))

    def listing(self, profile: ProfileRef, limit: int = LISTING_DEFAULT) -> list[dict[str, Any]]:
        limit = validation.bounded_int(limit, low=1, high=LISTING_MAX, param="limit")
        with self.store.read() as uow:
            rows = uow.query_log.newest(profile.id, limit)
        return [row_to_dict(r) for r in rows]

    def get(self, profile: ProfileRef, query_id: int) -> dict[str, Any]:
        with self.store.read() as uow:
            row = uow.query_log.get(profile.id, query_id)
            if row is None:
                raise NotFound(f"no query-log row {query_id} in this profile", param="query_id")
            stored = uow.query_log.results_of(query_id)
            once_known = list(stored.inactive_uids or []) if stored is not None else []
            facts = uow.facts.by_uids(profile.id, once_known) if once_known else {}
        out = row_to_dict(row, list(stored.results) if stored is not None else [])
        # What memory once knew: the retired/superseded facts this search matched, as they are now.
        out["inactive_matches"] = [{"uid": uid, "title": facts[uid].title, "status": facts[uid].status}
                                   for uid in once_known if uid in facts]
        return out

    def sourced_summary(self, profile: ProfileRef, days: int) -> Sourced:
        """The summary from the search backend's mirror when it has one (MEMORY_SEARCH=opensearch), else
        from the canonical store."""
        return sourced(self.mirror.query_summary if self.mirror else None, profile, days, self.summary)

    def summary(self, profile: ProfileRef, days: int = DAYS_DEFAULT) -> dict[str, Any]:
        days = validation.bounded_int(days, low=1, high=DAYS_MAX, param="days")
        first, last = clock.window(days)
        with self.store.read() as uow:
            agg = uow.aggregates
            per_day = agg.summary_by_day(profile.id, first, last)
            queries, distinct_queries = agg.top_queries(profile.id, first, last)
            tags = agg.top_query_tags(profile.id, first, last)
            facts = agg.top_facts(profile.id, first, last)
        totals = {key: sum(day[key] for day in per_day.values()) for key in COUNTERS}
        buckets = [totals["zero_match"], *(totals[name] for name in BUCKET_COUNTERS)]
        return reports.summary_body(
            profile=profile.name, days=days, first=first, last=last,
            totals={**totals, "distinct_queries": distinct_queries},
            searches_daily={d.isoformat(): c["searches"] for d, c in per_day.items()},
            zero_match_daily={d.isoformat(): c["zero_match"] for d, c in per_day.items()},
            bucket_counts=dict(zip(BUCKETS, buckets)), top_queries=queries, top_tags=tags, top_facts=facts)
