"""Summary and stats from the mirror's aggregations (osmem, and a real OpenSearch when there is one),
checked against the canonical store first: daily buckets with quiet days, exact top lists and distinct
count, and the fallback (with its header) when the mirror lags."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from opensearchpy import OpenSearch

from service import clock
from service.api.app import create_app
from service.container import Services
from service.store import changes
from service.domain.profiles import ProfileRef
from service.search.opensearch import aggregations as aggs
from service.search.opensearch.backend import OpenSearchBackend
from service.store.tables import QueryLogRow, QueryLogTag
from tests.conftest import make_profile
from tests.opensearch.conftest import settle

# (days ago, query, matched_count, inactive_matched, tags, top fact title or None)
LOG = [
    (0, "deploy kubernetes", 2, 0, ["infra"], "Deploys"),
    (0, "deploy kubernetes", 1, 0, ["infra"], "Deploys"),
    (0, "grafana url", 0, 1, [], None),
    (1, "deploy kubernetes", 0, 0, [], None),
    (1, "pytest", None, None, ["testing"], "Pytest"),
    (3, "a" * 900 + " very long query", 7, 0, ["infra", "testing"], "Pytest"),
    (3, "zeta", 25, 0, [], "Deploys"),
    (3, "alpha", 1, 0, [], "Pytest"),
    (6, "old one", 3, 0, [], None),
    (9, "outside the window", 0, 0, ["infra"], None),
]


def seed_log(services: Services, profile: ProfileRef, rows: list[tuple[Any, ...]], uids: dict[str, str],
             *, outbox: bool = True) -> None:
    """Query-log rows on past days, written as QueryLog.record would (with outbox rows, unless told not to)."""
    now = clock.utcnow()
    writer = changes.Outbox(enabled=outbox)
    with services.db.write() as session:
        for days_ago, query, matched, inactive, tags, top in rows:
            at = now - timedelta(days=days_ago)
            row = QueryLogRow(profile_id=profile.id, query=query, tags=tags, kind=None, limit=8,
                              matched_count=matched, returned_count=min(matched or 0, 8), inactive_matched=inactive,
                              top_uid=uids[top] if top else None, mode="lexical", latency_ms=1.0,
                              created_at=at, day=at.date())
            session.add(row)
            session.flush()
            for tag in tags:
                session.add(QueryLogTag(query_id=row.id, tag=tag, profile_id=profile.id, day=at.date()))
            changes.record(session, writer, profile.id, "query", row.id)


def setup_profile(services: Services) -> tuple[ProfileRef, dict[str, str]]:
    profile = services.profiles.create("alpha")
    uids = {
        "Deploys": services.facts.write(profile, title="Deploys", text="Argo CD", kind="project",
                                        tags=["infra"]).fact.uid,
        "Pytest": services.facts.write(profile, title="Pytest", text="fixtures", kind="preference",
                                       tags=["testing", "infra"]).fact.uid,
    }
    return profile, uids


def mirror(services: Services) -> OpenSearchBackend:
    assert isinstance(services.backend, OpenSearchBackend)
    return services.backend


def test_summary_from_the_mirror_equals_the_canonical_one(os_services: Services, monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    monkeypatch.setattr(aggs, "COMPOSITE_PAGE", 2)  # distinct_queries must page through every bucket
    profile, uids = setup_profile(os_services)
    seed_log(os_services, profile, LOG, uids)
    os_services.search.search(profile, "deploy kubernetes", tags=["infra"])  # today, through the real path
    settle(os_services)
    for days in (1, 2, 7, 30):
        answer = os_services.query_log.sourced_summary(profile, days)
        assert answer.source == "opensearch", days
        assert answer.body == os_services.query_log.summary(profile, days), days
    week = os_services.query_log.sourced_summary(profile, 7).body
    assert [d["searches"] for d in week["daily"]] == [1, 0, 0, 3, 0, 2, 4]  # quiet days are there
    assert week["totals"] == {"searches": 10, "zero_match": 3, "unknown_matched": 1, "distinct_queries": 7,
                              "retired_only": 1}
    assert week["top_queries"][0] == {"query": "deploy kubernetes", "count": 4, "zero_match": 2}
    assert week["top_tags"] == [{"tag": "infra", "count": 4}, {"tag": "testing", "count": 2}]
    assert week["top_facts"] == [  # a tie: by title
        {"uid": uids[t], "count": 3, "title": t} for t in ("Deploys", "Pytest")]
    assert {b["label"]: b["count"] for b in week["match_buckets"]} == {"0": 3, "1": 2, "2-5": 2, "6-20": 1, "21+": 1}


def test_top_facts_ties_go_by_title_on_the_mirror_too(os_services: Services) -> None:
    """Ties inside the list are ordered by title from the buckets; a tie across the tenth place (which titles
    decide) is answered with the canonical list. Either way the mirror's summary equals the canonical one."""
    services = os_services
    profile = services.profiles.create("alpha")
    titles = [f"Fact {n:02d}" for n in range(12, 0, -1)]  # written in reverse: uids and titles disagree
    uids = {t: services.facts.write(profile, title=t, text=f"text {t}", kind="project", tags=[]).fact.uid
            for t in titles}
    for shown, logged in ((8, titles[:8]), (10, titles[8:])):  # eight tied, then twelve
        seed_log(services, profile, [(0, f"who is {t}", 1, 0, [], t) for t in logged], uids)
        settle(services)
        answer = services.query_log.sourced_summary(profile, 7)
        assert answer.source == "opensearch"
        assert answer.body == services.query_log.summary(profile, 7)
        logged_so_far = titles[:8] if shown == 8 else titles
        assert [f["title"] for f in answer.body["top_facts"]] == sorted(logged_so_far)[:shown]
        assert all(f["uid"] == uids[f["title"]] and f["count"] == 1 for f in answer.body["top_facts"])


