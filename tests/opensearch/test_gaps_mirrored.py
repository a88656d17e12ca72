"""The gap report in OpenSearch mode: read from the canonical store (the query log's home), whatever the
mirror's state, and marked so with X-Memory-Source."""

from __future__ import annotations

from fastapi.testclient import TestClient

from service.api.app import create_app
from service.container import Services
from service.domain.ports import SearchHits, SearchRequest
from tests.conftest import make_profile
from tests.opensearch.conftest import settle


def test_gap_report_in_opensearch_mode(pg_os_services: Services) -> None:
    services = pg_os_services
    access = make_profile(services, "alpha")
    profile = services.profiles.get("alpha")
    services.facts.write(profile, title="Deploys", text="Argo CD rolls out every service", kind="project", tags=[])
    for text in ("how do we deploy to staging", "deploying to staging", "python version"):
        request = SearchRequest(profile_id=profile.id, profile=profile.name, query=text, limit=8)
        services.query_log.record(profile, request=request, latency_ms=1.0, returned=[],
                                  found=SearchHits(matched_count=0, inactive_matched=0, hits=[], mode="lexical"))
    services.search.search(profile, "how should we deploy to staging")  # the real path, mirrored or not
    with TestClient(create_app(services=services), base_url="http://127.0.0.1",
                    client=("127.0.0.1", 50000)) as client:
        before_sync = client.get("/api/alpha/queries/gaps?days=7", headers=access.headers)
        assert before_sync.status_code == 200 and before_sync.headers["X-Memory-Source"] == "postgres"
        settle(services)
        response = client.get("/api/alpha/queries/gaps?days=7", headers=access.headers)
        assert response.status_code == 200 and response.headers["X-Memory-Source"] == "postgres"
        body = response.json()
        assert body == before_sync.json() == services.gaps.report(profile, 7)
        summary = client.get("/api/alpha/queries/summary?days=7", headers=access.headers).json()
        assert body["zero_match"]["searches"] + body["retired_only"]["searches"] == summary["totals"]["zero_match"]
        deploy = body["zero_match"]["groups"][0]
        assert deploy["representative"] == "deploying to staging"  # equal counts: by text
        assert {q["query"] for q in deploy["queries"]} >= {"how do we deploy to staging", "deploying to staging"}
        searches = client.get(f"/api/alpha/queries/gaps/{deploy['id']}?days=7", headers=access.headers)
        assert searches.status_code == 200 and searches.json()["total"] == deploy["count"]
