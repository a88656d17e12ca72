"""Summary, listing cap and stats over data seeded through the domain layer across several days."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from service import clock
from service.container import Services
from service.domain.models import Fact, ScoredFact
from service.domain.ports import SearchHits, SearchRequest
from tests.conftest import ProfileAccess

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)


def at(monkeypatch: pytest.MonkeyPatch, moment: datetime) -> None:
    monkeypatch.setattr(clock, "utcnow", lambda: moment)
    monkeypatch.setattr("service.domain.facts.utcnow", lambda: moment)


def fake_fact(uid: str) -> ScoredFact:
    fact = Fact(uid=uid, title=uid, text="t", kind="project", tags=[], status="active", created_at=NOW,
                updated_at=NOW, retired_at=None, retire_reason=None, supersedes=None, superseded_by=None)
    return ScoredFact(fact=fact, score=1.0)


def log(services: Services, profile_name: str, query: str, matched: int | None, *, top: str | None = None,
        tags: tuple[str, ...] = (), inactive: int | None = 0) -> None:
    profile = services.profiles.get(profile_name)
    request = SearchRequest(profile_id=profile.id, profile=profile.name, query=query, limit=8, tags=tags)
    returned = [fake_fact(top)] if top else []
    found = SearchHits(matched_count=matched, inactive_matched=inactive, hits=[], mode="lexical")
    services.query_log.record(profile, request=request, found=found, returned=returned, latency_ms=1.0)


def test_summary_counts_exactly(services: Services, alpha: ProfileAccess, beta: ProfileAccess,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    profile = services.profiles.get("alpha")
    at(monkeypatch, NOW - timedelta(days=3))
    fact_a = services.facts.write(profile, title="Alpha fact", text="a", kind="project", tags=[]).fact
    fact_b = services.facts.write(profile, title="Beta fact", text="b", kind="project", tags=[]).fact
    # Older than a 7-day window: must not count.
    at(monkeypatch, NOW - timedelta(days=10))
    log(services, "alpha", "ancient", 0)
    # Three days ago: two searches.
    at(monkeypatch, NOW - timedelta(days=3, hours=2))
    log(services, "alpha", "deploy window", 3, top=fact_a.uid, tags=("ops", "ci"))
    log(services, "alpha", "unknown thing", 0, tags=("ops",))
    # Yesterday: a degraded search (null) and a miss that only retired facts would have answered.
    at(monkeypatch, NOW - timedelta(days=1))
    log(services, "alpha", "deploy window", None, top=fact_b.uid, inactive=None)
    log(services, "alpha", "old staging host", 0, inactive=2)
    # Today.
    at(monkeypatch, NOW)
    log(services, "alpha", "deploy window", 1, top=fact_a.uid, tags=("ci",))
    log(services, "alpha", "many", 25, top=fact_b.uid)
    log(services, "alpha", "some", 6, top=fact_b.uid)
    log(services, "beta", "beta's own search", 0)  # another profile: never counted

    services.facts.update(profile, fact_a.uid, title="Alpha fact renamed")  # top_facts shows current title
    summary = services.query_log.summary(profile, days=7)

    assert (summary["from"], summary["to"], summary["days"]) == ("2026-11-16", "2026-11-22", 7)
    assert summary["totals"] == {"searches": 7, "zero_match": 2, "unknown_matched": 1, "distinct_queries": 5,
                                 "retired_only": 1}
    assert [(d["date"], d["searches"], d["zero_match"]) for d in summary["daily"]] == [
        ("2026-11-16", 0, 0), ("2026-11-17", 0, 0), ("2026-11-18", 0, 0), ("2026-11-19", 2, 1),
        ("2026-11-20", 0, 0), ("2026-11-21", 2, 1), ("2026-11-22", 3, 0),
    ]
    buckets = [(b["label"], b["count"]) for b in summary["match_buckets"]]
    assert buckets == [("0", 2), ("1", 1), ("2-5", 1), ("6-20", 1), ("21+", 1)]
    assert sum(n for _, n in buckets) + summary["totals"]["unknown_matched"] == summary["totals"]["searches"]
    assert summary["top_queries"][0] == {"query": "deploy window", "count": 3, "zero_match": 0}
    # ties (count 1) by query ascending
    assert [q["query"] for q in summary["top_queries"][1:]] == [
        "many", "old staging host", "some", "unknown thing"
    ]
    assert summary["top_tags"] == [{"tag": "ci", "count": 2}, {"tag": "ops", "count": 2}]
    assert summary["top_facts"] == [
        {"uid": fact_b.uid, "count": 3, "title": "Beta fact"},
        {"uid": fact_a.uid, "count": 2, "title": "Alpha fact renamed"},
    ]

    one_day = services.query_log.summary(profile, days=1)
    assert one_day["totals"]["searches"] == 3 and len(one_day["daily"]) == 1
    wide = services.query_log.summary(profile, days=365)
    assert wide["totals"]["searches"] == 8 and len(wide["daily"]) == 365


def test_top_facts_ties_go_by_title_then_uid(services: Services, alpha: ProfileAccess) -> None:
    """Ties by name: the fact's title (its "short name"), not its uid -- also across the tenth place, where the
    title decides which tied facts are shown -- and two facts of one title by uid."""
    profile = services.profiles.get("alpha")
    titles = [f"Fact {n:02d}" for n in range(12, 0, -1)] + ["Fact 05"]  # written in reverse; one title twice
    uids = [services.facts.write(profile, title=t, text=f"text {i}", kind="project", tags=[]).fact.uid
            for i, t in enumerate(titles)]
    for uid in uids:
        log(services, "alpha", f"who is {uid}", 1, top=uid)
    log(services, "alpha", "again", 1, top=uids[0])  # Fact 12, twice: first
    expected = [(uids[0], 2, "Fact 12")] + sorted(((u, 1, t) for u, t in zip(uids[1:], titles[1:])),
                                                  key=lambda item: (item[2], item[0]))[:9]
    summary = services.query_log.summary(profile, days=7)
    assert [(f["uid"], f["count"], f["title"]) for f in summary["top_facts"]] == expected
    assert [f["title"] for f in summary["top_facts"]][1:] == [
        "Fact 01", "Fact 02", "Fact 03", "Fact 04", "Fact 05", "Fact 05", "Fact 06", "Fact 07", "Fact 08"]


def test_empty_profile_summary_and_stats(services: Services, alpha: ProfileAccess) -> None:
    profile = services.profiles.get("alpha")
    summary = services.query_log.summary(profile)
    assert summary["totals"] == {"searches": 0, "zero_match": 0, "unknown_matched": 0, "distinct_queries": 0,
                                 "retired_only": 0}
    assert len(summary["daily"]) == 30 and all(d["searches"] == 0 for d in summary["daily"])
    assert [b["count"] for b in summary["match_buckets"]] == [0, 0, 0, 0, 0]
    assert summary["top_queries"] == summary["top_tags"] == summary["top_facts"] == []
    stats = services.stats.stats(profile)
    assert (stats["facts"], stats["retired"], stats["superseded"]) == (0, 0, 0)
    assert stats["kinds"] == {k: 0 for k in ("user", "preference", "project", "reference", "research", "decision")}
    assert stats["oldest"] is None and stats["newest"] is None and stats["top_tags"] == []
    assert len(stats["daily"]) == 30


def test_listing_is_capped_to_the_newest(services: Services, alpha: ProfileAccess) -> None:
    profile = services.profiles.get("alpha")
    for i in range(600):
        log(services, "alpha", f"query {i:03d}", i % 3)
    rows = services.query_log.listing(profile, 500)
    assert len(rows) == 500
    assert rows[0]["query"] == "query 599" and rows[-1]["query"] == "query 100"
    assert [r["id"] for r in rows] == sorted((r["id"] for r in rows), reverse=True)
    assert len(services.query_log.listing(profile)) == 50


def test_stats_shape(services: Services, alpha: ProfileAccess, monkeypatch: pytest.MonkeyPatch) -> None:
    profile = services.profiles.get("alpha")
    kinds = ("user", "preference", "project", "reference", "research", "decision")
    uids = {}
    at(monkeypatch, NOW - timedelta(days=2))
    for i, kind in enumerate(kinds):
        uids[kind] = services.facts.write(profile, title=f"{kind} fact", text=f"text {i}", kind=kind,
                                          tags=["shared", kind]).fact.uid
    at(monkeypatch, NOW - timedelta(days=1))
    services.facts.forget(profile, uids["user"], reason="moved on")
    at(monkeypatch, NOW)
    services.facts.update(profile, uids["project"], text="text 2, revised")
    stats = services.stats.stats(profile, days=3)
    assert (stats["facts"], stats["retired"], stats["superseded"]) == (5, 1, 1)
    assert stats["kinds"] == {"user": 0, "preference": 1, "project": 1, "reference": 1, "research": 1,
                              "decision": 1}
    assert stats["top_tags"][0] == {"tag": "shared", "count": 5}
    assert {t["tag"] for t in stats["top_tags"][1:]} == {"preference", "project", "reference", "research",
                                                         "decision"}
    assert [(d["date"], d["created"], d["retired"]) for d in stats["daily"]] == [
        ("2026-11-20", 6, 0), ("2026-11-21", 0, 1), ("2026-11-22", 1, 0)
    ]
    assert stats["oldest"].startswith("2026-11-20") and stats["newest"].startswith("2026-11-22")
