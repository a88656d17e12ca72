"""Hostile-looking data for the dashboard (long unbroken strings, a redaction, a degraded search) and the two
checks every view must pass: no `null`, `undefined`, `NaN` or `Invalid Date` shown as text, and nothing wider
than the screen (test_every_view.py walks the views).

The seed never writes those four words itself, so any that shows up on a page was made by the dashboard.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from service.container import Services
from service.domain.models import Fact, ScoredFact
from service.domain.ports import SearchHits, SearchRequest
from service.domain.redaction import RedactionService
from tests.conftest import ProfileAccess
from tests.ui.conftest import Seeded, seed, tool

# Standalone tokens a JavaScript value turns into when it is formatted by mistake.
BAD_TEXT = re.compile(r"\b(?:null|undefined|NaN|Invalid Date)\b")

LONG_TITLE = ("Averylongtitlewithoutanyspaces_" * 7)[:200]  # TITLE_MAX, nowhere to break
LONG_TAGS = [f"{n}-{'averyverylongtagname' * 4}"[:64] for n in ("one", "two", "three")]  # TAG_MAX each
LONG_QUERY = "whereistheconfigurationfortheblueclusterstagingdeploymentpipelinerunner" * 4
LONG_URL = "https://intranet.example.invalid/wiki/" + "SpacesNeverAppearInThisPathSegment/" * 8
SECRET = "tok_live_9f8e7d6c5b4a39281706f5e4d3c2b1a0"


@dataclass
class Hostile:
    """What the hostile seed wrote on top of conftest's seed, by short name."""

    seeded: Seeded
    uids: dict[str, str] = field(default_factory=dict)
    query_ids: dict[str, int] = field(default_factory=dict)


def _log(services: Services, access: ProfileAccess, query: str, matched: int | None, uid: str | None) -> int:
    """A query-log row as a degraded (matched_count null) or a plain search leaves it, scores unknown."""
    profile = services.profiles.get(access.name)
    request = SearchRequest(profile_id=profile.id, profile=profile.name, query=query, limit=8)
    now = datetime.now(timezone.utc)
    returned = []
    if uid:
        fact = Fact(uid=uid, title="", text="", kind="project", tags=[], status="active", created_at=now,
                    updated_at=now, retired_at=None, retire_reason=None, supersedes=None, superseded_by=None)
        returned = [ScoredFact(fact=fact, score=0.5, lexical=None, vector=None)]
    found = SearchHits(matched_count=matched, inactive_matched=None if matched is None else 0, hits=[],
                       mode="degraded" if matched is None else "lexical")
    return services.query_log.record(profile, request=request, found=found, returned=returned, latency_ms=0.4)


def seed_hostile(base_url: str, access: ProfileAccess, services: Services) -> Hostile:
    seeded = seed(base_url, access, extra_facts=46)  # with the facts below: more than a page of 50
    out = Hostile(seeded=seeded)

    def write(key: str, **arguments: Any) -> None:
        out.uids[key] = tool(base_url, access, "memory_write", **arguments)["fact"]["uid"]

    # A title of 200 characters without a space, long tags, a long URL as text; then amended in place twice
    # (revisions, long titles among them).
    write("long", title=LONG_TITLE, text=f"See {LONG_URL} for the whole procedure.", kind="reference",
          tags=LONG_TAGS)
    tool(base_url, access, "memory_update", uid=out.uids["long"], title=LONG_TITLE[::-1])
    tool(base_url, access, "memory_update", uid=out.uids["long"], tags=[*LONG_TAGS, "runbook"], title=LONG_TITLE)
    # A chain of three: the seed's database decision, superseded twice.
    newer = "We chose PostgreSQL 17 with logical replication to the reporting replica."
    out.uids["db_v3"] = tool(base_url, access, "memory_update", uid=seeded.uids["db_v2"], text=newer)["fact"]["uid"]
    # A fact holding a secret, found by a search, then redacted: the record shows two 64-character hashes.
    write("secret", title="Deploy token", text=f"The deploy token is {SECRET}.", kind="reference", tags=["deploy"])
    tool(base_url, access, "memory_search", query=f"deploy token {SECRET}")
    RedactionService(services.store).redact(out.uids["secret"], reason="held a live deploy token",
                                            operator="operator-on-call", also=[SECRET])
    # Searches: a long text without spaces (a zero-match gap), one that finds the long fact, a degraded one
    # (matched_count null, scores unknown) and a miss (0).
    tool(base_url, access, "memory_search", query=LONG_QUERY)
    tool(base_url, access, "memory_search", query=LONG_QUERY)
    tool(base_url, access, "memory_search", query="runbook", tags=[LONG_TAGS[0]])
    out.query_ids["degraded"] = _log(services, access, "degraded lookup of the runbook", None, out.uids["long"])
    out.query_ids["miss"] = _log(services, access, "where is the pager rota kept", 0, None)
    return out


