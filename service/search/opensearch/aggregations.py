"""Aggregation request bodies for the query-log summary and the store's stats (pure functions).

Windows are whole UTC days [first, last]: a range filter gte first, lt last + 1 day, and a date_histogram
by calendar day in UTC with min_doc_count 0 and extended_bounds over the window, so quiet days are buckets
too. Dates are sent in the format the request declares (yyyy-MM-dd): bounds in another format are refused.
Top lists order by count descending, then key ascending (byte order, as the canonical store's C collation).
distinct_queries is counted exactly, by paging a composite aggregation (cardinality is approximate).
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from service.contract import MATCH_BUCKETS, TOP_N, FactStatus

SHARD_SIZE = 1000  # candidates per shard for the top lists; exact with one shard, near-exact beyond
COMPOSITE_PAGE = 1000
DAY_FORMAT = "yyyy-MM-dd"
TOP_ORDER = [{"_count": "desc"}, {"_key": "asc"}]
# contract.MATCH_BUCKETS as range aggregation buckets ("to" is exclusive; bucket "0" has no "from").
MATCH_RANGES = [
    {"key": label, **({"from": low} if low else {}), **({"to": high + 1} if high is not None else {})}
    for label, low, high in MATCH_BUCKETS
]
ZERO_MATCH = {"term": {"matched_count": 0}}


def window(field: str, first: date, last: date) -> dict[str, Any]:
    return {
        "range": {
            field: {
                "gte": first.isoformat(),
                "lt": (last + timedelta(days=1)).isoformat(),
                "format": DAY_FORMAT,
                "time_zone": "UTC",
            }
        }
    }


def daily(field: str, first: date, last: date) -> dict[str, Any]:
    return {
        "date_histogram": {
            "field": field,
            "calendar_interval": "day",
            "time_zone": "UTC",
            "format": DAY_FORMAT,
            "min_doc_count": 0,
            "extended_bounds": {"min": first.isoformat(), "max": last.isoformat()},
        }
    }


def top(field: str, size: int = TOP_N) -> dict[str, Any]:
    return {"terms": {"field": field, "size": size, "shard_size": SHARD_SIZE, "order": TOP_ORDER}}


def _profile(profile_id: int) -> dict[str, Any]:
    return {"term": {"profile_id": str(profile_id)}}


def summary(profile_id: int, first: date, last: date) -> dict[str, Any]:
    """Everything of the summary but distinct_queries, in one request over the profile's window."""
    return {
        "size": 0,
        "track_total_hits": True,
        "query": {"bool": {"filter": [_profile(profile_id), window("created_at", first, last)]}},
        "aggs": {
            "daily": {**daily("created_at", first, last), "aggs": {"zero_match": {"filter": ZERO_MATCH}}},
            "zero_match": {"filter": ZERO_MATCH},
            "unknown_matched": {"missing": {"field": "matched_count"}},
            "retired_only": {
                "filter": {"bool": {"filter": [ZERO_MATCH, {"range": {"inactive_matched": {"gt": 0}}}]}}
            },
            "match_buckets": {"range": {"field": "matched_count", "keyed": True, "ranges": MATCH_RANGES}},
            "top_queries": {**top("query.raw"), "aggs": {"zero_match": {"filter": ZERO_MATCH}}},
            "top_tags": top("tags"),
            # one more than shown: whether a tie crosses the last place (titles then decide: summary.py)
            "top_facts": top("top_uid", TOP_N + 1),
            "last_log_id": {"max": {"field": "log_id"}},
        },
    }


def distinct_queries(profile_id: int, first: date, last: date, after: dict[str, Any] | None = None
                     ) -> dict[str, Any]:
    """One page of the distinct query texts in the window; pass the previous page's after_key."""
    composite: dict[str, Any] = {
        "size": COMPOSITE_PAGE,
        "sources": [{"query": {"terms": {"field": "query.raw"}}}],
    }
    if after is not None:
        composite["after"] = after
    return {
        "size": 0,
        "query": {"bool": {"filter": [_profile(profile_id), window("created_at", first, last)]}},
        "aggs": {"distinct": {"composite": composite}},
    }


def stats(profile_id: int, first: date, last: date) -> dict[str, Any]:
    """The profile's shape from the facts index: statuses, active kinds and tags, per-day growth, span."""
    return {
        "size": 0,
        "track_total_hits": True,
        "query": {"bool": {"filter": [_profile(profile_id)]}},
        "aggs": {
            "status": {"terms": {"field": "status", "size": 10}},
            "active": {
                "filter": {"term": {"status": FactStatus.ACTIVE.value}},
                "aggs": {"kinds": {"terms": {"field": "kind", "size": 10}}, "top_tags": top("tags")},
            },
            "created": {"filter": window("created_at", first, last),
                        "aggs": {"daily": daily("created_at", first, last)}},
            "retired": {"filter": window("retired_at", first, last),
                        "aggs": {"daily": daily("retired_at", first, last)}},
            "oldest": {"top_hits": {"size": 1, "sort": [{"created_at": "asc"}, {"fact_id": "asc"}],
                                    "_source": ["created_at"]}},
            "newest": {"top_hits": {"size": 1, "sort": [{"created_at": "desc"}, {"fact_id": "desc"}],
                                    "_source": ["created_at"]}},
        },
    }
