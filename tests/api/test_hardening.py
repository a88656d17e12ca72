"""What a hostile probe found on the REST face (issue 12): documented statuses and schemas, RFC 6750 401s,
duplicated Authorization headers, Allow on 405, database outages, /readyz exposure."""

from __future__ import annotations

import base64

import pytest
from fastapi.testclient import TestClient

from service.api.app import create_app
from service.container import Services
from service.domain.profiles import UNAUTHORIZED_MESSAGE
from service.store.engine import Database
from service.store.sql import SqlStore
from tests.conftest import ProfileAccess

ROUTES = ["/api/profiles", "/api/{profile}/queries", "/api/{profile}/queries/summary",
          "/api/{profile}/queries/{query_id}", "/api/{profile}/stats", "/api/{profile}/facts",
          "/api/{profile}/facts/{uid}"]


@pytest.fixture
def schema(client: TestClient) -> dict:
    return client.get("/openapi.json").json()


def test_every_route_documents_its_statuses_and_a_success_schema(schema: dict) -> None:
    for path in ROUTES:
        responses = schema["paths"][path]["get"]["responses"]
        assert {"200", "400", "401", "503"} <= set(responses), path
        ref = responses["200"]["content"]["application/json"]["schema"]["$ref"]
        body = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
        assert body["type"] == "object" and body["required"], path
        assert "Bearer" in str(responses["401"]["headers"]["WWW-Authenticate"])
    for path in ("/api/{profile}/facts/{uid}", "/api/{profile}/queries/{query_id}"):
        assert "404" in schema["paths"][path]["get"]["responses"]
    ready = schema["paths"]["/readyz"]["get"]["responses"]
    assert {"200", "421", "503"} <= set(ready)
    for path, item in schema["paths"].items():  # answered before any route runs, so listed on every route
        assert {"414", "431", "503"} <= set(item["get"]["responses"]), path


def test_parameters_state_their_formats(schema: dict) -> None:
    """Issue 24: a schema-valid value is an answer, not a 400 (schemathesis' positive_data_acceptance check)."""
    facts = {p["name"]: p["schema"] for p in schema["paths"]["/api/{profile}/facts"]["get"]["parameters"]}
    assert facts["cursor"]["anyOf"][0]["pattern"] == r"^(f[0-9]{1,12}|r[0-9]{1,12}\.[0-9]{1,12})$"
    assert facts["tag"]["anyOf"][0]["pattern"].startswith("^[A-Za-z0-9]")
    assert {o["format"] for o in facts["as_of"]["anyOf"]} == {"date-time", "date"}
    assert facts["profile"]["pattern"] == "^[a-z0-9][a-z0-9_-]{0,62}$"


def test_every_parameter_has_documented_bounds(schema: dict) -> None:
    for path in ROUTES:
        for parameter in schema["paths"][path]["get"].get("parameters", []):
            declared = parameter["schema"]
            options = declared.get("anyOf", [declared])
            concrete = [o for o in options if o.get("type") != "null"]
            for option in concrete:
                bounded = {"maxLength", "maximum", "enum"} & set(option)
                assert bounded, (path, parameter["name"], option)


def test_a_long_uid_is_a_documented_400_and_an_unknown_one_a_404(client: TestClient, alpha: ProfileAccess,
                                                                  schema: dict) -> None:
    long_uid = client.get("/api/alpha/facts/" + "u" * 41, headers=alpha.headers)
    assert long_uid.status_code == 400 and long_uid.json()["error"]["param"] == "uid"
    unknown = client.get("/api/alpha/facts/f_unknown", headers=alpha.headers)
    assert unknown.status_code == 404
    uid = next(p for p in schema["paths"]["/api/{profile}/facts/{uid}"]["get"]["parameters"] if p["name"] == "uid")
    assert uid["schema"]["maxLength"] == 40


