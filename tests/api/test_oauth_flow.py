"""MEMORY_OAUTH=on, end to end on a live server (SQLite and PostgreSQL): the MCP SDK's own OAuthClientProvider
signs in through the consent page and calls the tools; a client that knows only the MCP specification does the
same by hand; confidential clients, /mcp, and the single use of codes and refresh tokens."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from service.container import Services
from service.domain.profiles import UNAUTHORIZED_MESSAGE
from tests.conftest import ProfileAccess, make_profile
from tests.support.mcp_client import call, mcp_client
from tests.support.oauth import (
    Browser, MemoryStorage, approved, authorize_url, callback_params, mcp_post, oauth_mcp, oauth_server, pkce,
    register, sdk_auth, tokens_for,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def live(tmp_path: Path, database_url: str) -> Iterator[tuple[str, Services, ProfileAccess, ProfileAccess]]:
    with oauth_server(tmp_path, database_url) as (base, services):
        yield base, services, make_profile(services, "alpha"), make_profile(services, "beta")


def _search(query: str) -> dict:
    return {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "memory_search", "arguments": {"query": query}}}


@pytest.mark.parametrize(("mode", "method"), [("auto", "none"), ("legacy", "client_secret_post")])
async def test_the_sdk_client_signs_in_calls_tools_and_refreshes(live, mode: str, method: str) -> None:
    base, services, alpha, _ = live
    browser, storage = Browser(alpha.token), MemoryStorage()
    auth = sdk_auth(f"{base}/mcp/alpha", browser, storage, name="SDK client", auth_method=method)
    async with oauth_mcp(f"{base}/mcp/alpha", auth, mode=mode) as client:
        written = await call(client, "memory_write", title="Editor", text="The user edits with Helix.", kind="preference")
        found = await call(client, "memory_search", query="Helix editor")
        assert [f["uid"] for f in found["facts"]] == [written["fact"]["uid"]]
        first = storage.tokens
        assert first is not None and first.access_token.startswith("mem_oat_") and first.expires_in == 3600
        assert first.refresh_token and first.refresh_token.startswith("mem_ort_")
        # The consent page showed alpha, the client's name and where the browser goes back to.
        assert "asks to use the profile <strong data-testid=\"profile\">alpha</strong> of this memory service:" \
            in browser.pages[0].text
        assert "SDK client" in browser.pages[0].text and "<strong class=\"long-words\" data-testid=\"redirect-host\">" \
            "127.0.0.1:9</strong>" in browser.pages[0].text
        auth.context.token_expiry_time = time.time() - 1  # the access token's hour is over: the SDK refreshes
        again = await call(client, "memory_search", query="Helix")
        assert again["returned_count"] == 1
        assert storage.tokens.refresh_token != first.refresh_token  # rotated
    (grant,) = services.grants.listing("alpha")
    assert grant.active and grant.client_name == "SDK client" and grant.resource == f"{base}/mcp/alpha"
    assert grant.approved_with == alpha.token_id and grant.redirect_hosts == ["127.0.0.1:9"]
    # alpha's token opened alpha only: the same access token on beta is the 401 of a wrong static token.
    foreign = mcp_post(base, "/mcp/beta", storage.tokens.access_token)
    wrong = mcp_post(base, "/mcp/beta", "mem_wrong")
    assert foreign.status_code == wrong.status_code == 401 and foreign.text == wrong.text
    assert foreign.headers["www-authenticate"] == wrong.headers["www-authenticate"]


async def test_an_outside_client_that_knows_only_the_spec(live) -> None:
    """Discovery from the 401, registration, PKCE with `resource`, the consent form's `token` field, a tool call,
    refusal on another profile, a refresh, refusal after revocation: plain HTTP, no SDK."""
    base, services, alpha, beta = live
    server_url = f"{base}/mcp/alpha"
    first = httpx.post(server_url, json=_search("x"), headers={"Accept": "application/json, text/event-stream"})
    assert first.status_code == 401
    challenge = first.headers["www-authenticate"]
    metadata_url = challenge.split('resource_metadata="')[1].split('"')[0]
    resource = httpx.get(metadata_url).json()
    assert resource["resource"] == server_url and resource["bearer_methods_supported"] == ["header"]
    issuer = resource["authorization_servers"][0]
    server = httpx.get(f"{issuer}/.well-known/oauth-authorization-server").json()
    assert server["issuer"] == issuer == base
    assert server["code_challenge_methods_supported"] == ["S256"]
    assert "none" in server["token_endpoint_auth_methods_supported"]
    assert server["authorization_response_iss_parameter_supported"] is True
    client = httpx.post(server["registration_endpoint"], json={
        "client_name": "Outside", "redirect_uris": ["http://127.0.0.1:9/cb"], "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"]}).json()
    verifier, code_challenge = pkce()
    browser = Browser(alpha.token)
    page = browser.open(authorize_url(base, client["client_id"], code_challenge, server_url,
                                      redirect="http://127.0.0.1:9/cb", state="xyz"))
    assert 'name="token"' in page.text
    back = callback_params(browser.submit(page).headers["location"])
    assert back["state"] == "xyz" and back["iss"] == issuer
    token = httpx.post(server["token_endpoint"], data={
        "grant_type": "authorization_code", "code": back["code"], "redirect_uri": "http://127.0.0.1:9/cb",
        "client_id": client["client_id"], "code_verifier": verifier, "resource": server_url}).json()
    assert token["token_type"] == "Bearer" and token["expires_in"] == 3600
    services.facts.write(services.profiles.get("alpha"), title="Deploys", text="Deploys go through Argo CD.",
                         kind="project", tags=[])
    services.facts.write(services.profiles.get("beta"), title="Deploys", text="Beta deploys by hand.",
                         kind="project", tags=[])
    hits = mcp_post(base, "/mcp/alpha", token["access_token"], _search("deploys"))
    assert hits.status_code == 200
    assert [f["text"] for f in hits.json()["result"]["structuredContent"]["facts"]] == ["Deploys go through Argo CD."]
    refused = mcp_post(base, "/mcp/beta", token["access_token"], _search("deploys"))
    assert refused.status_code == 401 and refused.json()["error"]["message"] == UNAUTHORIZED_MESSAGE
    refreshed = httpx.post(server["token_endpoint"], data={
        "grant_type": "refresh_token", "refresh_token": token["refresh_token"], "client_id": client["client_id"],
        "resource": server_url}).json()
    assert refreshed["access_token"] != token["access_token"]
    assert mcp_post(base, "/mcp/alpha", refreshed["access_token"], _search("deploys")).status_code == 200
    revoked = httpx.post(server["revocation_endpoint"], data={"token": refreshed["refresh_token"],
                                                              "client_id": client["client_id"]})
    assert revoked.status_code == 200
    for access in (token["access_token"], refreshed["access_token"]):
        assert mcp_post(base, "/mcp/alpha", access, _search("deploys")).status_code == 401
    assert services.grants.listing("alpha")[0].revoke_reason == "revoked by the client (RFC 7009)"
    assert beta.token not in refused.text


async def test_a_confidential_client_proves_its_hashed_secret(live) -> None:
    """Claude's hosted connector registers with client_secret_post: the secret is shown once, stored as a hash."""
    base, services, alpha, _ = live
    grant = approved(base, alpha.token, f"{base}/mcp/alpha", auth_method="client_secret_post")
    secret = grant.client["client_secret"]
    assert secret.startswith("mem_ocs_") and grant.client["token_endpoint_auth_method"] == "client_secret_post"
    with services.db.read() as session:
        stored = session.exec(__import__("sqlmodel").text("SELECT secret_hash, registration FROM oauth_clients")).all()
    assert secret not in str(stored) and len(stored[0][0]) == 64
    missing = grant.exchange(base, client_secret=None)
    wrong = grant.exchange(base, client_secret="mem_ocs_wrong")
    assert missing.status_code == wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"
    answer = grant.exchange(base)
    assert answer.status_code == 200
    basic = httpx.post(f"{base}/token", auth=(grant.client["client_id"], secret), data={
        "grant_type": "refresh_token", "refresh_token": answer.json()["refresh_token"],
        "client_id": grant.client["client_id"]})
    assert basic.status_code == 200 and basic.json()["access_token"].startswith("mem_oat_")


