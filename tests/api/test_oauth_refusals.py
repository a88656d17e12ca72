"""MEMORY_OAUTH=on, what is refused (SQLite; the store's part runs on PostgreSQL in test_oauth_flow.py): the
consent page's checks, PKCE, redirect URIs, resources, expiry, revocation from every place, rate limits."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from service.clock import utcnow
from service.container import Services
from tests.conftest import ProfileAccess, make_profile
from tests.support.frozen_clock import frozen_at
from tests.support.oauth import (
    CALLBACK, Browser, approved, authorize_url, callback_params, form_fields, mcp_post, oauth_server, pkce, register,
    tokens_for,
)


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'memory.db'}"


@pytest.fixture
def live(tmp_path: Path, database_url: str) -> Iterator[tuple[str, Services, ProfileAccess, ProfileAccess]]:
    with oauth_server(tmp_path, database_url) as (base, services):
        yield base, services, make_profile(services, "alpha"), make_profile(services, "beta")


def _page(base: str, browser: Browser, resource: str, **extra: str) -> httpx.Response:
    client = register(base).json()
    _, challenge = pkce()
    return browser.open(authorize_url(base, client["client_id"], challenge, resource, **extra))


# --- the consent page ---------------------------------------------------------------------------------


def test_a_wrong_token_is_refused_five_times_then_the_request_closes(live) -> None:
    base, services, alpha, beta = live
    browser = Browser(beta.token)  # a real token, of another profile
    page = _page(base, browser, f"{base}/mcp/alpha")
    for left in (4, 3, 2, 1):
        page = browser.submit(page)
        assert page.status_code == 403 and "location" not in page.headers
        assert "neither a token of profile alpha nor a code" in page.text and f"({left} attempt" in page.text
        browser.credential = "mem_not_a_token" if left % 2 else beta.token
    closed = browser.submit(page)
    assert closed.status_code == 429 and "5 wrong tokens or codes" in closed.text
    browser.credential = alpha.token  # the right token comes too late: the request is over
    over = browser.submit(page, csrf=form_fields(page.text)["csrf"])
    assert over.status_code == 404 and "start the connection again" in over.text
    assert services.grants.listing("alpha") == []


def test_deny_sends_access_denied_back_with_state_and_iss(live) -> None:
    base, services, alpha, _ = live
    browser = Browser(alpha.token, action="deny")
    back = callback_params(browser.submit(_page(base, browser, f"{base}/mcp/alpha")).headers["location"])
    assert back == {"error": "access_denied", "error_description": "the profile's owner denied access",
                    "state": "st4te", "iss": base}
    assert services.grants.listing("alpha") == []


def test_the_csrf_token_cookie_and_origin_are_checked(live) -> None:
    base, services, alpha, _ = live
    browser = Browser(alpha.token)
    page = _page(base, browser, f"{base}/mcp/alpha")
    assert page.headers["x-frame-options"] == "DENY" and "frame-ancestors 'none'" in page.headers[
        "content-security-policy"]
    assert page.headers["cache-control"] == "no-store" and page.headers["referrer-policy"] == "no-referrer"
    cookie = page.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/authorize/consent" in cookie
    forged = browser.submit(page, csrf="x" * 43)  # a form not made by this page: its cookie differs too
    assert forged.status_code == 403 and "not shown this sign-in page" in forged.text
    for origin, site in (("https://evil.example", None), ("null", None), ("null", "cross-site"),
                         (base, "cross-site"), (None, "same-site")):
        headers = {k: v for k, v in {"Origin": origin, "Sec-Fetch-Site": site}.items() if v is not None}
        refused = browser.http.post(f"{base}/authorize/consent", headers=headers, data={
            **form_fields(page.text), "token": alpha.token, "action": "approve"})
        assert refused.status_code == 403 and "another site" in refused.text, (origin, site)
    stranger = httpx.post(f"{base}/authorize/consent", data={**form_fields(page.text), "token": alpha.token,
                                                              "action": "approve"})  # no cookie: another browser
    assert stranger.status_code == 403
    reloaded = browser.open(str(page.url))  # a new showing: the first page's CSRF token is void
    (name,) = browser.http.cookies.keys()

    def cookie(value: str) -> None:
        browser.http.cookies.clear()
        browser.http.cookies.set(name, value, domain="127.0.0.1", path="/authorize/consent")

    cookie(form_fields(page.text)["csrf"])  # even with its own cookie, the first showing's form is stale
    stale = browser.submit(page)
    assert stale.status_code == 400 and "CSRF" in stale.text
    assert services.grants.listing("alpha") == []
    cookie(form_fields(reloaded.text)["csrf"])
    browser.origin = "null"  # what Chromium sends under Referrer-Policy: no-referrer, with Sec-Fetch-Site below
    done = browser.submit(reloaded)
    assert done.status_code == 303 and "code=" in done.headers["location"]


def test_a_consent_code_works_once_for_its_profile_within_ten_minutes(live) -> None:
    base, services, alpha, _ = live
    code = services.grants.consent_code("alpha").code
    assert code.startswith("mem_gc_")
    grant = approved(base, code, f"{base}/mcp/alpha")
    assert grant.exchange(base).status_code == 200
    assert services.grants.listing("alpha")[0].approved_with is None  # shown as "consent_code"
    again = Browser(code)
    assert again.submit(_page(base, again, f"{base}/mcp/alpha")).status_code == 403  # used
    beta_code = Browser(services.grants.consent_code("beta").code)
    assert beta_code.submit(_page(base, beta_code, f"{base}/mcp/alpha")).status_code == 403  # another profile's
    late = Browser(services.grants.consent_code("alpha").code)
    page = _page(base, late, f"{base}/mcp/alpha")
    with frozen_at(utcnow() + timedelta(minutes=9, seconds=59)):
        assert late.submit(page).status_code == 303  # the request lives 10 minutes too
    expired = Browser(services.grants.consent_code("alpha").code)
    page = _page(base, expired, f"{base}/mcp/alpha")
    with frozen_at(utcnow() + timedelta(minutes=10, seconds=1)):
        assert expired.submit(page).status_code == 404  # the code and the request are both over


def test_a_spent_consent_code_is_told_apart_from_a_wrong_one(live) -> None:
    """A consent code used before, or expired, is named as such on the page (the store keeps both), not as
    "neither a token nor a code"; a code never issued still is."""
    base, services, _, _ = live
    code = services.grants.consent_code("alpha").code
    assert approved(base, code, f"{base}/mcp/alpha").exchange(base).status_code == 200
    again = Browser(code)
    used = again.submit(_page(base, again, f"{base}/mcp/alpha"))
    assert used.status_code == 403 and "(4 attempts left)" in used.text
    assert "that code from memory grant code was already used" in used.text and "neither" not in used.text
    assert "run memory grant code alpha for a new one" in used.text
    late = Browser(services.grants.consent_code("alpha").code)
    with frozen_at(utcnow() + timedelta(minutes=9)):
        page = _page(base, late, f"{base}/mcp")  # opened while the code was still valid
    with frozen_at(utcnow() + timedelta(minutes=10, seconds=1)):
        expired = late.submit(page)
    assert expired.status_code == 403 and "that code from memory grant code has expired" in expired.text
    assert "valid 10 minutes; run memory grant code PROFILE for a new one" in expired.text
    unknown = Browser("mem_gc_" + "x" * 43)
    never = unknown.submit(_page(base, unknown, f"{base}/mcp/alpha"))
    assert never.status_code == 403 and "neither a token of profile alpha nor a code" in never.text


# --- /authorize and /token ----------------------------------------------------------------------------


def test_pkce_is_s256_only_and_the_verifier_must_match(live) -> None:
    base, _, alpha, _ = live
    client = register(base).json()
    verifier, challenge = pkce()
    plain = httpx.get(authorize_url(base, client["client_id"], verifier, f"{base}/mcp/alpha",
                                    code_challenge_method="plain"))
    assert plain.status_code == 302
    back = callback_params(plain.headers["location"])
    assert back["error"] == "invalid_request" and back["iss"] == base and back["state"] == "st4te"
    short = httpx.get(authorize_url(base, client["client_id"], "tooshort", f"{base}/mcp/alpha"))
    assert callback_params(short.headers["location"])["error"] == "invalid_request"
    grant = approved(base, alpha.token, f"{base}/mcp/alpha")
    wrong = grant.exchange(base, code_verifier=pkce()[0])
    assert wrong.status_code == 400 and wrong.json() == {"error": "invalid_grant",
                                                         "error_description": "incorrect code_verifier"}
    assert grant.exchange(base).status_code == 200  # a failed verifier does not use the code up


def test_redirect_uris_are_matched_exactly(live) -> None:
    base, _, alpha, _ = live
    client = register(base).json()
    _, challenge = pkce()
    for other in (CALLBACK + "/", CALLBACK + "?x=1", "http://127.0.0.1:10/callback", "https://evil.example/cb"):
        answer = httpx.get(authorize_url(base, client["client_id"], challenge, f"{base}/mcp/alpha", redirect=other))
        assert answer.status_code == 400 and "location" not in answer.headers, other  # never sent to it
        assert "not registered" in answer.json()["error_description"]
    grant = approved(base, alpha.token, f"{base}/mcp/alpha")
    mismatch = grant.exchange(base, redirect_uri="http://127.0.0.1:9/other")
    assert mismatch.status_code == 400 and mismatch.json()["error"] == "invalid_request"


@pytest.mark.parametrize(("uri", "reason"), [
    ("http://example.com/cb", "not loopback"), ("https://example.com/cb#frag", "fragment"),
    ("myapp://callback", "not an https"), ("https://user:pw@example.com/cb", "user info"),
])
def test_registration_refuses_redirect_uris_other_than_https_or_loopback(live, uri: str, reason: str) -> None:
    answer = register(live[0], redirect_uris=[uri])
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_redirect_uri"
    assert reason in answer.json()["error_description"]


def test_the_resource_is_required_ours_and_the_same_at_the_token_endpoint(live) -> None:
    base, _, alpha, _ = live
    client = register(base).json()
    _, challenge = pkce()
    for resource in (None, "https://other.example/mcp/alpha", f"{base}/api/alpha", f"{base}/mcp/Not A Name"):
        answer = httpx.get(authorize_url(base, client["client_id"], challenge, resource))
        assert callback_params(answer.headers["location"])["error"] == "invalid_target", resource
    grant = approved(base, alpha.token, f"{base}/mcp/alpha")
    other = grant.exchange(base, resource=f"{base}/mcp/beta")
    assert other.status_code == 400 and other.json()["error"] == "invalid_target"
    tokens = grant.exchange(base, resource=None)  # omitted: the one bound at /authorize
    assert tokens.status_code == 200
    assert grant.refresh(base, tokens.json()["refresh_token"], resource=f"{base}/mcp").json()["error"] == \
        "invalid_target"


def test_codes_access_and_refresh_tokens_expire(live) -> None:
    base, _, alpha, _ = live
    grant = approved(base, alpha.token, f"{base}/mcp/alpha")
    with frozen_at(utcnow() + timedelta(seconds=61)):
        late = grant.exchange(base)
    assert late.status_code == 400 and "expired" in late.json()["error_description"]
    grant, tokens = tokens_for(base, alpha.token, "alpha")
    with frozen_at(utcnow() + timedelta(minutes=59)):
        assert mcp_post(base, "/mcp/alpha", tokens["access_token"]).status_code == 200
    with frozen_at(utcnow() + timedelta(hours=1, seconds=1)):
        assert mcp_post(base, "/mcp/alpha", tokens["access_token"]).status_code == 401
    with frozen_at(utcnow() + timedelta(days=30, seconds=1)):
        old = grant.refresh(base, tokens["refresh_token"])
    assert old.status_code == 400 and "expired" in old.json()["error_description"]


def test_a_token_of_one_profile_is_refused_on_another_exactly_as_a_wrong_static_token(live) -> None:
    base, _, alpha, beta = live
    _, tokens = tokens_for(base, alpha.token, "alpha")
    for token in (tokens["access_token"], tokens["refresh_token"], alpha.token, "mem_oat_forged"):
        answer = mcp_post(base, "/mcp/beta", token)
        reference = mcp_post(base, "/mcp/beta", "mem_wrong")
        assert (answer.status_code, answer.text, answer.headers["www-authenticate"]) == \
            (401, reference.text, reference.headers["www-authenticate"])


# --- revocation ---------------------------------------------------------------------------------------


def test_revocation_through_rest_and_its_openapi_answers(live) -> None:
    base, _, alpha, beta = live
    grant, tokens = tokens_for(base, alpha.token, "alpha")
    listed = httpx.get(f"{base}/api/alpha/grants", headers=alpha.headers).json()
    (item,) = listed["grants"]
    assert item["active"] and item["client_name"] == "Raw client" and item["approved_with"] == alpha.token_id
    assert httpx.get(f"{base}/api/beta/grants", headers=beta.headers).json()["grants"] == []
    grant_path = f"{base}/api/alpha/grants/{item['grant_id']}"
    assert httpx.delete(grant_path, headers=beta.headers).status_code == 401  # beta's token, alpha's path
    assert httpx.delete(f"{base}/api/beta/grants/{item['grant_id']}", headers=beta.headers).status_code == 404
    assert httpx.delete(f"{base}/api/alpha/grants/nope", headers=alpha.headers).status_code == 400
    gone = httpx.delete(grant_path, headers=alpha.headers).json()["grant"]
    assert not gone["active"] and gone["revoke_reason"].startswith("revoked through the REST API")
    assert httpx.delete(grant_path, headers=alpha.headers).json()["grant"] == gone  # idempotent
    assert mcp_post(base, "/mcp/alpha", tokens["access_token"]).status_code == 401
    assert grant.refresh(base, tokens["refresh_token"]).status_code == 400
    oauth_on_rest = httpx.get(f"{base}/api/alpha/grants", headers={"Authorization": f"Bearer {tokens['access_token']}"})
    assert oauth_on_rest.status_code == 401


def test_revoking_the_static_token_revokes_the_grants_it_approved(live) -> None:
    base, services, alpha, _ = live
    _, by_token = tokens_for(base, alpha.token, "alpha")
    _, by_code = tokens_for(base, services.grants.consent_code("alpha").code, "alpha")
    info = services.profiles.revoke_token(alpha.token_id)
    assert info.grants_revoked == 1
    assert mcp_post(base, "/mcp/alpha", by_token["access_token"]).status_code == 401
    assert mcp_post(base, "/mcp/alpha", by_code["access_token"]).status_code == 200  # not approved with that token
    reasons = {g.approved_with: g.revoke_reason for g in services.grants.listing("alpha")}
    assert reasons == {alpha.token_id: f"the token {alpha.token_id} that approved it was revoked", None: None}


def test_revoke_endpoint_checks_the_client(live) -> None:
    base, _, alpha, _ = live
    grant, tokens = tokens_for(base, alpha.token, "alpha")
    other = register(base).json()
    assert httpx.post(f"{base}/revoke", data={"token": tokens["access_token"],
                                              "client_id": other["client_id"]}).status_code == 200
    assert mcp_post(base, "/mcp/alpha", tokens["access_token"]).status_code == 200  # another client's: untouched
    unknown = httpx.post(f"{base}/revoke", data={"token": tokens["access_token"], "client_id": "nobody"})
    assert unknown.status_code == 401 and unknown.json()["error"] == "invalid_client"
    assert httpx.post(f"{base}/revoke", data={"token": tokens["access_token"],
                                              "client_id": grant.client["client_id"]}).status_code == 200
    assert mcp_post(base, "/mcp/alpha", tokens["access_token"]).status_code == 401


def test_unused_registrations_expire_after_a_day(live) -> None:
    base, _, alpha, _ = live
    unused = register(base).json()
    used = approved(base, alpha.token, f"{base}/mcp/alpha")
    _, challenge = pkce()
    with frozen_at(utcnow() + timedelta(hours=24, seconds=1)):
        gone = httpx.get(authorize_url(base, unused["client_id"], challenge, f"{base}/mcp/alpha"))
        kept = httpx.get(authorize_url(base, used.client["client_id"], challenge, f"{base}/mcp/alpha"))
    assert gone.status_code == 400 and "not found" in gone.json()["error_description"]
    assert kept.status_code == 302 and "/authorize/consent" in kept.headers["location"]


# --- rate limits --------------------------------------------------------------------------------------


def test_rate_limits_on_register_token_and_the_consent_page(live) -> None:
    base, _, alpha, _ = live
    answers = [register(base).status_code for _ in range(11)]
    assert answers == [201] * 10 + [429]
    refused = register(base)
    assert int(refused.headers["retry-after"]) >= 1 and "at most 10 a minute" in refused.json()["error_description"]
    statuses = [httpx.post(f"{base}/token", data={"grant_type": "refresh_token", "refresh_token": "x",
                                                  "client_id": "x"}).status_code for _ in range(61)]
    assert statuses[:60] == [401] * 60 and statuses[60] == 429
    pages = [httpx.get(f"{base}/authorize/consent", params={"request": "req_unknown"}).status_code
             for _ in range(31)]
    assert pages == [404] * 30 + [429]
    authorize = [httpx.get(f"{base}/authorize", params={"client_id": "nobody"}).status_code for _ in range(31)]
    assert authorize == [400] * 30 + [429]


def test_registrations_waiting_for_a_first_grant_are_capped(live, monkeypatch: pytest.MonkeyPatch) -> None:
    from service.domain.oauth import policy

    base, _, alpha, _ = live
    monkeypatch.setattr(policy, "MAX_UNUSED_CLIENTS", 2)
    approved(base, alpha.token, f"{base}/mcp/alpha")  # used: it does not count
    assert [register(base).status_code for _ in range(3)] == [201, 201, 429]
    assert "waiting for their first sign-in" in register(base).json()["error_description"]


def test_hostile_forms_and_bodies_are_refused_cleanly(live) -> None:
    base, services, alpha, _ = live
    browser = Browser(alpha.token)
    page = _page(base, browser, f"{base}/mcp/alpha")
    huge = browser.submit(page, token="x" * 20_000)
    assert huge.status_code == 413
    for fields in ({"action": "approve"}, {**form_fields(page.text), "action": "steal"},
                   {**form_fields(page.text), "action": "approve", "request": "req_" + "x" * 100}):
        answer = browser.http.post(f"{base}/authorize/consent", data=fields,
                                   headers={"Origin": base, "Sec-Fetch-Site": "same-origin"})
        assert answer.status_code in (400, 403, 404) and "<html" in answer.text, fields
    junk = httpx.post(f"{base}/register", content=b"{not json", headers={"Content-Type": "application/json"})
    assert junk.status_code == 400 and junk.json()["error"] == "invalid_client_metadata"
    big = httpx.post(f"{base}/register", content=b"{" + b" " * 70_000 + b"}",
                     headers={"Content-Type": "application/json"})
    assert big.status_code == 413
    assert httpx.post(f"{base}/token", data={"grant_type": "password"}).status_code in (400, 401)
    assert httpx.get(f"{base}/authorize", params={"client_id": "x" * 5000}).status_code == 400
    assert services.grants.listing("alpha") == []
    _, tokens = tokens_for(base, alpha.token, "alpha")  # the MCP endpoint's body checks, with an OAuth token
    headers = {"Authorization": f"Bearer {tokens['access_token']}", "Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}
    broken = httpx.post(f"{base}/mcp/alpha", content=b'{"jsonrpc": "2.0", "id": 1,', headers=headers)
    assert broken.status_code == 400 and broken.json()["error"]["code"] == -32700
    batch = httpx.post(f"{base}/mcp/alpha", content=b"[]", headers=headers)
    assert batch.status_code == 400 and batch.json()["error"]["code"] == -32600
