"""The "What memory did not know" panel (#/gaps) and its links into the query log, in headless Chromium,
against a real server seeded through the MCP tools (embedder `none`: lexical grouping)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.ui.conftest import PageSession, Seeded, rest, tool

expect: Any
try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips these tests
    expect = None

PARAPHRASES = ["Kubernetes namespace quota?", "quota of the kubernetes namespace", "kubernetes namespace quotas"]


def test_gap_panel_draws_the_report_and_links_each_group_to_its_searches(
    base_url: str, seeded: Seeded, ui: PageSession, artifacts: Path
) -> None:
    for text in PARAPHRASES:
        tool(base_url, seeded.access, "memory_search", query=text)
    report = rest(base_url, seeded.access, "queries/gaps", days=30)
    zero = report["zero_match"]["groups"]
    top = zero[0]
    assert top["representative"] == "kubernetes namespace quota" and top["count"] == 5  # 2 + the 3 paraphrases
    retired = report["retired_only"]["groups"]
    assert [g["representative"] for g in retired] == ["staging deploys blue cluster"]

    page = ui.page
    ui.login(base_url, "alpha", seeded.access.token)
    ui.ready("overview")
    page.get_by_role("link", name="Gaps").click()
    ui.ready("gaps")
    expect(page.get_by_role("heading", name="What memory did not know", level=1)).to_be_visible()
    expect(page.get_by_test_id("gap-grouping")).to_have_attribute("data-method", "lexical")

    # The drawing: one bar per group (up to 12), largest first, with a text alternative for screen readers.
    zero_card = page.get_by_test_id("gaps-zero_match")
    chart = zero_card.get_by_test_id("gap-chart")
    expect(chart).to_have_attribute("role", "img")
    assert "kubernetes namespace quota" in (chart.get_attribute("aria-label") or "")
    bars = chart.locator("li")
    expect(bars).to_have_count(min(12, len(zero)))
    assert [int(c) for c in bars.evaluate_all("els => els.map(e => e.dataset.count)")] == \
        [g["count"] for g in zero[:12]]

    # The table alternative: every group, its texts, counts and links.
    rows = zero_card.get_by_test_id("gap-group")
    expect(rows).to_have_count(len(zero))
    first = rows.first
    assert first.get_attribute("data-id") == top["id"]
    expect(first.get_by_test_id("gap-link")).to_have_text(top["representative"])
    expect(first.get_by_test_id("gap-query")).to_have_count(len(top["queries"]))
    for q in top["queries"]:
        expect(first).to_contain_text(q["query"])
    expect(zero_card.get_by_role("table")).to_have_count(1)

    retired_card = page.get_by_test_id("gaps-retired_only")
    fact = retired_card.get_by_test_id("gap-retired-fact")
    expect(fact).to_have_count(1)
    expect(fact).to_contain_text("Deploy target")
    expect(fact.get_by_test_id("gap-retired-status")).to_have_text("retired")
    page.screenshot(path=str(artifacts / "gaps.png"), full_page=True)

    # A group's link opens the query log narrowed to exactly that group's searches.
    first.get_by_test_id("gap-link").click()
    ui.ready("queries")
    assert f"gap={top['id']}" in page.url
    expect(page.get_by_test_id("gap-filter-name")).to_contain_text(top["representative"])
    listed = rest(base_url, seeded.access, f"queries/gaps/{top['id']}", days=30, limit=500)["queries"]
    query_rows = page.get_by_test_id("query-row")
    expect(query_rows).to_have_count(top["count"])
    assert query_rows.evaluate_all("els => els.map(e => Number(e.dataset.id))") == [q["id"] for q in listed]
    texts = {q["query"] for q in top["queries"]}
    for text in query_rows.locator("td.query-text").evaluate_all("els => els.map(e => e.firstChild.textContent)"):
        assert text in texts
    query_rows.first.click()
    expect(page.get_by_test_id("query-detail")).to_contain_text(listed[0]["query"])
    page.screenshot(path=str(artifacts / "gap-searches.png"), full_page=True)

    page.get_by_test_id("gap-filter-clear").click()
    ui.ready("queries")
    expect(page.get_by_test_id("gap-filter")).to_have_count(0)
    expect(page.get_by_test_id("query-row")).to_have_count(len(seeded.searches) + len(PARAPHRASES))


def test_gap_panel_empty_and_gone_group(base_url: str, alpha: Any, ui: PageSession) -> None:
    page = ui.page
    ui.login(base_url, "alpha", alpha.token)
    ui.ready("overview")
    page.goto(f"{base_url}/ui/#/gaps")
    ui.ready("gaps")
    expect(page.get_by_test_id("gaps-empty-zero_match")).to_be_visible()
    expect(page.get_by_test_id("gaps-empty-retired_only")).to_be_visible()
    page.goto(f"{base_url}/ui/#/queries?gap=z0123456789abcde&days=30")
    expect(page.get_by_test_id("error-banner")).to_be_visible()
    expect(page.get_by_test_id("error-message")).to_contain_text("no gap group")