async def test_mcp_without_a_profile_takes_oauth_tokens_for_the_profile_the_grant_names(live) -> None:
    base, services, alpha, beta = live
    services.facts.write(services.profiles.get("beta"), title="Pets", text="Beta has a cat.", kind="user", tags=[])
    browser, storage = Browser(beta.token), MemoryStorage()
    async with oauth_mcp(f"{base}/mcp", sdk_auth(f"{base}/mcp", browser, storage)) as client:
        found = await call(client, "memory_search", query="cat")
        assert [f["text"] for f in found["facts"]] == ["Beta has a cat."]
    assert "asks to use <strong data-testid=\"profile\">a profile</strong> — the one whose token or code you enter " \
        "below — of this memory service:" in browser.pages[0].text
    (grant,) = services.grants.listing("beta")
    assert grant.resource == f"{base}/mcp"
    root_token = storage.tokens.access_token
    # Audience: a token for /mcp opens /mcp only; a profile's static token does not open /mcp.
    assert mcp_post(base, "/mcp/beta", root_token).status_code == 401
    assert mcp_post(base, "/mcp", beta.token).status_code == 401
    _, alpha_tokens = tokens_for(base, alpha.token, "alpha")
    assert mcp_post(base, "/mcp", alpha_tokens["access_token"]).status_code == 401
    assert mcp_post(base, "/mcp/alpha", alpha_tokens["access_token"]).status_code == 200


