"""The bodies of the query-log summary and the store's stats, built once (docs/reviewers.md, "The summary" and
"The stats").

Pure: both sources of these answers, the canonical store's SQL aggregates (domain/querylog.py, domain/stats.py)
and the OpenSearch mirror's aggregations (search/opensearch/summary.py), hand their counts here, so the two
answers cannot differ in shape, key order, window or the days they fill with zeros.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date, timedelta
from typing import Any

from service.contract import BUCKET_LABELS, KINDS, STATUSES


def status_totals(counts: Mapping[tuple[str, str], int]) -> dict[str, int]:
    """Facts per status, from counts per (status, kind)."""
    return {status: sum(n for (s, _), n in counts.items() if s == status) for status in STATUSES}


def active_kinds(counts: Mapping[tuple[str, str], int]) -> dict[str, int]:
    """Active facts per kind, every kind (0 when none), from counts per (status, kind)."""
    return {kind: counts.get(("active", kind), 0) for kind in KINDS}


def window_days(first: date, last: date) -> list[str]:
    """Every day of the window, oldest first, as ISO dates (the `date` of each `daily` item)."""
    return [(first + timedelta(days=i)).isoformat() for i in range((last - first).days + 1)]


def daily(first: date, last: date, **series: Mapping[str, int]) -> list[dict[str, Any]]:
    """One item per day of the window, quiet days included: {"date", <each series' name>: its count or 0}."""
    return [{"date": day, **{name: int(counts.get(day, 0)) for name, counts in series.items()}}
            for day in window_days(first, last)]


def top_fact_order(item: tuple[str, int, str]) -> tuple[int, str, str]:
    """The order of the summary's top_facts, (uid, count, title) each: count descending, ties by name -- the
    fact's title, seed-spec's "short name of the fact" -- then by uid (two facts of one title).
    service.store.aggregates.top_facts orders by the same in SQL."""
    uid, count, title = item
    return -count, title, uid


def summary_body(*, profile: str, days: int, first: date, last: date, totals: Mapping[str, int],
                 searches_daily: Mapping[str, int], zero_match_daily: Mapping[str, int],
                 bucket_counts: Mapping[str, int], top_queries: Iterable[tuple[str, int, int]],
                 top_tags: Iterable[tuple[str, int]], top_facts: Iterable[tuple[str, int, str]]) -> dict[str, Any]:
    """GET /api/{profile}/queries/summary. `totals` has searches, zero_match, unknown_matched, distinct_queries
    and retired_only; the daily series and bucket counts are keyed by ISO date and bucket label (a missing key
    counts 0); the top lists come ordered (count descending, ties by name) as (name, count[, extra])."""
    return {
        "profile": profile,
        "days": days,
        "from": first.isoformat(),
        "to": last.isoformat(),
        "totals": {key: int(totals[key])
                   for key in ("searches", "zero_match", "unknown_matched", "distinct_queries", "retired_only")},
        "daily": daily(first, last, searches=searches_daily, zero_match=zero_match_daily),
        "match_buckets": [{"label": label, "count": int(bucket_counts.get(label, 0))} for label in BUCKET_LABELS],
        "top_queries": [{"query": q, "count": int(n), "zero_match": int(z)} for q, n, z in top_queries],
        "top_tags": [{"tag": t, "count": int(n)} for t, n in top_tags],
        "top_facts": [{"uid": u, "count": int(n), "title": title} for u, n, title in top_facts],
    }


def stats_body(*, profile: str, days: int, first: date, last: date, by_status: Mapping[str, int],
               active_kinds: Mapping[str, int], top_tags: Iterable[tuple[str, int]],
               created_daily: Mapping[str, int], retired_daily: Mapping[str, int],
               oldest: str | None, newest: str | None) -> dict[str, Any]:
    """GET /api/{profile}/stats: facts per status, active facts per kind (every kind, 0 when none), the top
    tags of active facts, facts created and retired per day of the window, and the span (ISO timestamps)."""
    return {
        "profile": profile,
        "days": days,
        "facts": int(by_status.get("active", 0)),
        "retired": int(by_status.get("retired", 0)),
        "superseded": int(by_status.get("superseded", 0)),
        "kinds": {kind: int(active_kinds.get(kind, 0)) for kind in KINDS},
        "top_tags": [{"tag": t, "count": int(n)} for t, n in top_tags],
        "daily": daily(first, last, created=created_daily, retired=retired_daily),
        "oldest": oldest,
        "newest": newest,
    }
