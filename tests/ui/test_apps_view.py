"""The dashboard's Apps view: the profile's OAuth grants, and revoking one (its tokens stop at once)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from service.container import Services
from tests.conftest import ProfileAccess, make_profile
from tests.support.oauth import mcp_post, oauth_server, tokens_for
from tests.ui.conftest import PageSession


@pytest.fixture
def live(tmp_path: Path, database_url: str) -> Iterator[tuple[str, Services, ProfileAccess]]:
    with oauth_server(tmp_path, database_url) as (base, services):
        yield base, services, make_profile(services, "alpha")


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_apps_lists_grants_and_revokes_one(live, page_factory: Callable[..., PageSession], artifacts: Path,
                                           device: str) -> None:
    base, services, alpha = live
    _, kept = tokens_for(base, alpha.token, "alpha")
    _, gone = tokens_for(base, services.grants.consent_code("alpha").code, "alpha")
    options = {"viewport": {"width": 390, "height": 844}, "is_mobile": True} if device == "phone" else {}
    ui = page_factory(**options)
    page: Any = ui.page
    ui.login(base, "alpha", alpha.token)
    ui.ready("overview")
    page.get_by_role("link", name="Apps").click()
    ui.ready("apps")
    rows = page.get_by_test_id("grant")
    assert rows.count() == 2
    assert rows.nth(0).get_by_test_id("grant-name").inner_text() == "Raw client"
    assert "127.0.0.1:9" in rows.nth(0).inner_text()
    assert page.evaluate("document.scrollingElement.scrollWidth <= document.scrollingElement.clientWidth")
    page.screenshot(path=str(artifacts / f"apps-{device}.png"), full_page=True)
    newest = rows.nth(0).get_attribute("data-grant")
    page.once("dialog", lambda dialog: dialog.accept())
    rows.nth(0).get_by_test_id("revoke-grant").click()
    page.wait_for_selector(f"[data-grant='{newest}'] >> text=revoked")
    ui.ready("apps")
    assert page.get_by_test_id("revoke-grant").count() == 1
    assert mcp_post(base, "/mcp/alpha", gone["access_token"]).status_code == 401  # approved with the code: newest
    assert mcp_post(base, "/mcp/alpha", kept["access_token"]).status_code == 200
    assert [g.active for g in services.grants.listing("alpha")] == [False, True]
