"""MEMORY_OAUTH: off by default (nothing of OAuth is served), its configuration rule, and with it on the
discovery documents and the 401 that points at them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import ValidationError

from service.api.access_log import redact_target
from service.config import Settings, describe_error
from service.container import Services
from service.domain.profiles import UNAUTHORIZED_MESSAGE
from tests.conftest import ProfileAccess, make_profile
from tests.support.oauth import mcp_post, oauth_server, tokens_for

OAUTH_PATHS = ["/.well-known/oauth-authorization-server", "/.well-known/oauth-authorization-server/mcp/alpha",
               "/.well-known/oauth-protected-resource/mcp/alpha", "/.well-known/oauth-protected-resource/mcp",
               "/authorize", "/authorize/consent", "/token", "/register", "/revoke"]


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'memory.db'}"


@pytest.fixture
def live(tmp_path: Path, database_url: str) -> Iterator[tuple[str, Services, ProfileAccess]]:
    with oauth_server(tmp_path, database_url) as (base, services):
        yield base, services, make_profile(services, "alpha")


def test_off_by_default_nothing_of_oauth_is_served(client, alpha: ProfileAccess) -> None:
    assert Settings().oauth is False
    for path in OAUTH_PATHS:
        assert client.get(path).status_code == 404, path
        assert client.post(path).status_code in (404, 405), path
    response = client.post("/mcp/alpha", json={})
    assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"
    assert client.post("/mcp", json={}, headers=alpha.headers).status_code == 404


@pytest.mark.parametrize(("url", "ok"), [
    ("https://memory.example.com", True), ("https://memory.example.com/", True), ("http://127.0.0.1:8080", True),
    ("http://localhost:9000", True), (None, False), ("http://memory.example.com", False),
    ("https://memory.example.com/memory", False), ("https://memory.example.com?x=1", False), ("ftp://x", False),
])
def test_oauth_needs_an_https_public_url_without_a_path(tmp_path: Path, url: str | None, ok: bool) -> None:
    if ok:
        assert Settings(data_dir=tmp_path, oauth="on", public_url=url).issuer == url.rstrip("/")  # type: ignore
        return
    with pytest.raises(ValidationError) as raised:
        Settings(data_dir=tmp_path, oauth="on", public_url=url)  # type: ignore[arg-type]
    line = describe_error(raised.value)
    assert "MEMORY_OAUTH=on needs MEMORY_PUBLIC_URL" in line and "\n" not in line


def test_the_issuer_is_the_public_origin_in_lower_case(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, oauth=True, public_url="HTTPS://Memory.Example.com/")
    assert settings.issuer == "https://memory.example.com"


def test_authorization_server_metadata(live) -> None:
    base = live[0]
    document = httpx.get(f"{base}/.well-known/oauth-authorization-server").json()
    assert document == {
        "issuer": base,  # no trailing slash: what `iss` is compared with
        "authorization_endpoint": f"{base}/authorize",
        "token_endpoint": f"{base}/token",
        "registration_endpoint": f"{base}/register",
        "revocation_endpoint": f"{base}/revoke",
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
        "revocation_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": True,
        "client_id_metadata_document_supported": True,  # a URL as client_id (test_oauth_client_documents.py)
    }
    for suffix in ("/mcp", "/mcp/alpha", "/mcp/anyone"):  # the path-suffixed variants clients probe
        assert httpx.get(f"{base}/.well-known/oauth-authorization-server{suffix}").json() == document
    assert httpx.get(f"{base}/.well-known/oauth-authorization-server/mcp/Not%20A%20Name").status_code == 404
    assert httpx.get(f"{base}/.well-known/openid-configuration").status_code == 404
    preflight = {"Origin": "https://inspector.example", "Access-Control-Request-Method": "POST"}
    for path in ("/token", "/register", "/revoke"):  # browser-based clients (the Inspector), no cookies
        answer = httpx.options(f"{base}{path}", headers=preflight)
        assert answer.status_code == 200 and answer.headers["access-control-allow-origin"] == "*", path
    assert "access-control-allow-origin" not in httpx.options(f"{base}/authorize", headers=preflight).headers


def test_protected_resource_metadata_per_profile(live) -> None:
    base = live[0]
    for path, resource in (("/mcp/alpha", f"{base}/mcp/alpha"), ("/mcp/nobody", f"{base}/mcp/nobody"),
                           ("/mcp", f"{base}/mcp")):
        document = httpx.get(f"{base}/.well-known/oauth-protected-resource{path}").json()
        assert document["resource"] == resource and document["authorization_servers"] == [base]
        assert document["bearer_methods_supported"] == ["header"]
    assert httpx.get(f"{base}/.well-known/oauth-protected-resource").status_code == 404


def test_the_401_points_at_the_metadata_and_stays_one_answer(live) -> None:
    base, services, alpha = live
    beta = make_profile(services, "beta")
    where = f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp/alpha"'
    missing = mcp_post(base, "/mcp/alpha", None)
    assert missing.status_code == 401 and missing.headers["www-authenticate"] == f"Bearer {where}"
    answers = [mcp_post(base, "/mcp/alpha", token) for token in ("mem_wrong", beta.token, "mem_oat_forged")]
    for answer in answers:
        assert answer.status_code == 401
        assert answer.headers["www-authenticate"] == missing.headers["www-authenticate"]  # one answer
        assert answer.text == missing.text
        assert answer.json()["error"]["message"] == UNAUTHORIZED_MESSAGE
    root = mcp_post(base, "/mcp", alpha.token)  # /mcp takes OAuth tokens only
    assert root.headers["www-authenticate"] == \
        f'Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'
    rest = httpx.get(f"{base}/api/alpha/stats")
    assert rest.status_code == 401 and rest.headers["www-authenticate"] == "Bearer"  # REST is no OAuth resource
    odd = mcp_post(base, "/mcp/Not%20A%20Name", None)  # no profile's name: the rule, as REST says it, not a 401
    assert odd.status_code == 400 and "www-authenticate" not in odd.headers


def test_every_secret_of_oauth_is_hidden_in_the_access_log(live) -> None:
    base, services, alpha = live
    grant, tokens = tokens_for(base, alpha.token, "alpha")
    code = services.grants.consent_code("alpha").code
    secrets = [tokens["access_token"], tokens["refresh_token"], grant.code, code, "mem_ocs_secretsecret"]
    for secret in secrets:
        for name in ("access_token", "code", "refresh_token", "client_secret", "x"):
            shown = redact_target(f"/token?{name}={secret}&client_id=abc")
            assert secret not in shown and "client_id=abc" in shown, shown
