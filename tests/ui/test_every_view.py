"""Every view of the dashboard, on a laptop and on a phone, over hostile-looking data (tests/ui/hostile.py): no view
shows `null`, `undefined`, `NaN` or `Invalid Date` as text, and every page fits the screen (390 px on the phone)
with its header across the whole width. A screenshot of each view goes to test-output/ui/every-view/."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from service import clock
from service.container import Services
from tests.conftest import ProfileAccess, make_profile
from tests.ui.conftest import PageSession, rest
from tests.ui.hostile import LONG_TAGS, SCROLLING_TABLES_JS, Hostile, problems, seed_hostile

LONG_PROFILE = ("an_empty_profile_with_a_very_long_name_" * 2)[:63]  # PROFILE_NAME_MAX, no "-" to break at
VIEWPORTS = {
    "desktop": {"viewport": {"width": 1280, "height": 800}},
    "phone": {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True,
              "has_touch": True},
}
# On a phone every table fits the screen but a fact's revisions, which may scroll sideways inside its card.
PHONE_SCROLLING_TABLES = {"revisions-table"}

# The page has drawn: the view is ready, every fact named by uid has its title (or gave up), no request is open.
SETTLED_JS = """() => !document.querySelector(".fact-label > a:not([data-resolved])")
  && document.querySelector("[data-testid=loading]").hidden"""


class Walk:
    """Visits views one by one and keeps what each got wrong."""

    def __init__(self, ui: PageSession, base_url: str, size: str, folder: Path) -> None:
        self.ui, self.page, self.base_url, self.size, self.folder = ui, ui.page, base_url, size, folder
        self.width = VIEWPORTS[size]["viewport"]["width"]
        self.found: dict[str, list[str]] = {}
        self.visited: list[str] = []

    def go(self, name: str, hash_: str, *, ready: str | None = None, banner: bool = False,
           wait_for: str | None = None) -> None:
        """Open #<hash_>, wait for the view `ready` (or the error banner) and check it."""
        self.page.evaluate("() => { const v = document.querySelector('#view'); if (v) delete v.dataset.ready; }")
        self.page.goto(f"{self.base_url}/ui/#{hash_}")
        if banner:
            self.page.get_by_test_id("error-banner").wait_for(state="visible")
        else:
            self.ui.ready(ready or hash_.strip("/").split("/")[0].split("?")[0] or "overview")
        if wait_for:
            self.page.locator(wait_for).first.wait_for(state="visible")
        self.check(name)

    def check(self, name: str) -> None:
        self.page.wait_for_function(SETTLED_JS)
        self.visited.append(name)
        found = problems(self.page, self.width)
        if self.size == "phone":
            found += [f"the {t} scrolls sideways" for t in self.page.evaluate(SCROLLING_TABLES_JS)
                      if t not in PHONE_SCROLLING_TABLES]
        if found:
            self.found[name] = found
        self.page.screenshot(path=str(self.folder / f"{self.size}-{name}.png"), full_page=True)

    def report(self) -> str:
        return "\n".join(f"  {name}:\n" + "\n".join(f"    - {p}" for p in found) for name, found in self.found.items())


@pytest.fixture
def hostile(base_url: str, alpha: ProfileAccess, services: Services) -> Hostile:
    return seed_hostile(base_url, alpha, services)


