"""The dashboard at first contact (issue 13): facts named by title, tables that fit a phone, top facts that were
retired or superseded marked as such, chart legends that say something before any hover."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import ProfileAccess
from tests.ui.conftest import PageSession, Seeded, rest, seed, tool

expect: Any
try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips these tests
    expect = None

PHONE = {"width": 390, "height": 844}
FACT_LOOKUPS = 4  # app.js: at most this many fact look-ups at a time


def _fact_requests(ui: PageSession, uid: str) -> int:
    return sum(1 for url in ui.requests if url.split("?")[0].endswith(f"/api/alpha/facts/{uid}"))


def test_query_log_and_detail_name_facts_by_title(base_url: str, seeded: Seeded, ui: PageSession) -> None:
    page = ui.page
    ui.login(base_url, "alpha", seeded.access.token)
    ui.ready("overview")
    page.get_by_role("link", name="Query log").click()
    ui.ready("queries")

    listing = rest(base_url, seeded.access, "queries", limit=500)["queries"]
    hits = [q for q in listing if q["top_uid"]]
    assert hits
    for q in hits:
        fact = rest(base_url, seeded.access, f"facts/{q['top_uid']}")["fact"]
        link = page.locator(f"[data-testid=query-row][data-id='{q['id']}'] [data-testid=top-hit-link]")
        expect(link).to_have_text(fact["title"])  # the title, not the uid
        expect(link).to_have_attribute("title", q["top_uid"])  # the uid as the tooltip
        expect(link).to_have_attribute("href", f"#/facts/{q['top_uid']}")
    # One look-up per fact however many rows name it (a per-page-load cache).
    for uid in {q["top_uid"] for q in hits}:
        assert _fact_requests(ui, uid) == 1, uid

    # The detail of a search: each returned fact by title, its uid as small text.
    hit = hits[0]
    page.locator(f"[data-testid=query-row][data-id='{hit['id']}'] td.query-text").click()
    one = rest(base_url, seeded.access, f"queries/{hit['id']}")["query"]
    results = page.get_by_test_id("query-result")
    expect(results).to_have_count(len(one["results"]))
    for i, r in enumerate(one["results"]):
        fact = rest(base_url, seeded.access, f"facts/{r['uid']}")["fact"]
        expect(results.nth(i).get_by_test_id("result-link")).to_have_text(fact["title"])
        expect(results.nth(i).locator(".uid-hint")).to_have_text(r["uid"])
    assert _fact_requests(ui, hit["top_uid"]) == 1, "the top hit came from the cache"

    # Clicking a top-hit link opens the fact (not the row's detail).
    page.locator(f"[data-testid=query-row][data-id='{hit['id']}'] [data-testid=top-hit-link]").click()
    ui.ready("facts")
    expect(page.get_by_test_id("fact-uid")).to_have_text(hit["top_uid"])


def test_a_fact_that_cannot_be_fetched_keeps_its_uid(base_url: str, seeded: Seeded, ui: PageSession) -> None:
    page = ui.page
    listing = rest(base_url, seeded.access, "queries", limit=500)["queries"]
    hit = next(q for q in listing if q["top_uid"])
    broken = hit["top_uid"]
    page.route(lambda url: url.split("?")[0].endswith(f"/api/alpha/facts/{broken}"),
               lambda route: route.fulfill(status=500, content_type="application/json",
                                           body='{"error": {"status": 500, "code": "internal", "message": "boom"}}'))
    ui.login(base_url, "alpha", seeded.access.token)
    ui.ready("overview")
    page.goto(f"{base_url}/ui/#/queries/{hit['id']}")
    ui.ready("queries")
    link = page.locator(f"[data-testid=query-row][data-id='{hit['id']}'] [data-testid=top-hit-link]")
    expect(link).to_have_attribute("data-resolved", "uid")
    expect(link).to_have_text(broken)
    first = page.get_by_test_id("query-result").first.get_by_test_id("result-link")
    expect(first).to_have_attribute("data-resolved", "uid")
    expect(first).to_have_text(broken)
    # A background look-up that failed is no error of the view.
    expect(page.get_by_test_id("error-banner")).to_be_hidden()


def test_fact_lookups_are_bounded(
    base_url: str, alpha: ProfileAccess, page_factory: Callable[..., PageSession]
) -> None:
    seed(base_url, alpha, extra_facts=12)
    found = tool(base_url, alpha, "memory_search", query="research note embeddings cosine finding", limit=10)
    assert found["returned_count"] >= 2 * FACT_LOOKUPS
    row = rest(base_url, alpha, "queries", limit=1)["queries"][0]
    ui = page_factory()
    page = ui.page
    ui.login(base_url, "alpha", alpha.token)
    ui.ready("overview")

    held: list[Any] = []
    release = {"all": False}

    def hold(route: Any) -> None:
        if release["all"]:
            route.continue_()
        else:
            held.append(route)

    page.route(re.compile(r"/api/alpha/facts/[^/?]+$"), hold)
    page.goto(f"{base_url}/ui/#/queries/{row['id']}")
    ui.ready("queries")
    expect(page.get_by_test_id("query-result")).to_have_count(found["returned_count"])
    page.wait_for_timeout(500)
    assert len(held) == FACT_LOOKUPS, "at most FACT_LOOKUPS look-ups in flight"
    expect(page.get_by_test_id("loading")).to_be_hidden()  # background look-ups show no spinner

    release["all"] = True
    for route in held:
        route.continue_()
    links = page.get_by_test_id("result-link")
    for i, fact in enumerate(found["facts"]):
        expect(links.nth(i)).to_have_text(fact["title"])


def test_queued_fact_lookups_are_dropped_at_logout(
    base_url: str, alpha: ProfileAccess, page_factory: Callable[..., PageSession]
) -> None:
    seed(base_url, alpha, extra_facts=12)
    found = tool(base_url, alpha, "memory_search", query="research note embeddings cosine finding", limit=10)
    row = rest(base_url, alpha, "queries", limit=1)["queries"][0]
    ui = page_factory()
    page = ui.page
    ui.login(base_url, "alpha", alpha.token)
    ui.ready("overview")
    held: list[Any] = []
    lookup = re.compile(r"/api/alpha/facts/[^/?]+$")
    page.route(lookup, lambda route: held.append(route))
    page.goto(f"{base_url}/ui/#/queries/{row['id']}")
    expect(page.get_by_test_id("query-result")).to_have_count(found["returned_count"])
    page.wait_for_timeout(300)
    assert len(held) == FACT_LOOKUPS

    page.get_by_test_id("logout").click()
    expect(page.get_by_test_id("login")).to_be_visible()
    sent = len(ui.requests)
    for route in held:
        route.continue_()
    page.wait_for_timeout(500)
    later = [u for u in ui.requests[sent:] if lookup.search(u.split("?")[0])]
    assert later == [], "no look-up left the queue after the reviewer logged out"


def _right_edge(box: dict[str, float]) -> float:
    return box["x"] + box["width"]


def _assert_column_on_screen(page: Any, table: Any, header: str, cells: Any) -> None:
    th = table.locator("thead th", has_text=re.compile(f"^{header}$", re.I))
    expect(th).to_be_visible()
    box = th.bounding_box()
    assert box["x"] >= 0 and _right_edge(box) <= PHONE["width"], (header, box)
    assert cells.count() > 0
    for i in range(cells.count()):
        cell = cells.nth(i).bounding_box()
        assert cell["x"] >= 0 and _right_edge(cell) <= PHONE["width"], (header, i, cell)
    wrap = table.locator("xpath=..")
    assert wrap.evaluate("el => el.scrollWidth <= el.clientWidth"), f"the {header} table scrolls sideways"
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")


def test_tables_fit_a_phone(
    base_url: str, seeded: Seeded, page_factory: Callable[..., PageSession], artifacts: Path
) -> None:
    ui = page_factory(viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
    page = ui.page
    ui.login(base_url, "alpha", seeded.access.token)
    ui.ready("overview")
    page.locator("#h-daily").locator("xpath=..").screenshot(path=str(artifacts / "daily-chart-phone.png"))
    page.get_by_test_id("top-facts").screenshot(path=str(artifacts / "top-facts-phone.png"))

    page.get_by_role("link", name="Query log").click()
    ui.ready("queries")
    queries = page.get_by_test_id("queries-table")
    expect(queries.get_by_test_id("top-hit-link").first).to_have_attribute("data-resolved", "title")
    _assert_column_on_screen(page, queries, "Matched", queries.locator("tbody td:nth-child(3)"))
    _assert_column_on_screen(page, queries, "Top hit", queries.get_by_test_id("top-hit"))
    _assert_column_on_screen(page, queries, "Query", queries.locator("tbody td.query-text"))
    page.screenshot(path=str(artifacts / "query-log-phone.png"), full_page=True)

    # A row's detail, with the columns the phone leaves out, also fits.
    queries.locator("tbody tr").first.locator("td.query-text").click()
    expect(page.get_by_test_id("query-detail")).to_be_visible()
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    page.screenshot(path=str(artifacts / "query-detail-phone.png"), full_page=True)

    page.get_by_role("link", name="Facts", exact=True).click()
    ui.ready("facts")
    facts = page.get_by_test_id("facts-table")
    _assert_column_on_screen(page, facts, "Status", facts.locator("tbody td:nth-child(2)"))
    _assert_column_on_screen(page, facts, "Title", facts.get_by_test_id("fact-link"))
    page.screenshot(path=str(artifacts / "facts-phone.png"), full_page=True)


def test_query_log_on_a_laptop_keeps_every_column(
    base_url: str, seeded: Seeded, ui: PageSession, artifacts: Path
) -> None:
    page = ui.page
    ui.login(base_url, "alpha", seeded.access.token)
    ui.ready("overview")
    page.get_by_role("link", name="Query log").click()
    ui.ready("queries")
    headers = page.get_by_test_id("queries-table").locator("thead th")
    expect(headers).to_have_text(["When", "Query", "Matched", "Returned", "Top hit", "Tags", "Kind", "Latency"],
                                 ignore_case=True)
    for i in range(headers.count()):
        expect(headers.nth(i)).to_be_visible()
    listing = rest(base_url, seeded.access, "queries", limit=500)["queries"]
    hit = next(q for q in listing if q["returned_count"] > 0)
    page.locator(f"[data-testid=query-row][data-id='{hit['id']}'] td.query-text").click()
    expect(page.get_by_test_id("result-link").first).to_have_attribute("data-resolved", "title")
    page.screenshot(path=str(artifacts / "query-log.png"), full_page=True)
    page.get_by_role("link", name="Facts", exact=True).click()
    ui.ready("facts")
    expect(page.get_by_test_id("facts-table").locator("thead th")).to_have_text(
        ["Title", "Status", "Kind", "Tags", "Created"], ignore_case=True)
    page.screenshot(path=str(artifacts / "facts.png"), full_page=True)


def test_top_facts_mark_retired_and_superseded(
    base_url: str, seeded: Seeded, ui: PageSession, artifacts: Path
) -> None:
    top = rest(base_url, seeded.access, "queries/summary", days=30)["top_facts"]
    assert len(top) >= 3, top
    retired, superseded, active = top[0]["uid"], top[1]["uid"], top[2]["uid"]
    tool(base_url, seeded.access, "memory_forget", uid=retired, reason="no longer true")
    tool(base_url, seeded.access, "memory_update", uid=superseded, text="A rewritten text, so a new uid.")

    page = ui.page
    ui.login(base_url, "alpha", seeded.access.token)
    ui.ready("overview")
    row = lambda uid: page.locator(f"[data-testid=top-fact][data-uid='{uid}']")  # noqa: E731
    expect(row(retired).get_by_test_id("fact-label-status")).to_have_text("retired")
    expect(row(superseded).get_by_test_id("fact-label-status")).to_have_text("superseded")
    expect(row(active).get_by_test_id("top-fact-link")).to_have_attribute("data-resolved", "title")
    expect(row(active).get_by_test_id("fact-label-status")).to_have_count(0)
    # Still named by the title the summary gave, and still a link to the fact.
    expect(row(retired).get_by_test_id("top-fact-link")).to_have_text(top[0]["title"])
    expect(row(retired).get_by_test_id("top-fact-link")).to_have_attribute("href", f"#/facts/{retired}")
    page.get_by_test_id("top-facts").screenshot(path=str(artifacts / "top-facts.png"))


def _legend_values(page: Any, chart: str) -> list[str]:
    return page.get_by_test_id(chart).locator(".u-legend .u-value").all_inner_texts()


def test_chart_legends_show_the_window_totals_before_any_hover(
    base_url: str, seeded: Seeded, ui: PageSession
) -> None:
    page = ui.page
    ui.login(base_url, "alpha", seeded.access.token)
    ui.ready("overview")
    summary = rest(base_url, seeded.access, "queries/summary", days=30)
    stats = rest(base_url, seeded.access, "stats", days=30)
    for chart in ("daily-chart", "growth-chart"):
        legend = page.get_by_test_id(chart).locator(".u-legend")
        expect(legend).to_be_visible()
        assert "–" not in legend.inner_text(), legend.inner_text()
    searches = sum(d["searches"] for d in summary["daily"])
    zero = sum(d["zero_match"] for d in summary["daily"])
    assert _legend_values(page, "daily-chart") == ["total of 30 days", str(searches), str(zero)]
    created = sum(d["created"] for d in stats["daily"])
    retired = sum(d["retired"] for d in stats["daily"])
    assert _legend_values(page, "growth-chart") == ["total of 30 days", str(created), str(retired)]

    # Pointing at a day shows that day; leaving the chart shows the totals again.
    page.get_by_test_id("daily-chart").locator(".u-over").hover()
    expect(page.get_by_test_id("daily-chart").locator(".u-legend .u-value").first).to_have_text(
        re.compile(r"^\d{4}-\d{2}-\d{2}$"))
    page.mouse.move(1, 1)
    expect(page.get_by_test_id("daily-chart").locator(".u-legend .u-value").first).to_have_text("total of 30 days")

    # Another window: the totals follow it.
    page.get_by_test_id("window-7").click()
    expect(page.get_by_test_id("daily-chart")).to_have_attribute("data-points", "7")
    week = rest(base_url, seeded.access, "queries/summary", days=7)
    expect(page.get_by_test_id("daily-chart").locator(".u-legend .u-value")).to_have_text(
        ["total of 7 days", str(sum(d["searches"] for d in week["daily"])),
         str(sum(d["zero_match"] for d in week["daily"]))])
