"""The one builder of the summary and stats bodies (domain/reports.py): shape, key order, the window's
quiet days, and every bucket and kind present. Both sources (SQL aggregates and the OpenSearch mirror)
call it; tests/opensearch/test_aggregates.py checks that their answers are equal."""

from __future__ import annotations

import json
from datetime import date

from service.contract import BUCKET_LABELS, KINDS
from service.domain import reports

FIRST, LAST = date(2026, 3, 30), date(2026, 4, 2)


def test_summary_body_fills_the_window_and_keeps_the_documented_order() -> None:
    body = reports.summary_body(
        profile="alpha", days=4, first=FIRST, last=LAST,
        totals={"retired_only": 1, "searches": 5, "zero_match": 2, "unknown_matched": 1, "distinct_queries": 3,
                "b1": 9},  # counters the body does not show are left out
        searches_daily={"2026-03-31": 4, "2026-04-02": 1}, zero_match_daily={"2026-03-31": 2},
        bucket_counts={"0": 2, "6-20": 2}, top_queries=[("deploy", 3, 1), ("alpha", 1, 0)],
        top_tags=[("infra", 2)], top_facts=[("u1", 2, "Deploys")])
    assert json.dumps(body) == json.dumps({
        "profile": "alpha", "days": 4, "from": "2026-03-30", "to": "2026-04-02",
        "totals": {"searches": 5, "zero_match": 2, "unknown_matched": 1, "distinct_queries": 3, "retired_only": 1},
        "daily": [{"date": "2026-03-30", "searches": 0, "zero_match": 0},
                  {"date": "2026-03-31", "searches": 4, "zero_match": 2},
                  {"date": "2026-04-01", "searches": 0, "zero_match": 0},
                  {"date": "2026-04-02", "searches": 1, "zero_match": 0}],
        "match_buckets": [{"label": "0", "count": 2}, {"label": "1", "count": 0}, {"label": "2-5", "count": 0},
                          {"label": "6-20", "count": 2}, {"label": "21+", "count": 0}],
        "top_queries": [{"query": "deploy", "count": 3, "zero_match": 1}, {"query": "alpha", "count": 1, "zero_match": 0}],
        "top_tags": [{"tag": "infra", "count": 2}],
        "top_facts": [{"uid": "u1", "count": 2, "title": "Deploys"}],
    })
    assert [b["label"] for b in body["match_buckets"]] == list(BUCKET_LABELS)


def test_stats_body_lists_every_kind_and_fills_the_window() -> None:
    counts = {("active", "project"): 3, ("active", "user"): 1, ("retired", "project"): 2, ("superseded", "user"): 1}
    body = reports.stats_body(
        profile="alpha", days=4, first=FIRST, last=LAST, by_status=reports.status_totals(counts),
        active_kinds=reports.active_kinds(counts), top_tags=[("infra", 3), ("db", 1)],
        created_daily={"2026-03-30": 2}, retired_daily={"2026-04-02": 1},
        oldest="2026-01-01T00:00:00+00:00", newest="2026-04-02T10:00:00+00:00")
    assert json.dumps(body) == json.dumps({
        "profile": "alpha", "days": 4, "facts": 4, "retired": 2, "superseded": 1,
        "kinds": {kind: {"project": 3, "user": 1}.get(kind, 0) for kind in KINDS},
        "top_tags": [{"tag": "infra", "count": 3}, {"tag": "db", "count": 1}],
        "daily": [{"date": "2026-03-30", "created": 2, "retired": 0},
                  {"date": "2026-03-31", "created": 0, "retired": 0},
                  {"date": "2026-04-01", "created": 0, "retired": 0},
                  {"date": "2026-04-02", "created": 0, "retired": 1}],
        "oldest": "2026-01-01T00:00:00+00:00", "newest": "2026-04-02T10:00:00+00:00",
    })
    assert list(body["kinds"]) == list(KINDS)


def test_an_empty_store_has_zeros_and_no_span() -> None:
    body = reports.stats_body(profile="alpha", days=1, first=LAST, last=LAST, by_status={}, active_kinds={},
                              top_tags=[], created_daily={}, retired_daily={}, oldest=None, newest=None)
    assert (body["facts"], body["retired"], body["superseded"]) == (0, 0, 0)
    assert body["daily"] == [{"date": "2026-04-02", "created": 0, "retired": 0}]
    assert body["oldest"] is None and body["newest"] is None