def test_a_lagging_mirror_answers_from_postgres_and_says_so(pg_os_services: Services, os_client: OpenSearch) -> None:
    services = pg_os_services
    access = make_profile(services, "alpha")
    profile = services.profiles.get("alpha")
    uids = {"Deploys": services.facts.write(profile, title="Deploys", text="Argo CD", kind="project",
                                            tags=["infra"]).fact.uid}
    seed_log(services, profile, [row for row in LOG if row[5] in (None, "Deploys")], uids)
    settle(services)
    with TestClient(create_app(services=services), base_url="http://127.0.0.1",
                    client=("127.0.0.1", 50000)) as client:  # a loopback caller: /readyz shows its details
        response = client.get("/api/alpha/queries/summary?days=7", headers=access.headers)
        assert response.headers["X-Memory-Source"] == "opensearch"
        in_step = response.json()

        # Rows the mirror has not received (their outbox rows wait): the totals disagree.
        seed_log(services, profile, [(0, "not mirrored yet", 0, 0, [], None)], uids)
        response = client.get("/api/alpha/queries/summary?days=7", headers=access.headers)
        assert response.headers["X-Memory-Source"] == "postgres; reason=mirror-lagging"
        assert response.json() == services.query_log.summary(profile, 7)
        assert response.json()["totals"]["searches"] == in_step["totals"]["searches"] + 1
        ready = client.get("/readyz").json()
        decision = ready["checks"]["search"]["aggregates"]["alpha"]["summary"]
        assert (decision["source"], decision["reason"]) == ("postgres", "mirror-lagging")

        settle(services)
        response = client.get("/api/alpha/queries/summary?days=7", headers=access.headers)
        assert response.headers["X-Memory-Source"] == "opensearch"
        assert response.json() == services.query_log.summary(profile, 7)

        # A mirror that lost a row (same count check, the other way round).
        os_client.delete(index=mirror(services).names.queries, id=str(_last_log_id(services)),
                         routing=str(profile.id), refresh=True)
        response = client.get("/api/alpha/queries/summary?days=7", headers=access.headers)
        assert response.headers["X-Memory-Source"] == "postgres; reason=mirror-lagging"


def _last_log_id(services: Services) -> int:
    with services.db.read() as session:
        from sqlmodel import col, select

        return int(session.exec(select(QueryLogRow.id).order_by(col(QueryLogRow.id).desc())).first() or 0)


def test_stats_from_the_mirror_are_checked_too(pg_os_services: Services, os_client: OpenSearch) -> None:
    services = pg_os_services
    access = make_profile(services, "alpha")
    profile = services.profiles.get("alpha")
    facts = [services.facts.write(profile, title=f"Fact {i}", text=f"text {i}", kind=kind, tags=tags).fact
             for i, (kind, tags) in enumerate([("project", ["infra"]), ("user", []), ("project", ["infra", "db"]),
                                               ("decision", ["db"])])]
    services.facts.forget(profile, facts[1].uid)
    services.facts.update(profile, facts[2].uid, text="new text")
    for days in (1, 30):
        answer = services.stats.sourced_stats(profile, days)
        assert answer.source == "opensearch"
        assert answer.body == services.stats.stats(profile, days)
    body = services.stats.sourced_stats(profile, 7).body
    assert (body["facts"], body["retired"], body["superseded"]) == (3, 1, 1)
    assert body["top_tags"] == [{"tag": "db", "count": 2}, {"tag": "infra", "count": 2}]
    assert body["daily"][-1] == {"date": clock.today().isoformat(), "created": 5, "retired": 1}

    # An amend whose delivery is still pending: same counts, different tags -> answered from Postgres.
    backend = mirror(services)
    backend.health.failed("simulated outage")  # changed() leaves the row to the worker
    services.facts.update(profile, facts[0].uid, tags=["renamed"])
    with TestClient(create_app(services=services), base_url="http://127.0.0.1",
                    client=("127.0.0.1", 50000)) as client:  # a loopback caller: /readyz shows its details
        response = client.get("/api/alpha/stats?days=7", headers=access.headers)
        assert response.headers["X-Memory-Source"] == "postgres; reason=mirror-unavailable"
        backend.health.ok()
        response = client.get("/api/alpha/stats?days=7", headers=access.headers)
        assert response.headers["X-Memory-Source"] == "postgres; reason=mirror-lagging"
        assert response.json()["top_tags"][-1] == {"tag": "renamed", "count": 1}
        settle(services)
        response = client.get("/api/alpha/stats?days=7", headers=access.headers)
        assert response.headers["X-Memory-Source"] == "opensearch"
        assert response.json() == services.stats.stats(profile, 7)
