"""The dashboard's review features in the browser: the Facts view as of a date, and a redacted fact's page."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from typing import Any

from service import clock
from service.container import Services
from service.domain.redaction import MARKER, RedactionService
from tests.ui.conftest import PageSession, Seeded, rest

expect: Any
try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips these tests
    expect = None


def test_facts_as_of_a_date(base_url: str, seeded: Seeded, ui: PageSession) -> None:
    page = ui.page
    ui.login(base_url, "alpha", seeded.access.token)
    ui.ready("overview")
    page.get_by_role("link", name="Facts", exact=True).click()
    ui.ready("facts")
    expect(page.get_by_test_id("asof-notice")).to_have_count(0)

    # Fifteen days ago: the first three facts, the database decision not yet superseded, the deploy not retired.
    then = (clock.utcnow() - timedelta(days=15)).strftime("%Y-%m-%dT%H:%M")
    page.get_by_test_id("filter-asof").fill(then)
    page.get_by_test_id("filter-apply").click()
    expect(page.get_by_test_id("asof-notice")).to_contain_text("Memory as of")
    assert f"as_of={then.replace(':', '%3A')}Z" in page.url or f"as_of={then}Z" in page.url
    expected = rest(base_url, seeded.access, "facts", as_of=f"{then}Z")["facts"]
    rows = page.get_by_test_id("fact-row")
    expect(rows).to_have_count(len(expected))
    assert [rows.nth(i).get_attribute("data-uid") for i in range(len(expected))] == [f["uid"] for f in expected]
    assert {f["uid"] for f in expected} == {seeded.uids[k] for k in ("pytest", "deploy", "db")}
    assert all(rows.nth(i).get_attribute("data-status") == "active" for i in range(len(expected)))

    # The fact page then: active, with its text of then; "Back to now" shows it superseded.
    page.locator(f"[data-testid=fact-row][data-uid='{seeded.uids['db']}'] [data-testid=fact-link]").click()
    expect(page.get_by_test_id("fact-uid")).to_have_text(seeded.uids["db"])
    expect(page.get_by_test_id("fact-status")).to_have_text("active")
    expect(page.get_by_test_id("asof-notice")).to_be_visible()
    expect(page.get_by_test_id("fact-chain")).to_have_count(0)  # its successor did not exist yet
    page.get_by_test_id("asof-now").click()
    expect(page.get_by_test_id("fact-status")).to_have_text("superseded")
    expect(page.get_by_test_id("asof-notice")).to_have_count(0)

    # Clearing the date goes back to every fact now.
    page.goto(f"{base_url}/ui/#/facts?as_of={then}Z")
    ui.ready("facts")
    page.get_by_test_id("filter-asof").fill("")
    page.get_by_test_id("filter-apply").click()
    expect(page.get_by_test_id("asof-notice")).to_have_count(0)
    expect(rows).to_have_count(6)


def test_a_redacted_fact_shows_its_record(base_url: str, seeded: Seeded, ui: PageSession,
                                          services: Services) -> None:
    uid = seeded.uids["ci"]
    before = rest(base_url, seeded.access, f"facts/{uid}")["fact"]
    text, title = before["text"], before["title"]
    RedactionService(services.store).redact(uid, reason="held a runner secret",
                                                                  operator="alice")
    page = ui.page
    ui.login(base_url, "alpha", seeded.access.token)
    ui.ready("overview")
    page.goto(f"{base_url}/ui/#/facts/{uid}")
    expect(page.get_by_test_id("fact-uid")).to_have_text(uid)
    expect(page.get_by_test_id("fact-title")).to_have_text(MARKER)
    expect(page.get_by_test_id("fact-text")).to_have_text(MARKER)
    notice = page.get_by_test_id("redaction-notice")
    expect(notice).to_contain_text("alice")
    expect(notice).to_contain_text("held a runner secret")
    expect(page.get_by_test_id("redaction-sha")).to_have_text(hashlib.sha256(text.encode()).hexdigest())
    expect(page.get_by_test_id("redaction-title-sha")).to_have_text(hashlib.sha256(title.encode()).hexdigest())
    expect(page.get_by_test_id("fact-status")).to_have_text("retired")
