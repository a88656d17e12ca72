"""GET /api/{profile}/queries/gaps and /queries/gaps/{group} over a seeded log, on SQLite and PostgreSQL."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

import pytest
from fastapi.testclient import TestClient

from service import clock
from service.container import Services
from service.domain.ports import SearchHits, SearchRequest
from tests.conftest import ProfileAccess

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)
BAD_DAYS = ["0", "366", "-1", "x", "2.5", ""]


def at(monkeypatch: pytest.MonkeyPatch, moment: datetime) -> None:
    monkeypatch.setattr(clock, "utcnow", lambda: moment)
    monkeypatch.setattr("service.domain.facts.utcnow", lambda: moment)


def log(services: Services, profile: str, query: str, matched: int | None, *, inactive: int | None = 0,
        once_known: tuple[str, ...] = (), tags: tuple[str, ...] = (), kind: str | None = None) -> None:
    ref = services.profiles.get(profile)
    request = SearchRequest(profile_id=ref.id, profile=ref.name, query=query, limit=8, tags=tags, kind=kind)
    found = SearchHits(matched_count=matched, inactive_matched=inactive, hits=[], mode="lexical",
                       inactive_uids=list(once_known))
    services.query_log.record(ref, request=request, found=found, returned=[], latency_ms=1.0)


@pytest.fixture
def seeded(services: Services, alpha: ProfileAccess, beta: ProfileAccess,
           monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A log over ten days: two missed topics, one retired-only topic, hits, unknowns, and another profile."""
    profile = services.profiles.get("alpha")
    at(monkeypatch, NOW - timedelta(days=9))
    old = services.facts.write(profile, title="Old staging host", text="staging ran on host-7", kind="project",
                               tags=["ops"]).fact
    replaced = services.facts.write(profile, title="Staging host", text="staging runs on host-8", kind="project",
                                    tags=[]).fact
    services.facts.forget(profile, old.uid, reason="moved")
    services.facts.update(profile, replaced.uid, text="staging runs on host-9")
    at(monkeypatch, NOW - timedelta(days=40))  # outside a 30-day window
    log(services, "alpha", "deploy to staging", 0)
    at(monkeypatch, NOW - timedelta(days=6))
    log(services, "alpha", "deploy to staging", 0, tags=("ops",), kind="project")
    log(services, "alpha", "python version", 0)
    log(services, "alpha", "staging host", 0, inactive=2, once_known=(old.uid, replaced.uid))
    at(monkeypatch, NOW - timedelta(days=2))
    log(services, "alpha", "Deploying to staging?", 0, tags=("ops", "ci"))
    log(services, "alpha", "staging deploy steps", 0)
    log(services, "alpha", "which python version do we use", 0, kind="project")
    log(services, "alpha", "old staging host", 0, inactive=1, once_known=(old.uid,))
    log(services, "alpha", "deploy to staging", 2)  # a hit: never a gap
    log(services, "alpha", "deploy to staging", None, inactive=None)  # unknown: never a gap
    log(services, "beta", "deploy to staging", 0)  # another profile
    at(monkeypatch, NOW)
    log(services, "alpha", "deploy to staging", 0, inactive=None)  # a miss whose inactive count is unknown
    return {"old": old.uid, "replaced": replaced.uid}


def get(client: TestClient, who: ProfileAccess, path: str = "/api/alpha/queries/gaps", **params: object
        ) -> dict:  # type: ignore[type-arg]
    response = client.get(path, params=params, headers=who.headers)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def test_gap_report_groups_the_window_misses(client: TestClient, alpha: ProfileAccess, seeded: dict[str, str]
                                             ) -> None:
    body = get(client, alpha, days=30)
    assert (body["profile"], body["days"], body["from"], body["to"]) == ("alpha", 30, "2026-10-24", "2026-11-22")
    assert body["grouping"]["method"] == "lexical" and "MEMORY_EMBEDDER=none" in body["grouping"]["reason"]
    zero = body["zero_match"]
    assert (zero["searches"], zero["distinct_queries"], zero["grouped_queries"], zero["grouped_searches"],
            zero["capped"]) == (6, 5, 5, 6, False)
    deploy, python = zero["groups"]
    assert deploy["representative"] == "deploy to staging" and deploy["count"] == 4
    assert deploy["queries"] == [{"query": "deploy to staging", "count": 2},
                                 {"query": "Deploying to staging?", "count": 1},
                                 {"query": "staging deploy steps", "count": 1}]
    assert deploy["first_seen"] == clock.isoformat(NOW - timedelta(days=6))
    assert deploy["last_seen"] == clock.isoformat(NOW)
    assert deploy["tags"] == [{"tag": "ops", "count": 2}, {"tag": "ci", "count": 1}]
    assert deploy["kinds"] == [{"kind": "project", "count": 1}]
    assert "retired_facts" not in deploy
    assert python["queries"] == [{"query": "python version", "count": 1},
                                 {"query": "which python version do we use", "count": 1}]
    assert python["kinds"] == [{"kind": "project", "count": 1}] and python["tags"] == []

    retired = body["retired_only"]
    assert (retired["searches"], retired["distinct_queries"]) == (2, 2)
    [group] = retired["groups"]
    assert {q["query"] for q in group["queries"]} == {"staging host", "old staging host"}
    assert group["retired_facts"] == [
        {"uid": seeded["old"], "count": 2, "title": "Old staging host", "status": "retired"},
        {"uid": seeded["replaced"], "count": 1, "title": "Staging host", "status": "superseded"},
    ]


