"""The Curation view (#/curation, issue 39) in headless Chromium, against a real server with the real embedding
model (near-duplicates are a matter of meaning): facts written and searched through the MCP tools, so the query
log and the recall counts are the service's own. The view is compared with the REST API it reads."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from service.config import Settings
from service.container import Services, build_services
from service.domain.ports import Embedder
from tests.conftest import ProfileAccess
from tests.search.conftest import minilm  # noqa: F401 - the session's loaded model
from tests.ui.conftest import PageSession, days_ago, rest, tool
from tests.ui.hostile import LONG_TITLE, SCROLLING_TABLES_JS, problems

expect: Any
try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips these tests
    expect = None

HOSTILE = '<img src=x onerror="document.body.dataset.pwned=1">Release <b>checklist</b> & "notes"'
# key: (title, text, kind, days ago). A1/A2 and B1/B2 are paraphrases (cosine about 0.9); the rest unrelated.
FACTS = {
    "D": ("Alice prefers dark mode", "Alice wants dark mode in every editor and terminal she uses.", "user", 30),
    "H": (HOSTILE, "The release checklist lives in docs/release.md.", "reference", 20),
    "L": (LONG_TITLE, "A title with nowhere to break.", "reference", 15),
    "A1": ("Deploys go out on Tuesdays", "The team ships production deploys every Tuesday afternoon.", "project", 10),
    "A2": ("Production deploys happen on Tuesday", "Every Tuesday afternoon the team deploys to production.",
           "project", 9),
    "B1": ("Use pnpm for the frontend", "The frontend project uses pnpm as its package manager, not npm.",
           "preference", 8),
    "B2": ("The frontend package manager is pnpm", "For the frontend, pnpm is the package manager; do not use npm.",
           "preference", 7),
    "C": ("Postgres listens on port 5433", "The local PostgreSQL server for development listens on port 5433.",
          "reference", 5),
    "E": ("REST API versions live in the URL path",
          "We decided to version the public REST API with a /v1 prefix in the path.", "decision", 0),
}
POSTGRES = ["which port does the local postgres listen on", "postgresql development port", "database port 5433"]
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    return Settings(data_dir=tmp_path, database_url=database_url, embedder="minilm")


@pytest.fixture
def services(settings: Settings, minilm: Embedder) -> Iterator[Services]:  # noqa: F811
    with build_services(settings, embedder=minilm) as svc:
        yield svc


@pytest.fixture
def curated(base_url: str, alpha: ProfileAccess) -> dict[str, str]:
    """The facts above, each written `days ago`; then searches (limit 1) that return C three times and one fact
    of each paraphrased pair once."""
    uids = {}
    for key, (title, text, kind, days) in FACTS.items():
        with days_ago(days):
            uids[key] = tool(base_url, alpha, "memory_write", title=title, text=text, kind=kind)["fact"]["uid"]
    for query in POSTGRES:
        assert [f["uid"] for f in tool(base_url, alpha, "memory_search", query=query, limit=1)["facts"]] == [uids["C"]]
    tool(base_url, alpha, "memory_search", query="which day do production deploys go out", limit=1)
    tool(base_url, alpha, "memory_search", query="frontend package manager pnpm", limit=1)
    return uids


def open_curation(ui: PageSession, base_url: str, token: str) -> Any:
    ui.login(base_url, "alpha", token)
    ui.ready("overview")
    ui.page.get_by_role("link", name="Curation").click()
    ui.ready("curation")
    return ui.page


def _attr(locator: Any, name: str) -> list[str]:
    return list(locator.evaluate_all(f"els => els.map(e => e.dataset.{name})"))


def test_curation_view_shows_never_recalled_most_recalled_and_duplicates(
    base_url: str, alpha: ProfileAccess, curated: dict[str, str], page_factory: Callable[..., PageSession],
    artifacts: Path,
) -> None:
    ui = page_factory(permissions=["clipboard-read", "clipboard-write"])
    page = open_curation(ui, base_url, alpha.token)
    expect(page.get_by_role("heading", name="Curation", level=1)).to_be_visible()
    expect(page.locator("[data-nav=curation]")).to_have_attribute("aria-current", "page")

    # Never recalled: the REST listing (newest first) reversed, the oldest (D, written 30 days ago) first.
    never = [f["uid"] for f in rest(base_url, alpha, "facts", recalled="never", status="active", limit=200)["facts"]]
    assert curated["D"] in never and curated["H"] in never and curated["C"] not in never
    assert never[-1] == curated["D"]
    rows = page.get_by_test_id("never-row")
    expect(rows).to_have_count(len(never))
    assert _attr(rows, "uid") == never[::-1]
    expect(rows.first.get_by_test_id("curation-fact-link")).to_have_text("Alice prefers dark mode")
    expect(page.get_by_test_id("never-list")).to_have_attribute("data-complete", "true")
    expect(page.get_by_test_id("never-total")).to_have_text(
        f"{len(never)} active facts were never returned by a search, oldest first.")
    # A hostile title is text: shown as written, no element made of it, no handler run.
    hostile = page.locator(f"[data-testid=never-row][data-uid='{curated['H']}'] [data-testid=curation-fact-link]")
    expect(hostile).to_have_text(HOSTILE)
    assert page.locator("#view img, #view b").count() == 0
    assert page.evaluate("() => document.body.dataset.pwned") is None

    # Most recalled: C first with its three searches and when the last ran.
    top = rest(base_url, alpha, "facts", order="recalled", status="active", limit=20)["facts"]
    recalled = [f for f in top if f["recalled_count"] > 0]
    assert recalled[0]["uid"] == curated["C"] and recalled[0]["recalled_count"] == 3
    top_rows = page.get_by_test_id("top-recalled-row")
    expect(top_rows).to_have_count(len(recalled))
    assert _attr(top_rows, "uid") == [f["uid"] for f in recalled]
    first = top_rows.first
    expect(first.get_by_test_id("curation-fact-link")).to_have_text("Postgres listens on port 5433")
    expect(first.get_by_test_id("top-recalled-count")).to_have_text("3")
    last = datetime.fromisoformat(recalled[0]["last_recalled_at"].replace("Z", "+00:00")).astimezone(timezone.utc)
    expect(first).to_contain_text(last.strftime("%Y-%m-%d %H:%M") + "\u00a0UTC")

    # Near-duplicates: the two paraphrased pairs, oldest first, the suggested keep marked, the command shown.
    report = rest(base_url, alpha, "duplicates")
    assert sorted(sorted(f["uid"] for f in g["facts"]) for g in report["groups"]) == sorted(
        [sorted([curated["A1"], curated["A2"]]), sorted([curated["B1"], curated["B2"]])])
    groups = page.get_by_test_id("dup-group")
    expect(groups).to_have_count(2)
    for i, expected in enumerate(report["groups"]):
        group = groups.nth(i)
        facts = group.get_by_test_id("dup-fact")
        assert _attr(facts, "uid") == [f["uid"] for f in expected["facts"]]
        assert _attr(facts, "keep") == [str(f["uid"] == expected["keep"]).lower() for f in expected["facts"]]
        expect(group.get_by_test_id("dup-keep")).to_have_count(1)
        keep = group.locator(f"[data-testid=dup-fact][data-uid='{expected['keep']}']")
        expect(keep.get_by_test_id("dup-keep")).to_have_text("keep")
        expect(keep.get_by_test_id("dup-recalled")).to_have_text("1")  # the one its search returned
        expect(group.get_by_test_id("dup-uid")).to_have_text([f["uid"] for f in expected["facts"]])
        expect(group.get_by_test_id("dup-command")).to_have_text(expected["command"])
        expect(group).to_contain_text(f"cosine {expected['similarity']:.2f}")
    deploys = groups.filter(has=page.locator(f"[data-uid='{curated['A1']}']"))
    assert deploys.get_by_test_id("dup-fact").count() == 2
    expect(deploys).to_contain_text("Deploys go out on Tuesdays")
    expect(deploys).to_contain_text("Production deploys happen on Tuesday")

    # Copy: the exact command on the clipboard.
    command = report["groups"][0]["command"]
    assert command.startswith(f"memory duplicates resolve alpha --keep {report['groups'][0]['keep']} --retire ")
    groups.first.get_by_test_id("dup-copy").click()
    expect(groups.first.get_by_test_id("dup-copy-status")).to_have_text("Copied.")
    assert page.evaluate("() => navigator.clipboard.readText()") == command
    page.screenshot(path=str(artifacts / "curation.png"), full_page=True)

    # On a phone: nothing wider than the screen, no table scrolling sideways, nothing shown as null.
    phone = page_factory(**PHONE)
    open_curation(phone, base_url, alpha.token)
    assert problems(phone.page, 390) == []
    assert phone.page.evaluate(SCROLLING_TABLES_JS) == []
    expect(phone.page.get_by_test_id("dup-command")).to_have_count(2)
    phone.page.screenshot(path=str(artifacts / "curation-phone.png"), full_page=True)


# Without the Clipboard API (an address that is not a secure context, or an old browser): the command is
# selected and copied with execCommand, or left selected with a word on how to copy it.
NO_CLIPBOARD_JS = """
window.__clipboard = navigator.clipboard;
Object.defineProperty(navigator, "clipboard", { value: undefined, configurable: true });
"""


@pytest.mark.parametrize("exec_command", ["works", "refused"])
def test_copy_falls_back_to_the_selection(
    exec_command: str, base_url: str, alpha: ProfileAccess, curated: dict[str, str],
    page_factory: Callable[..., PageSession],
) -> None:
    ui = page_factory(permissions=["clipboard-read", "clipboard-write"])
    ui.page.add_init_script(NO_CLIPBOARD_JS
                            + ("document.execCommand = () => false;" if exec_command == "refused" else ""))
    page = open_curation(ui, base_url, alpha.token)
    command = rest(base_url, alpha, "duplicates")["groups"][0]["command"]
    group = page.get_by_test_id("dup-group").first
    group.get_by_test_id("dup-copy").click()
    status = group.get_by_test_id("dup-copy-status")
    if exec_command == "works":
        expect(status).to_have_text("Copied.")
        assert page.evaluate("() => window.__clipboard.readText()") == command
    else:
        expect(status).to_have_text("Selected: press Ctrl+C (⌘C on a Mac) to copy.")
        expect(status).to_have_attribute("data-result", "selected")
    assert page.evaluate("() => window.getSelection().toString()") == command


def _fake_facts(n: int) -> list[dict[str, Any]]:
    """n never-recalled facts, id 1 the oldest; as the listing gives them, newest first."""
    start = datetime(2025, 1, 1, tzinfo=timezone.utc)
    return [{"uid": f"f_fake{i:010d}", "title": f"Unfound note {i}", "text": "x", "kind": "reference", "tags": [],
             "status": "active", "created_at": (start + timedelta(hours=i)).isoformat().replace("+00:00", "Z"),
             "updated_at": (start + timedelta(hours=i)).isoformat().replace("+00:00", "Z"), "retired_at": None,
             "retire_reason": None, "supersedes": None, "superseded_by": None, "recalled_count": 0,
             "last_recalled_at": None} for i in range(n, 0, -1)]


def test_never_recalled_reads_in_passes_and_says_what_is_unread(
    base_url: str, alpha: ProfileAccess, page_factory: Callable[..., PageSession], artifacts: Path,
) -> None:
    """More never-recalled facts than one pass reads (1,000): the listing is stood in for (page.route) with
    1,234 facts in pages as the API pages them; the view says the oldest are unread until it reads on."""
    facts = _fake_facts(1234)
    asked: list[dict[str, list[str]]] = []

    def listing(route: Any) -> None:
        query = parse_qs(urlsplit(route.request.url).query)
        asked.append(query)
        limit = int(query["limit"][0])
        before = int(query["cursor"][0][1:]) if "cursor" in query else len(facts) + 1
        page = [f for f in facts if int(f["uid"][6:]) < before][:limit]
        last = int(page[-1]["uid"][6:]) if page else 0
        route.fulfill(json={"profile": "alpha", "facts": page,
                            "next_cursor": f"f{last}" if page and last > 1 else None})

    ui = page_factory()
    ui.page.route(lambda url: "/facts?" in url and "recalled=never" in url, listing)
    page = open_curation(ui, base_url, alpha.token)
    assert [q["limit"] for q in asked] == [["200"]] * 5 and all(q["status"] == ["active"] for q in asked)
    box = page.get_by_test_id("never-list")
    expect(box).to_have_attribute("data-read", "1000")
    expect(box).to_have_attribute("data-complete", "false")
    expect(page.get_by_test_id("never-partial")).to_contain_text("At least 1,001 active facts")
    rows = page.get_by_test_id("never-row")
    expect(rows).to_have_count(50)
    assert _attr(rows, "uid")[0] == "f_fake0000000235"  # the oldest of the newest 1,000
    expect(page.get_by_test_id("never-shown")).to_have_text("50 of 1,000 shown")
    page.screenshot(path=str(artifacts / "curation-partial.png"), full_page=True)

    page.get_by_test_id("never-read-on").click()
    expect(box).to_have_attribute("data-complete", "true")
    assert len(asked) == 7 and asked[5]["cursor"] == ["f235"]
    expect(page.get_by_test_id("never-total")).to_have_text(
        "1,234 active facts were never returned by a search, oldest first.")
    expect(page.get_by_test_id("never-partial")).to_have_count(0)
    expect(page.get_by_test_id("never-read-on")).to_be_hidden()
    assert _attr(rows, "uid")[:2] == ["f_fake0000000001", "f_fake0000000002"]
    page.get_by_test_id("never-show-more").click()
    expect(rows).to_have_count(100)
    expect(page.get_by_test_id("never-shown")).to_have_text("100 of 1,234 shown")


def test_curation_empty_profile_says_so(base_url: str, alpha: ProfileAccess, ui: PageSession) -> None:
    page = open_curation(ui, base_url, alpha.token)
    expect(page.get_by_test_id("never-empty")).to_have_text("This profile has no active facts yet.")
    expect(page.get_by_test_id("top-recalled-empty")).to_have_text("This profile has no active facts yet.")
    expect(page.get_by_test_id("dup-empty")).to_have_text("No active facts to compare yet.")
    tool(base_url, alpha, "memory_write", title="Alice prefers dark mode", text="Alice wants dark mode everywhere.",
         kind="user")
    tool(base_url, alpha, "memory_search", query="dark mode", limit=1)
    page.reload()
    ui.ready("curation")
    expect(page.get_by_test_id("never-empty")).to_have_text("Every active fact has been returned by a search.")
    expect(page.get_by_test_id("dup-empty")).to_have_text("No near-duplicates among 1 active fact (cosine ≥ 0.75).")
    expect(page.get_by_test_id("top-recalled-row")).to_have_count(1)
