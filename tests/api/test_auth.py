"""Every REST endpoint: the same 401 for a missing, malformed, unknown, revoked or foreign token."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from service.container import Services
from service.domain.profiles import UNAUTHORIZED_MESSAGE
from tests.conftest import ProfileAccess, make_profile

ENDPOINTS = [
    "/api/profiles",
    "/api/alpha/queries",
    "/api/alpha/queries/summary",
    "/api/alpha/queries/1",
    "/api/alpha/stats",
    "/api/alpha/facts",
    "/api/alpha/facts/f_unknown",
]


def _bad_headers(services: Services, alpha: ProfileAccess, beta: ProfileAccess) -> dict[str, dict[str, str]]:
    revoked = services.profiles.issue_token("alpha")
    services.profiles.revoke_token(revoked.token_id)
    return {
        "missing": {},
        "malformed": {"Authorization": "Token abc"},
        "empty bearer": {"Authorization": "Bearer "},
        "unknown": {"Authorization": "Bearer mem_not_a_real_token"},
        "revoked": {"Authorization": f"Bearer {revoked.token}"},
        "other profile": beta.headers,
    }


@pytest.mark.parametrize("path", ENDPOINTS)
def test_every_endpoint_refuses_bad_tokens_identically(
    client: TestClient, services: Services, alpha: ProfileAccess, beta: ProfileAccess, path: str
) -> None:
    bodies = set()
    for label, headers in _bad_headers(services, alpha, beta).items():
        if path == "/api/profiles" and label == "other profile":
            continue  # beta's token is valid for /api/profiles: it lists beta
        response = client.get(path, headers=headers)
        assert response.status_code == 401, (label, response.text)
        assert response.headers["www-authenticate"].startswith("Bearer"), label
        bodies.add(response.text)
    assert len(bodies) == 1
    body = client.get(path).json()
    assert body == {"error": {"status": 401, "code": "unauthorized", "message": UNAUTHORIZED_MESSAGE}}


def test_unknown_profile_answers_like_a_wrong_token(client: TestClient, alpha: ProfileAccess) -> None:
    nobody = client.get("/api/nobody/queries", headers=alpha.headers)
    missing = client.get("/api/alpha/queries")
    assert nobody.status_code == missing.status_code == 401
    assert nobody.text == missing.text
    # A name no profile can have is outside the documented path pattern: 400, whatever the token (it
    # tells nothing about which profiles exist).
    bad_name = client.get("/api/Not%20A%20Name/queries", headers=alpha.headers)
    assert bad_name.status_code == 400 and bad_name.json()["error"]["param"] == "profile"
    assert client.get("/api/Not%20A%20Name/queries").status_code == 400


def test_profiles_lists_only_the_callers_profile(client: TestClient, alpha: ProfileAccess, beta: ProfileAccess) -> None:
    body = client.get("/api/profiles", headers=alpha.headers).json()
    assert [p["name"] for p in body["profiles"]] == ["alpha"]
    assert body["profiles"][0]["facts"] == 0
    assert body["profiles"][0]["created_at"].endswith("+00:00")
    assert [p["name"] for p in client.get("/api/profiles", headers=beta.headers).json()["profiles"]] == ["beta"]


def test_beta_cannot_read_alphas_query_log(client: TestClient, services: Services, alpha: ProfileAccess,
                                           beta: ProfileAccess) -> None:
    services.search.search(services.profiles.get("alpha"), "secret alpha question")
    assert client.get("/api/alpha/queries", headers=alpha.headers).json()["queries"]
    assert client.get("/api/alpha/queries", headers=beta.headers).status_code == 401
    assert client.get("/api/beta/queries", headers=beta.headers).json()["queries"] == []


def test_unknown_route_is_json_404(client: TestClient, alpha: ProfileAccess) -> None:
    response = client.get("/api/alpha/nothing/here", headers=alpha.headers)
    assert response.status_code == 404
    assert response.json()["error"]["status"] == 404


def test_health_needs_no_token(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["checks"]["database"]["state"] == "ready"
    assert ready.json()["checks"]["embedder"]["state"] == "disabled"


def test_a_new_token_works_and_revoking_it_locks_out(client: TestClient, services: Services) -> None:
    access = make_profile(services, "gamma")
    assert client.get("/api/gamma/stats", headers=access.headers).status_code == 200
    services.profiles.revoke_token(access.token_id)
    assert client.get("/api/gamma/stats", headers=access.headers).status_code == 401