def test_gap_totals_agree_with_the_summary(client: TestClient, alpha: ProfileAccess, seeded: dict[str, str]) -> None:
    for days in (1, 7, 30, 365):
        gaps_body = get(client, alpha, days=days)
        totals = get(client, alpha, "/api/alpha/queries/summary", days=days)["totals"]
        assert gaps_body["zero_match"]["searches"] + gaps_body["retired_only"]["searches"] == totals["zero_match"]
        assert gaps_body["retired_only"]["searches"] == totals["retired_only"]
        for section in ("zero_match", "retired_only"):
            assert sum(g["count"] for g in gaps_body[section]["groups"]) == gaps_body[section]["searches"]
    assert get(client, alpha, days=365)["zero_match"]["searches"] == 7  # the 40-day-old miss is in


def test_same_log_same_report(client: TestClient, alpha: ProfileAccess, seeded: dict[str, str]) -> None:
    assert get(client, alpha, days=30) == get(client, alpha, days=30)


def test_order_of_rows_does_not_change_the_groups(services: Services, client: TestClient, alpha: ProfileAccess,
                                                  beta: ProfileAccess, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same multiset of searches logged in two different orders (two profiles) gives the same groups."""
    at(monkeypatch, NOW - timedelta(days=1))
    searches = ["redis ttl", "redis key ttl", "ttl of redis keys", "backup schedule", "database backup schedule",
                "grafana url", "url of grafana", "oncall"] * 2 + ["redis ttl", "oncall"]
    for name, seed in (("alpha", 1), ("beta", 2)):
        shuffled = searches[:]
        random.Random(seed).shuffle(shuffled)
        for text in shuffled:
            log(services, name, text, 0)
    at(monkeypatch, NOW)

    def groups(who: ProfileAccess) -> list[dict]:  # type: ignore[type-arg]
        body = get(client, who, f"/api/{who.name}/queries/gaps", days=7)
        return [{k: g[k] for k in ("id", "representative", "count", "queries")} for g in body["zero_match"]["groups"]]

    assert groups(alpha) == groups(beta)
    # backup and grafana have 4 searches each: by representative
    assert [(g["representative"], g["count"]) for g in groups(alpha)] == [
        ("redis ttl", 7), ("backup schedule", 4), ("grafana url", 4), ("oncall", 3)]


def test_group_searches_lists_exactly_the_group(client: TestClient, alpha: ProfileAccess,
                                                seeded: dict[str, str]) -> None:
    report = get(client, alpha, days=30)
    deploy = report["zero_match"]["groups"][0]
    body = get(client, alpha, f"/api/alpha/queries/gaps/{deploy['id']}", days=30, limit=500)
    assert body["section"] == "zero_match" and body["group"] == deploy and body["total"] == 4
    assert [q["query"] for q in body["queries"]] == ["deploy to staging", "staging deploy steps",
                                                     "Deploying to staging?", "deploy to staging"]
    assert all(q["matched_count"] == 0 for q in body["queries"])
    ids = [q["id"] for q in body["queries"]]
    assert ids == sorted(ids, reverse=True)
    assert len(get(client, alpha, f"/api/alpha/queries/gaps/{deploy['id']}", days=30, limit=1)["queries"]) == 1

    retired = report["retired_only"]["groups"][0]
    body = get(client, alpha, f"/api/alpha/queries/gaps/{retired['id']}", days=30)
    assert body["section"] == "retired_only" and body["total"] == 2
    assert {q["query"] for q in body["queries"]} == {"staging host", "old staging host"}
    assert all(q["inactive_matched"] > 0 for q in body["queries"])


def test_group_searches_errors(client: TestClient, alpha: ProfileAccess, beta: ProfileAccess,
                               seeded: dict[str, str]) -> None:
    deploy = get(client, alpha, days=30)["zero_match"]["groups"][0]
    missing = client.get("/api/alpha/queries/gaps/z0123456789abcde", headers=alpha.headers)
    assert missing.status_code == 404 and missing.json()["error"]["param"] == "group"
    for bad in ("zzz", "q0123456789abcde", "Z0123456789ABCDE", "z0123456789abcdef"):
        response = client.get(f"/api/alpha/queries/gaps/{bad}", headers=alpha.headers)
        assert response.status_code == 400 and response.json()["error"]["param"] == "group", bad
    assert client.get(f"/api/alpha/queries/gaps/{deploy['id']}?limit=0", headers=alpha.headers).status_code == 400
    # Beta's token opens only beta; beta's own log has its one miss under the same id.
    denied = client.get(f"/api/alpha/queries/gaps/{deploy['id']}", headers=beta.headers)
    assert denied.status_code == 401
    assert get(client, beta, f"/api/beta/queries/gaps/{deploy['id']}")["total"] == 1


@pytest.mark.parametrize("value", BAD_DAYS)
def test_bad_days_is_400(client: TestClient, alpha: ProfileAccess, value: str) -> None:
    for path in ("/api/alpha/queries/gaps", "/api/alpha/queries/gaps/z0123456789abcde"):
        response = client.get(f"{path}?days={value}", headers=alpha.headers)
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error["code"] == "invalid_parameter" and error["param"] == "days"


def test_auth_and_empty_profile(client: TestClient, alpha: ProfileAccess, beta: ProfileAccess) -> None:
    assert client.get("/api/alpha/queries/gaps").status_code == 401
    wrong = client.get("/api/alpha/queries/gaps", headers=beta.headers)
    assert wrong.status_code == 401 and wrong.headers["WWW-Authenticate"].startswith("Bearer")
    body = get(client, alpha, days=365)
    for section in ("zero_match", "retired_only"):
        assert body[section] == {"searches": 0, "distinct_queries": 0, "grouped_queries": 0, "grouped_searches": 0,
                                 "capped": False, "lexical_tail": 0, "groups": []}


def test_cap_is_said(services: Services, client: TestClient, alpha: ProfileAccess,
                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("service.domain.gap_report.DISTINCT_MAX", 3)
    for text, n in (("alpha topic", 3), ("beta topic", 2), ("gamma topic", 2), ("delta topic", 1), ("omega", 1)):
        for _ in range(n):
            log(services, "alpha", text, 0)
    zero = get(client, alpha, days=1)["zero_match"]
    assert (zero["searches"], zero["distinct_queries"], zero["grouped_queries"], zero["grouped_searches"],
            zero["capped"]) == (9, 5, 3, 7, True)
    assert sorted(q["query"] for g in zero["groups"] for q in g["queries"]) == ["alpha topic", "beta topic",
                                                                                "gamma topic"]


def test_openapi_documents_the_gap_routes(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    report = paths["/api/{profile}/queries/gaps"]["get"]
    assert {"200", "400", "401"} <= set(report["responses"])
    assert "GapsBody" in str(report["responses"]["200"])
    days = next(p for p in report["parameters"] if p["name"] == "days")
    assert (days["schema"]["minimum"], days["schema"]["maximum"], days["schema"]["default"]) == (1, 365, 30)
    one = paths["/api/{profile}/queries/gaps/{group}"]["get"]
    assert {"200", "400", "401", "404"} <= set(one["responses"])
    assert report.get("security") and one.get("security")


def test_redacted_searches_keep_their_counts_and_lose_their_words(
        services: Services, client: TestClient, alpha: ProfileAccess, monkeypatch: pytest.MonkeyPatch) -> None:
    from service.domain.redaction import RedactionService

    profile = services.profiles.get("alpha")
    fact = services.facts.write(profile, title="Staging credential", text="the deploy token is tok_live_93xq7",
                                kind="reference", tags=[]).fact
    for text in ("tok_live_93xq7 scope", "where is tok_live_93xq7 used", "tok_live_93xq7 scope",
                 "deploy token rotation", "rotation of the deploy token"):
        log(services, "alpha", text, 0)
    before = get(client, alpha, days=7)
    RedactionService(services.store).redact(
        fact.uid, reason="a live token", operator="test", also=["tok_live_93xq7"])
    after = get(client, alpha, days=7)
    assert "tok_live" not in str(after)
    for key in ("searches", "distinct_queries", "grouped_searches"):
        assert after["zero_match"][key] == before["zero_match"][key] == (5 if key != "distinct_queries" else 4)
    counts = {g["representative"]: g["count"] for g in after["zero_match"]["groups"]}
    assert counts.pop("deploy token rotation") == 2
    assert sorted(counts.values()) == [1, 2] and all(t.startswith("[redacted ") for t in counts)  # never merged