@pytest.mark.parametrize("size", list(VIEWPORTS))
def test_every_view_shows_no_null_and_fits_the_screen(
    size: str, base_url: str, hostile: Hostile, services: Services,
    page_factory: Callable[..., PageSession], artifacts: Path,
) -> None:
    access, uids = hostile.seeded.access, {**hostile.seeded.uids, **hostile.uids}
    folder = artifacts / "every-view"
    folder.mkdir(exist_ok=True)
    ui = page_factory(**VIEWPORTS[size])
    page = ui.page
    walk = Walk(ui, base_url, size, folder)

    # The login screen, and a token it refuses.
    page.goto(f"{base_url}/ui/")
    page.get_by_test_id("login-form").wait_for()
    walk.check("login")
    ui.login(base_url, "alpha", "not-the-token")
    page.get_by_test_id("error-banner").wait_for(state="visible")
    walk.check("login-refused")
    ui.login(base_url, "alpha", access.token)
    ui.ready("overview")
    walk.check("overview")
    page.evaluate("() => document.querySelectorAll('details').forEach((d) => { d.open = true; })")
    walk.check("overview-tables")  # every "Show as a table"
    _overview_windows(walk)

    # The query log, and the details of searches of each kind.
    listing = rest(base_url, access, "queries", limit=500)["queries"]
    walk.go("queries", "/queries")
    page.get_by_test_id("queries-limit").select_option("500")
    ui.ready("queries")
    walk.check("queries-500")
    redacted = next(q for q in listing if q["query"].startswith("[redacted"))
    found = next(q for q in listing if q["returned_count"] > 1)
    inactive = next(q for q in listing if q["matched_count"] == 0 and (q["inactive_matched"] or 0) > 0)
    long_query = next(q for q in listing if len(q["query"]) > 200)
    for label, row_id in (("degraded", hostile.query_ids["degraded"]), ("miss", hostile.query_ids["miss"]),
                          ("redacted", redacted["id"]), ("found", found["id"]), ("retired-only", inactive["id"]),
                          ("long-query", long_query["id"])):
        walk.go(f"query-{label}", f"/queries/{row_id}", ready="queries", wait_for="[data-testid=query-detail]")
    walk.go("query-unknown", "/queries/2147480000", ready="queries", banner=True)

    # The gap report, each section's searches in the query log, and a row's detail there.
    gaps = rest(base_url, access, "queries/gaps", days=30)
    walk.go("gaps", "/gaps")
    for section in ("zero_match", "retired_only"):
        groups = gaps[section]["groups"]
        assert groups, f"the seed leaves a {section} gap"
        biggest = max(groups, key=lambda g: len(g["representative"]))
        walk.go(f"gap-{section}", f"/queries?gap={biggest['id']}&days=30", ready="queries")
        page.get_by_test_id("query-row").first.locator("td.query-text").click()
        page.get_by_test_id("query-detail").wait_for()
        walk.check(f"gap-{section}-detail")
    walk.go("gap-unknown", "/queries?gap=no-such-gap&days=30", banner=True, wait_for="[data-testid=gap-missing]")
    assert walk.page.get_by_test_id("queries-table").count() == 0  # nothing of the view before stays

    # Curation: near-duplicates (none without a model: the facts have no vectors), never and most recalled.
    walk.go("curation", "/curation")

    _facts_listings(walk, uids)
    _fact_pages(walk, uids)

    # Signed out, then an empty profile with the longest name there is: every view's empty state.
    page.get_by_test_id("logout").click()
    page.get_by_test_id("login-form").wait_for()
    walk.check("logged-out")
    empty = make_profile(services, LONG_PROFILE)
    ui.login(base_url, empty.name, empty.token)
    ui.ready("overview")
    walk.check("empty-overview")
    for name, hash_ in (("queries", "/queries"), ("facts", "/facts"), ("gaps", "/gaps"),
                        ("curation", "/curation")):
        walk.go(f"empty-{name}", hash_)

    assert len(walk.visited) >= 40, walk.visited
    assert not walk.found, f"{size} ({walk.width} px): {len(walk.found)} of {len(walk.visited)} views:\n{walk.report()}"


def _overview_windows(walk: Walk) -> None:
    for days in (7, 365, 30):
        walk.page.get_by_test_id(f"window-{days}").click()
        walk.page.wait_for_selector(f"[data-testid=daily-chart][data-points='{days}']")
        walk.ui.ready("overview")
        if days != 30:
            walk.check(f"overview-{days}")


def _facts_listings(walk: Walk, uids: dict[str, str]) -> None:
    page = walk.page
    walk.go("facts", "/facts")
    page.get_by_test_id("facts-more").click()
    page.wait_for_function("() => Number(document.querySelector('[data-testid=facts-count]').textContent) > 50")
    walk.check("facts-more")
    then = (clock.utcnow() - timedelta(days=15)).strftime("%Y-%m-%dT%H:%MZ")
    for name, query in (("retired", "status=retired"), ("superseded", "status=superseded"),
                        ("kind", "kind=reference"), ("long-tag", f"tag={LONG_TAGS[0]}"),
                        ("no-match", "tag=no-such-tag"), ("as-of", f"as_of={then}"),
                        ("as-of-retired", f"as_of={then}&status=retired")):
        walk.go(f"facts-{name}", f"/facts?{query}", ready="facts")
    page.get_by_test_id("filter-asof").fill("")
    page.get_by_test_id("filter-status").select_option("active")
    page.get_by_test_id("filter-apply").click()
    walk.ui.ready("facts")
    walk.check("facts-filter-form")


def _fact_pages(walk: Walk, uids: dict[str, str]) -> None:
    then = (clock.utcnow() - timedelta(days=15)).strftime("%Y-%m-%dT%H:%MZ")
    pages = {
        "active-with-revisions": uids["pytest"],
        "superseded-first": uids["db"],
        "superseded-middle": uids["db_v2"],
        "chain-head": uids["db_v3"],
        "retired": uids["deploy"],
        "redacted": uids["secret"],
        "long-title": uids["long"],
    }
    for name, uid in pages.items():
        walk.go(f"fact-{name}", f"/facts/{uid}", ready="facts")
    walk.go("fact-as-of", f"/facts/{uids['db']}?as_of={then}", ready="facts")
    walk.go("fact-as-of-redacted", f"/facts/{uids['secret']}?as_of={then}", banner=True)  # not yet created then
    walk.go("fact-unknown", "/facts/f_nosuchfact0000", banner=True)