def test_security_is_per_route_and_health_needs_none(schema: dict) -> None:
    assert "security" not in schema
    assert schema["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    for path in ROUTES:
        assert schema["paths"][path]["get"]["security"] == [{"bearer": []}], path
    for path in ("/healthz", "/readyz"):
        assert "security" not in schema["paths"][path]["get"], path


def test_the_cursor_is_documented_as_opaque_and_anything_else_is_400(client: TestClient, alpha: ProfileAccess,
                                                                    services: Services, schema: dict) -> None:
    cursor = next(p for p in schema["paths"]["/api/{profile}/facts"]["get"]["parameters"] if p["name"] == "cursor")
    assert "next_cursor" in cursor["description"] and "400" in cursor["description"]
    ref = services.profiles.get("alpha")
    for n in range(3):
        services.facts.write(ref, title=f"Fact {n}", text=f"text {n}", kind="project", tags=[])
    first = client.get("/api/alpha/facts?limit=2", headers=alpha.headers).json()
    second = client.get(f"/api/alpha/facts?limit=2&cursor={first['next_cursor']}", headers=alpha.headers)
    assert second.status_code == 200 and len(second.json()["facts"]) == 1
    forged = base64.urlsafe_b64encode(b"hello").decode().rstrip("=")
    for value in (forged, "AAAA", "x" * 65, "not base64!"):
        response = client.get("/api/alpha/facts", params={"cursor": value}, headers=alpha.headers)
        assert response.status_code == 400 and response.json()["error"]["param"] == "cursor", value


def test_401_is_one_answer_whatever_the_token(client: TestClient, services: Services, alpha: ProfileAccess,
                                              beta: ProfileAccess) -> None:
    revoked = services.profiles.issue_token("alpha")
    services.profiles.revoke_token(revoked.token_id)
    answers = [client.get("/api/alpha/stats", headers=headers) for headers in (
        {}, {"Authorization": "Basic dXNlcjpwdw=="}, {"Authorization": "Bearer "},  # missing or malformed
        {"Authorization": "Bearer mem_wrong"}, {"Authorization": f"Bearer {revoked.token}"}, beta.headers)]
    for response in answers:
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == "Bearer"  # docs/reviewers.md: the same answer in each case
        assert response.text == answers[0].text  # no profile probing
    wrong = answers[3]
    message = wrong.json()["error"]["message"]
    assert message == UNAUTHORIZED_MESSAGE
    assert "profile" in message and "proxy" in message and "Authorization" in message


def test_a_duplicated_authorization_header_is_400(client: TestClient, alpha: ProfileAccess,
                                                  beta: ProfileAccess) -> None:
    for path in ("/api/profiles", "/api/alpha/stats"):
        for pair in ((alpha.token, beta.token), (alpha.token, alpha.token)):
            headers = [("Authorization", f"Bearer {pair[0]}"), ("Authorization", f"Bearer {pair[1]}")]
            response = client.get(path, headers=headers)
            assert response.status_code == 400, (path, response.text)
            assert response.json()["error"]["param"] == "authorization"


def test_405_carries_allow(client: TestClient, alpha: ProfileAccess) -> None:
    response = client.post("/api/alpha/stats", headers=alpha.headers)
    assert response.status_code == 405 and response.headers["allow"] == "GET, HEAD"
    assert response.json()["error"]["code"] == "method_not_allowed"
    mcp = client.get("/mcp/alpha", headers=alpha.headers)
    assert mcp.status_code == 405 and mcp.headers["allow"] == "POST"
    for method in ("OPTIONS", "PUT"):  # a path of two routes (one per method): Allow names both
        grant = client.request(method, "/api/alpha/grants/grt_0000000000000000", headers=alpha.headers)
        assert grant.status_code == 405 and grant.headers["allow"] == "DELETE, GET, HEAD", method


def test_a_database_outage_is_503_database_unavailable_without_the_dsn(
    client: TestClient, services: Services, alpha: ProfileAccess, caplog: pytest.LogCaptureFixture
) -> None:
    services.profiles.store = SqlStore(Database("postgresql+psycopg://memory:s3cret@127.0.0.1:9/memory?connect_timeout=2"))
    response = client.get("/api/alpha/stats", headers=alpha.headers)
    assert response.status_code == 503, response.text
    assert response.json() == {"error": {"status": 503, "code": "backend_unavailable",
                                         "message": "database unavailable"}}
    assert "127.0.0.1" not in response.text and "9" not in response.text
    assert any("127.0.0.1" in r.getMessage() for r in caplog.records if r.name == "service.store.engine")
    mcp = client.post("/mcp/alpha", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                      headers={**alpha.headers, "Accept": "application/json, text/event-stream"})
    assert mcp.status_code == 503 and mcp.json()["error"]["message"] == "database unavailable"


def _non_loopback(services: Services, host: str = "127.0.0.1:8080") -> TestClient:
    return TestClient(create_app(services=services), base_url=f"http://{host}", client=("203.0.113.7", 40000))


def test_readyz_verdict_is_public_details_need_loopback_or_a_token(client: TestClient, services: Services,
                                                                   alpha: ProfileAccess) -> None:
    full = client.get("/readyz").json()  # loopback
    assert full["ready"] is True and "dialect" in full["checks"]["database"]
    with _non_loopback(services) as remote:
        public = remote.get("/readyz")
        assert public.status_code == 200
        assert public.json() == {"ready": True, "degraded": False,
                                 "checks": {name: {"state": c["state"]} for name, c in full["checks"].items()}}
        assert remote.get("/readyz", headers=alpha.headers).json() == full
        assert remote.get("/readyz", headers={"Authorization": "Bearer mem_wrong"}).json() == public.json()


def test_readyz_applies_the_host_allow_list(services: Services) -> None:
    with _non_loopback(services, "evil.example") as remote:
        response = remote.get("/readyz")
        assert response.status_code == 421 and "MEMORY_ALLOWED_HOSTS" in response.json()["error"]["message"]
    # Ports are checked against the socket's port: tests/mcp/test_hardening.py, on a real server.