async def test_static_tokens_keep_working_and_oauth_tokens_do_not_open_rest(live) -> None:
    base, _, alpha, _ = live
    async with mcp_client(base, "alpha", alpha.token) as client:
        assert (await call(client, "memory_recent"))["facts"] == []
    assert httpx.get(f"{base}/api/alpha/stats", headers=alpha.headers).status_code == 200
    _, tokens = tokens_for(base, alpha.token, "alpha")
    rest = httpx.get(f"{base}/api/alpha/stats", headers={"Authorization": f"Bearer {tokens['access_token']}"})
    assert rest.status_code == 401 and "resource_metadata" not in rest.headers["www-authenticate"]


async def test_a_code_used_twice_revokes_its_grant(live) -> None:
    base, services, alpha, _ = live
    grant = approved(base, alpha.token, f"{base}/mcp/alpha")
    first = grant.exchange(base)
    assert first.status_code == 200
    again = grant.exchange(base)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert "already used" in again.json()["error_description"] and "revoked" in again.json()["error_description"]
    assert mcp_post(base, "/mcp/alpha", first.json()["access_token"]).status_code == 401
    assert grant.refresh(base, first.json()["refresh_token"]).status_code == 400
    assert services.grants.listing("alpha")[0].revoke_reason == "its authorization code was used twice"


async def test_a_refresh_token_used_twice_revokes_its_grant(live) -> None:
    base, services, alpha, _ = live
    grant = approved(base, alpha.token, f"{base}/mcp/alpha")
    tokens = grant.exchange(base).json()
    rotated = grant.refresh(base, tokens["refresh_token"])
    assert rotated.status_code == 200
    replayed = grant.refresh(base, tokens["refresh_token"])
    assert replayed.status_code == 400 and "already used" in replayed.json()["error_description"]
    assert mcp_post(base, "/mcp/alpha", rotated.json()["access_token"]).status_code == 401
    assert grant.refresh(base, rotated.json()["refresh_token"]).status_code == 400  # the whole grant is gone
    assert not services.grants.listing("alpha")[0].active


async def test_registrations_of_claude_and_chatgpt_are_taken(live) -> None:
    base = live[0]
    for uris in (["https://claude.ai/api/mcp/auth_callback", "https://claude.com/api/mcp/auth_callback"],
                 ["https://chatgpt.com/connector/oauth/abc123"], ["https://chatgpt.com/connector_platform_oauth_redirect"]):
        for method in ("none", "client_secret_post"):
            answer = register(base, redirect_uris=uris, auth_method=method, name="hosted")
            assert answer.status_code == 201, answer.text
            assert answer.json()["redirect_uris"] == uris