# --- the checks ------------------------------------------------------------------------------------

# Attributes a reader sees (tooltips, labels, placeholders, field values) or follows (links).
_ATTRIBUTES_JS = """() => {
  const found = [];
  for (const el of document.querySelectorAll("*")) {
    for (const name of ["title", "aria-label", "placeholder", "alt", "href", "value"]) {
      const v = el.getAttribute(name);
      if (v !== null) found.push(`${el.tagName.toLowerCase()}[${name}]=${v}`);
    }
  }
  return found;
}"""

# What sticks out right of a screen `width` px wide. An element inside a container that clips or scrolls
# sideways (overflow-x not visible) is that container's business: the container itself must fit.
_OVERFLOW_JS = """(width) => {
  const out = [];
  const doc = document.documentElement;
  if (doc.scrollWidth > width) out.push(`the page is ${doc.scrollWidth}px wide`);
  if (window.innerWidth !== width) out.push(`the window is ${window.innerWidth}px wide`);
  const bar = document.querySelector(".topbar").getBoundingClientRect();
  if (Math.round(bar.width) < Math.max(width, doc.scrollWidth)) {
    out.push(`the header is ${Math.round(bar.width)}px wide, the page ${Math.max(width, doc.scrollWidth)}px`);
  }
  const nav = document.querySelector("[data-testid=nav]");
  if (nav && !nav.hidden) {
    const rows = new Set([...nav.querySelectorAll("a")].map((a) => Math.round(a.getBoundingClientRect().top)));
    if (rows.size > 1) out.push(`the views' links take ${rows.size} rows`);
    const edge = nav.getBoundingClientRect().right;
    for (const a of nav.querySelectorAll("a")) {
      if (a.getBoundingClientRect().right > edge + 0.5) out.push(`the views' link "${a.innerText}" is cut off`);
    }
  }
  const clipped = (el) => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      if (getComputedStyle(a).overflowX !== "visible") return true;
    }
    return false;
  };
  const name = (el) => {
    const id = el.dataset.testid ? `[data-testid=${el.dataset.testid}]` : "";
    const classes = typeof el.className === "string" ? el.className.trim() : "";
    const cls = classes ? `.${classes.split(/\\s+/).join(".")}` : "";
    return `${el.tagName.toLowerCase()}${id}${cls} "${(el.innerText || "").trim().slice(0, 40)}"`;
  };
  for (const el of document.body.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    const right = r.right + window.scrollX;
    if (right <= width + 0.5 || clipped(el)) continue;
    out.push(`${name(el)} reaches ${Math.round(right)}px`);
    if (out.length > 12) break;
  }
  return out;
}"""

# Tables that scroll sideways inside their own box (allowed, but reported for the phone's main listings).
SCROLLING_TABLES_JS = """() => [...document.querySelectorAll(".table-wrap")]
  .filter((w) => w.offsetParent !== null && w.scrollWidth > w.clientWidth + 1)
  .map((w) => (w.querySelector("table") || w).dataset.testid || "table")"""


def problems(page: Any, width: int) -> list[str]:
    """Everything wrong with the page as it is now: bad words in its text or attributes, overflow."""
    found = []
    text = page.evaluate("() => document.body.innerText")
    for match in BAD_TEXT.finditer(text):
        start, end = max(0, match.start() - 40), match.end() + 40
        found.append(f"shows {match.group()!r}: …{text[start:end]!r}…")
    for attribute in page.evaluate(_ATTRIBUTES_JS):
        if BAD_TEXT.search(attribute):
            found.append(f"attribute {attribute[:120]!r}")
    found.extend(page.evaluate(_OVERFLOW_JS, width))
    return found
