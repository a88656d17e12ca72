"""The service's limits, in one place (README "The five tools", docs/agents.md "The tools in detail",
docs/reviewers.md "REST API"): lengths, counts, tag syntax, kinds, statuses, page sizes and windows. Validation
(service.domain.validation), the MCP tool schemas, the REST parameters and the dashboard (which fetches
`for_dashboard()` as /ui/contract.json) all read them from here.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any

KINDS = ("user", "preference", "project", "reference", "research", "decision")


class FactStatus(StrEnum):
    """A fact's status, declared once: the tool schemas, REST parameters, SQL and the dashboard read it here."""

    ACTIVE = "active"
    RETIRED = "retired"
    SUPERSEDED = "superseded"


STATUSES = tuple(status.value for status in FactStatus)

PROFILE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
PROFILE_NAME_MAX = 63

TITLE_MAX = 200
TEXT_MAX = 8000
QUERY_MAX = 1000
WINDOW_END_MAX = 64  # characters of a time window's `since` or `until` (service.domain.window)
REASON_MAX = 500
UID_MAX = 40

TAGS_MAX = 20  # per fact, and per search filter
TAG_MAX = 64
# What a client may send (before normalising): the input schema states exactly this, and the server matches the
# same pattern (1-64 characters once trimmed, as docs/agents.md counts them). Explicit character classes only:
# `\s` or a case-insensitive flag mean other things in ECMA-262 (JSON Schema's regexes) than in Python, and
# "\u212a" (Kelvin) lower-cases to "k".
TAG_PADDING = " \t\n\r"  # trimmed around a tag
TAG_INPUT_PATTERN = rf"^[ \t\n\r]*[A-Za-z0-9][A-Za-z0-9._:/+#-]{{0,{TAG_MAX - 1}}}[ \t\n\r]*$"  # 1-64 once trimmed
TAG_INPUT = re.compile(TAG_INPUT_PATTERN)
TAG_CHARACTERS = "letters, digits, . _ : / + # -"
# A required string (query, title, text, uid) is something once trimmed and holds no NUL (service.domain.validation);
# the input schema's pattern says so, in the same strings for ECMA-262 (JSON Schema's regexes) and Python. Python
# trims the str.isspace() characters; ECMA-262's `\s` is that set with U+FEFF and without U+001C-U+001F and U+0085,
# so the class leaves those out as well and U+FEFF (which Python keeps) is added back. No lookahead, no \u escape.
FILLED_PATTERN = "^[^\\x00]*?(?:[^\\s\\x00\\x1c-\\x1f\\x85]|\ufeff)[^\\x00]*$"
NO_NUL_PATTERN = "^[^\\x00]*$"  # an optional string the server trims to nothing (a reason): anything but NUL

SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX = 8, 50  # memory_search
RECENT_LIMIT_DEFAULT, RECENT_LIMIT_MAX = 10, 50  # memory_recent
LISTING_DEFAULT, LISTING_MAX = 50, 500  # the query-log listing
FACTS_PAGE_DEFAULT, FACTS_PAGE_MAX = 50, 200  # the REST facts listing
DAYS_DEFAULT, DAYS_MAX = 30, 365  # summary and stats windows, whole UTC days
INACTIVE_SHOWN = 5  # retired/superseded facts a search keeps (closest first)
TOP_N = 10  # entries of each top list

MAX_ROW_ID = 2**31 - 1  # row ids are INTEGER columns: the largest PostgreSQL stores (SQLite would take more)

# The summary's match buckets over known matched_count values: (label, lowest, highest or None). "0" is the
# zero_match count; the buckets plus unknown_matched add up to the searches of the window.
MATCH_BUCKETS: tuple[tuple[str, int, int | None], ...] = (
    ("0", 0, 0), ("1", 1, 1), ("2-5", 2, 5), ("6-20", 6, 20), ("21+", 21, None),
)
BUCKET_LABELS = tuple(label for label, _, _ in MATCH_BUCKETS)


def for_dashboard() -> dict[str, Any]:
    """What the dashboard needs to know of the contract (served as JSON at /ui/contract.json)."""
    return {
        "kinds": list(KINDS),
        "statuses": list(STATUSES),
        "days_max": DAYS_MAX,
        "days_default": DAYS_DEFAULT,
        "listing_max": LISTING_MAX,
        "listing_default": LISTING_DEFAULT,
        "facts_page_default": FACTS_PAGE_DEFAULT,
        "facts_page_max": FACTS_PAGE_MAX,
        "tag_max": TAG_MAX,
        "match_buckets": list(BUCKET_LABELS),
    }
