"""The dashboard end to end: headless Chromium against a real server on loopback, seeded through the MCP tools."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from service.container import Services
from tests.conftest import ProfileAccess, make_profile
from tests.ui.conftest import PageSession, Seeded, rest, seed

expect: Any
try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips these tests
    expect = None


def _ints(csv: str) -> list[int]:
    return [int(x) for x in csv.split(",")]


def _today_is_labelled(chart: Any) -> None:
    """The day axis is counted back from the window's last day, so its last label is "today" (the window
    ends today, UTC) and the others are month and day."""
    expect(chart).to_have_attribute("data-x-labels", re.compile(r"\|today$"))
    labels = (chart.get_attribute("data-x-labels") or "").split("|")
    assert all(re.fullmatch(r"[A-Z][a-z]{2} \d{1,2}", label) for label in labels[:-1]), labels
    assert 2 <= len(labels) <= 20, labels


def test_overview_matches_the_summary(base_url: str, seeded: Seeded, ui: PageSession, artifacts: Path) -> None:
    page = ui.page
    ui.login(base_url, "alpha", seeded.access.token)
    ui.ready("overview")
    summary = rest(base_url, seeded.access, "queries/summary", days=30)

    # One point per day of the window, quiet days as zero, the same numbers as the summary.
    chart = page.get_by_test_id("daily-chart")
    assert chart.get_attribute("data-points") == "30"
    assert _ints(chart.get_attribute("data-searches")) == [d["searches"] for d in summary["daily"]]
    assert _ints(chart.get_attribute("data-zero-match")) == [d["zero_match"] for d in summary["daily"]]
    assert page.get_by_test_id("daily-table").locator("tbody tr").count() == 30
    assert chart.locator("canvas").count() == 1, "uPlot drew the chart"
    _today_is_labelled(chart)
    assert sum(d["searches"] > 0 for d in summary["daily"]) >= 3, "the seed spans several days"

    # The zero-match count shown is the summary's.
    assert summary["totals"]["zero_match"] > 0
    expect(page.get_by_test_id("total-zero-match")).to_have_text(str(summary["totals"]["zero_match"]))
    expect(page.get_by_test_id("total-searches")).to_have_text(str(summary["totals"]["searches"]))
    expect(page.get_by_test_id("total-unknown")).to_have_text(str(summary["totals"]["unknown_matched"]))
    expect(page.get_by_test_id("unknown-explained")).to_contain_text("not misses")
    expect(page.get_by_test_id("total-retired-only")).to_have_text(str(summary["totals"]["retired_only"]))

    # Top queries with their misses highlighted.
    top = page.get_by_test_id("top-queries").locator("tbody tr")
    assert top.count() == len(summary["top_queries"])
    for i, item in enumerate(summary["top_queries"]):
        row = top.nth(i)
        expect(row).to_contain_text(item["query"])
        assert ("miss" in (row.get_attribute("class") or "")) == (item["zero_match"] > 0)
    expect(page.get_by_test_id("top-tags")).to_contain_text("python")

    # The store's shape.
    stats = rest(base_url, seeded.access, "stats", days=30)
    expect(page.get_by_test_id("store-active")).to_have_text(str(stats["facts"]))
    expect(page.get_by_test_id("store-retired")).to_have_text(str(stats["retired"]))
    expect(page.get_by_test_id("store-superseded")).to_have_text(str(stats["superseded"]))
    assert page.get_by_test_id("growth-chart").get_attribute("data-points") == "30"
    expect(page.get_by_test_id("store-span")).to_contain_text(stats["oldest"][:10])
    page.screenshot(path=str(artifacts / "overview.png"), full_page=True)

    # The window selector redraws with one point per day of the new window.
    page.get_by_test_id("window-7").click()
    expect(page.get_by_test_id("daily-chart")).to_have_attribute("data-points", "7")
    _today_is_labelled(page.get_by_test_id("daily-chart"))
    week = rest(base_url, seeded.access, "queries/summary", days=7)
    expect(page.get_by_test_id("total-zero-match")).to_have_text(str(week["totals"]["zero_match"]))
    page.get_by_test_id("window-365").click()
    expect(page.get_by_test_id("daily-chart")).to_have_attribute("data-points", "365")
    assert page.get_by_test_id("daily-table").locator("tbody tr").count() == 365
    _today_is_labelled(page.get_by_test_id("daily-chart"))
    _today_is_labelled(page.get_by_test_id("growth-chart"))

    # A top fact links to its page.
    first = summary["top_facts"][0]
    link = page.get_by_test_id("top-fact-link").first
    assert link.get_attribute("href") == f"#/facts/{first['uid']}"
    link.click()
    ui.ready("facts")
    expect(page.get_by_test_id("fact-title")).to_have_text(first["title"])
    expect(page.get_by_test_id("fact-uid")).to_have_text(first["uid"])


def test_fact_page_shows_chain_and_revisions(base_url: str, seeded: Seeded, ui: PageSession, artifacts: Path) -> None:
    page = ui.page
    ui.login(base_url, "alpha", seeded.access.token)
    ui.ready("overview")
    old, new = seeded.uids["db"], seeded.uids["db_v2"]

    page.goto(f"{base_url}/ui/#/facts/{old}")
    ui.ready("facts")
    expect(page.get_by_test_id("fact-status")).to_have_text("superseded")
    successor = page.get_by_test_id("fact-successor")
    expect(successor).to_have_attribute("data-uid", new)
    expect(successor).to_have_attribute("href", f"#/facts/{new}")
    assert page.get_by_test_id("fact-chain").locator("li").count() == 2
    page.screenshot(path=str(artifacts / "fact-superseded.png"), full_page=True)

    successor.click()
    expect(page.get_by_test_id("fact-uid")).to_have_text(new)
    expect(page.get_by_test_id("fact-status")).to_have_text("active")
    expect(page.get_by_test_id("fact-predecessor")).to_have_attribute("data-uid", old)
    expect(page.get_by_test_id("fact-text")).to_contain_text("PostgreSQL 17")

    # Tags amended in place: the earlier values are a revision of the same uid.
    page.goto(f"{base_url}/ui/#/facts/{seeded.uids['pytest']}")
    expect(page.get_by_test_id("fact-uid")).to_have_text(seeded.uids["pytest"])
    expect(page.get_by_test_id("revision-row")).to_have_count(1)
    expect(page.get_by_test_id("chain-empty")).to_be_visible()

    # A retired fact says so, with its reason.
    page.goto(f"{base_url}/ui/#/facts/{seeded.uids['deploy']}")
    expect(page.get_by_test_id("retired-notice")).to_contain_text("blue cluster was shut down")


def test_wrong_token_shows_a_clear_error(
    base_url: str, services: Services, alpha: ProfileAccess, ui: PageSession, artifacts: Path
) -> None:
    page = ui.page
    ui.login(base_url, "alpha", "not-a-token")
    banner = page.get_by_test_id("error-banner")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("not accepted")
    expect(banner).to_contain_text("401")
    expect(page.get_by_test_id("login")).to_be_visible()
    assert page.evaluate("() => sessionStorage.length") == 0
    page.screenshot(path=str(artifacts / "wrong-token.png"))

    # Another profile's valid token does not open alpha either.
    beta = make_profile(services, "beta")
    ui.login(base_url, "alpha", beta.token)
    expect(banner).to_contain_text("not accepted")
    expect(banner).to_contain_text("Check the profile name")
    expect(banner).not_to_contain_text("bearer token")  # the API's text for agents is not pasted before the hint
    expect(page.get_by_test_id("login")).to_be_visible()

    # The right one does; the error goes away.
    ui.login(base_url, "alpha", alpha.token)
    ui.ready("overview")
    expect(banner).to_be_hidden()


def test_token_stays_in_session_storage_and_logout_clears_it(
    base_url: str, seeded: Seeded, ui: PageSession
) -> None:
    page = ui.page
    token = seeded.access.token
    ui.login(base_url, "alpha", token)
    ui.ready("overview")
    stored = json.loads(page.evaluate("() => sessionStorage.getItem('memory.dashboard.auth')"))
    assert stored == {"profile": "alpha", "token": token}
    assert page.evaluate("() => localStorage.length") == 0
    assert page.context.cookies() == []

    # It is sent as a Bearer header and never appears in a URL.
    with page.expect_request(lambda r: "/api/alpha/facts" in r.url) as info:
        page.get_by_role("link", name="Facts", exact=True).click()
    assert info.value.headers.get("authorization") == f"Bearer {token}"
    ui.ready("facts")
    assert all(token not in url for url in ui.requests)
    assert token not in page.url

    # A reload in the same tab keeps the session.
    page.reload()
    ui.ready("facts")

    page.get_by_test_id("logout").click()
    expect(page.get_by_test_id("login")).to_be_visible()
    assert page.evaluate("() => sessionStorage.getItem('memory.dashboard.auth')") is None
    expect(page.get_by_test_id("login-profile")).to_have_value("alpha")
    expect(page.get_by_test_id("login-token")).to_have_value("")


def test_query_log_rows_and_details(base_url: str, seeded: Seeded, ui: PageSession, services: Services) -> None:
    page = ui.page
    ui.login(base_url, "alpha", seeded.access.token)
    ui.ready("overview")
    page.get_by_role("link", name="Query log").click()
    ui.ready("queries")
    total = len(seeded.searches)
    expect(page.get_by_test_id("query-row")).to_have_count(total)
    page.get_by_test_id("queries-limit").select_option("20")
    ui.ready("queries")
    expect(page.get_by_test_id("query-row")).to_have_count(min(total, 20))
    page.get_by_test_id("queries-limit").select_option("500")
    ui.ready("queries")
    expect(page.get_by_test_id("query-row")).to_have_count(total)

    listing = rest(base_url, seeded.access, "queries", limit=500)["queries"]
    hit = next(q for q in listing if q["returned_count"] > 0)
    miss = next(q for q in listing if q["matched_count"] == 0)
    assert "miss" in (page.locator(f"[data-testid=query-row][data-id='{miss['id']}']").get_attribute("class") or "")

    page.locator(f"[data-testid=query-row][data-id='{hit['id']}']").click()
    detail = page.get_by_test_id("query-detail")
    expect(detail).to_contain_text(hit["query"])
    one = rest(base_url, seeded.access, f"queries/{hit['id']}")["query"]
    results = page.get_by_test_id("query-result")
    expect(results).to_have_count(len(one["results"]))
    first = one["results"][0]
    expect(results.first).to_contain_text(first["uid"])
    expect(results.first).to_contain_text(f"{first['score']:.4f}")
    assert page.url.endswith(f"#/queries/{hit['id']}")
    expect(page.get_by_test_id("query-window")).to_have_text("any time")

    # A search with a time window shows it, as resolved when it ran.
    windowed = services.search.search(services.profiles.get("alpha"), "pytest", since="2026-11-01", until="7d")
    page.goto(f"{base_url}/ui/#/queries/{windowed.query_id}")
    expect(page.get_by_test_id("query-window")).to_contain_text("since 2026-11-01")
    expect(page.get_by_test_id("query-window")).to_contain_text("until ")


def test_fact_browser_filters_and_paging(
    base_url: str, alpha: ProfileAccess, page_factory: Callable[..., PageSession]
) -> None:
    seeded = seed(base_url, alpha, extra_facts=45)  # 51 facts in all: more than one page of 50
    ui = page_factory()
    page = ui.page
    ui.login(base_url, "alpha", alpha.token)
    ui.ready("overview")
    page.get_by_role("link", name="Facts", exact=True).click()
    ui.ready("facts")
    rows = page.get_by_test_id("fact-row")
    expect(rows).to_have_count(50)
    page.get_by_test_id("facts-more").click()
    expect(rows).to_have_count(51)
    expect(page.get_by_test_id("facts-more")).to_be_hidden()
    uids = [rows.nth(i).get_attribute("data-uid") for i in range(51)]
    assert len(set(uids)) == 51 and set(seeded.uids.values()) == set(uids)

    page.get_by_test_id("filter-status").select_option("superseded")
    page.get_by_test_id("filter-apply").click()
    expect(rows).to_have_count(1)
    assert rows.first.get_attribute("data-uid") == seeded.uids["db"]
    assert "status=superseded" in page.url

    page.get_by_test_id("filter-status").select_option("")
    page.get_by_test_id("filter-kind").select_option("decision")
    page.get_by_test_id("filter-apply").click()
    expect(rows).to_have_count(2)

    page.get_by_test_id("filter-kind").select_option("")
    page.get_by_test_id("filter-tag").fill("deploy")
    page.get_by_test_id("filter-apply").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("retired")

    page.get_by_test_id("filter-tag").fill("no-such-tag")
    page.get_by_test_id("filter-apply").click()
    expect(page.get_by_test_id("facts-empty")).to_contain_text("No facts match")

    # The time window: the facts written or last changed on the newest fact's day, as the API lists them.
    page.get_by_test_id("filter-tag").fill("")
    newest = rest(base_url, alpha, "facts", limit=1)["facts"][0]["updated_at"][:10]
    expected = [f["uid"] for f in rest(base_url, alpha, "facts", since=newest, until=newest)["facts"]]
    assert 0 < len(expected) < 51
    page.get_by_test_id("filter-since").fill(newest)
    page.get_by_test_id("filter-until").fill(newest)
    page.get_by_test_id("filter-apply").click()
    expect(rows).to_have_count(len(expected))
    assert [rows.nth(i).get_attribute("data-uid") for i in range(len(expected))] == expected
    assert f"since={newest}" in page.url and f"until={newest}" in page.url
    page.get_by_test_id("filter-since").fill("last week")
    page.get_by_test_id("filter-apply").click()
    expect(page.get_by_test_id("error-banner")).to_contain_text("since must be")


def test_empty_profile_has_empty_states(base_url: str, alpha: ProfileAccess, ui: PageSession) -> None:
    page = ui.page
    ui.login(base_url, "", alpha.token)  # the profile name is taken from the token
    ui.ready("overview")
    expect(page.get_by_test_id("profile-name")).to_have_text("alpha")
    expect(page.get_by_test_id("empty-state")).to_contain_text("empty")
    expect(page.get_by_test_id("total-zero-match")).to_have_text("0")
    assert page.get_by_test_id("daily-chart").get_attribute("data-points") == "30"
    expect(page.get_by_test_id("top-facts-empty")).to_be_visible()
    page.get_by_role("link", name="Query log").click()
    expect(page.get_by_test_id("empty-state")).to_contain_text("No searches")
    page.get_by_role("link", name="Facts", exact=True).click()
    expect(page.get_by_test_id("facts-empty")).to_contain_text("no facts")
    expect(page.get_by_test_id("error-banner")).to_be_hidden()


def test_api_error_and_slow_api_states(base_url: str, seeded: Seeded, ui: PageSession, artifacts: Path) -> None:
    page = ui.page
    ui.login(base_url, "alpha", seeded.access.token)
    ui.ready("overview")

    # An API error shows the message from the JSON error body.
    page.goto(f"{base_url}/ui/#/facts/no-such-uid")
    banner = page.get_by_test_id("error-banner")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("no fact 'no-such-uid' in this profile")
    expect(banner).to_contain_text("404")
    expect(page.get_by_test_id("fact-missing")).to_be_visible()

    # A slow API shows the spinner until the answer arrives.
    held: list[Any] = []
    is_stats = lambda url: "/api/alpha/stats?" in url  # noqa: E731
    page.route(is_stats, lambda route: held.append(route))
    page.get_by_role("link", name="Overview").click()
    spinner = page.get_by_test_id("loading")
    expect(spinner).to_be_visible()
    expect(banner).to_be_hidden()
    page.screenshot(path=str(artifacts / "loading.png"))
    assert held, "the stats request was held"
    for route in held:
        route.continue_()
    page.unroute(is_stats)
    ui.ready("overview")
    expect(spinner).to_be_hidden()

    # A revoked token mid-session sends the reviewer back to the login form with the reason.
    page.route(lambda url: "/api/alpha/queries?" in url, lambda route: route.fulfill(
        status=401, content_type="application/json", headers={"WWW-Authenticate": "Bearer"},
        body=json.dumps({"error": {"status": 401, "code": "unauthorized", "message": "invalid or missing token"}}),
    ))
    page.get_by_role("link", name="Query log").click()
    expect(page.get_by_test_id("login")).to_be_visible()
    expect(banner).to_contain_text("not accepted for profile “alpha”")
    expect(banner).not_to_contain_text("invalid or missing token")
    assert page.evaluate("() => sessionStorage.getItem('memory.dashboard.auth')") is None


@pytest.mark.parametrize("viewport", [{"width": 390, "height": 844}], ids=["phone"])
def test_readable_on_a_phone(
    base_url: str, seeded: Seeded, page_factory: Callable[..., PageSession], viewport: dict[str, int], artifacts: Path
) -> None:
    ui = page_factory(viewport=viewport, device_scale_factor=2, is_mobile=True, has_touch=True)
    page = ui.page
    ui.login(base_url, "alpha", seeded.access.token)
    ui.ready("overview")
    # Nothing wider than the screen except inside scrollable table wrappers.
    assert page.evaluate("() => document.documentElement.scrollWidth") <= viewport["width"]
    assert page.get_by_test_id("daily-chart").bounding_box()["width"] <= viewport["width"]
    page.screenshot(path=str(artifacts / "overview-phone.png"), full_page=True)
    page.goto(f"{base_url}/ui/#/facts/{seeded.uids['db']}")
    ui.ready("facts")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= viewport["width"]


def test_a_miss_says_which_retired_fact_it_matched(base_url: str, seeded: Seeded, ui: PageSession,
                                                   artifacts: Path) -> None:
    """"staging deploys blue cluster" was searched after "Deploy target" was retired: a miss where memory once
    knew, and the detail names the fact."""
    page = ui.page
    listing = rest(base_url, seeded.access, "queries", limit=500)["queries"]
    miss = next(q for q in listing if q["query"] == "staging deploys blue cluster")
    assert (miss["matched_count"], miss["inactive_matched"]) == (0, 1)
    ui.login(base_url, "alpha", seeded.access.token)
    ui.ready("overview")
    page.get_by_role("link", name="Query log").click()
    ui.ready("queries")
    page.locator(f"[data-testid=query-row][data-id='{miss['id']}']").click()
    matches = page.get_by_test_id("inactive-match")
    expect(matches).to_have_count(1)
    expect(matches.first).to_contain_text("Deploy target")
    expect(matches.first.get_by_test_id("inactive-match-status")).to_have_text("retired")
    assert matches.first.locator("a").get_attribute("href").endswith(seeded.uids["deploy"])
    page.screenshot(path=str(artifacts / "query-detail-once-known.png"), full_page=True)
