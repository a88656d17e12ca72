"""The OAuth consent page (MEMORY_OAUTH=on) in Chromium, on a desktop and a phone, with JavaScript off: what it
shows (profile, the redirect host in bold, the client's own name), that a wrong token is said on the page, and
that Approve sends the browser back to the client with a code that the token endpoint takes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.container import Services
from tests.conftest import ProfileAccess, make_profile
from tests.support.oauth import CALLBACK, Grant, authorize_url, callback_params, oauth_server, pkce, register
from tests.ui.conftest import PageSession

VIEWPORTS = {"desktop": {"viewport": {"width": 1280, "height": 900}},
             "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True,
                       "device_scale_factor": 2}}


@pytest.fixture
def live(tmp_path: Path, database_url: str) -> Iterator[tuple[str, Services, ProfileAccess]]:
    with oauth_server(tmp_path, database_url) as (base, services):
        yield base, services, make_profile(services, "alpha")


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_the_consent_page_approves_without_javascript(live, page_factory: Callable[..., PageSession],
                                                      artifacts: Path, device: str) -> None:
    base, services, alpha = live
    client = register(base, name="Claude <script>alert(1)</script>").json()
    verifier, challenge = pkce()
    session = page_factory(java_script_enabled=False, **VIEWPORTS[device])
    page: Any = session.page
    landed: list[str] = []

    def callback(route: Any) -> None:  # the client's redirect URI: record where the browser was sent
        landed.append(route.request.url)
        route.fulfill(status=200, content_type="text/plain", body="back at the client")

    page.context.route(f"{CALLBACK}**", callback)
    page.goto(authorize_url(base, client["client_id"], challenge, f"{base}/mcp/alpha", state="s1"))
    assert page.url.startswith(f"{base}/authorize/consent?request=")
    assert page.get_by_role("heading", name="Connect an app to your memory").is_visible()
    assert page.get_by_test_id("profile").inner_text() == "alpha"
    assert page.get_by_test_id("client-name").inner_text() == "Claude <script>alert(1)</script>"  # text, not markup
    host = page.get_by_test_id("redirect-host")
    assert host.inner_text() == "127.0.0.1:9"
    assert int(host.evaluate("e => getComputedStyle(e).fontWeight")) >= 600
    assert page.evaluate("document.scrollingElement.scrollWidth <= document.scrollingElement.clientWidth")
    assert page.get_by_test_id("approve").is_visible() and page.get_by_test_id("deny").is_visible()
    page.screenshot(path=str(artifacts / f"consent-{device}.png"), full_page=True)

    page.get_by_label("Token of profile alpha").fill("mem_not_this_one")
    page.get_by_test_id("approve").click()
    error = page.get_by_test_id("consent-error")
    assert "neither a token of profile alpha" in error.inner_text() and "4 attempts left" in error.inner_text()
    assert page.evaluate("document.scrollingElement.scrollWidth <= document.scrollingElement.clientWidth")
    page.screenshot(path=str(artifacts / f"consent-{device}-wrong-token.png"), full_page=True)

    page.get_by_label("Token of profile alpha").fill(alpha.token)
    page.get_by_test_id("approve").click()
    page.wait_for_url(f"{CALLBACK}**")
    back = callback_params(landed[-1])
    assert back["state"] == "s1" and back["iss"] == base and back["code"].startswith("mem_oac_")
    answer = Grant(client, back["code"], verifier, f"{base}/mcp/alpha").exchange(base)
    assert answer.status_code == 200 and answer.json()["access_token"].startswith("mem_oat_")
    (grant,) = services.grants.listing("alpha")
    assert grant.client_name == "Claude <script>alert(1)</script>"


def test_the_consent_page_cannot_be_framed(live, page_factory: Callable[..., PageSession]) -> None:
    base, _, _ = live
    client = register(base).json()
    _, challenge = pkce()
    consent = httpx.get(authorize_url(base, client["client_id"], challenge, f"{base}/mcp/alpha")).headers["location"]
    session = page_factory()
    page: Any = session.page
    page.goto(f"{base}/healthz")  # any page of the service's origin hosting a frame of the consent page
    page.set_content(f'<iframe id="f" src="{consent}" width="600" height="400"></iframe>')
    page.wait_for_timeout(1000)
    frame = page.frame_locator("#f")
    assert frame.get_by_test_id("consent-form").count() == 0  # frame-ancestors 'none': nothing rendered
