"""memory_search's time window (`since`, `until`; service.domain.window) on every backend of the contract suite,
through the MCP SDK's client against a real server: the window is applied before the ranking and the limit, so
a window holding 3 of 500 matching facts returns those 3 with matched_count 3 (peers that filtered after taking
the top k returned nothing there). The REST facts listing takes the same window; the query log keeps it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import anyio
import httpx
import pytest

from bench.lib.server import running
from service.api.app import create_app
from service.domain.portability import export_profile, import_profile
from tests.search.test_backend_contract import (  # noqa: F401 - the contract suite's backends and their clusters
    Backend, backend, cluster_container, cluster_opensearch, cluster_osmem, prefix,
)
from tests.support.frozen_clock import frozen_at
from tests.support.mcp_client import call, call_error, mcp_client

OLD = datetime(2026, 11, 20, 9, 0, tzinfo=timezone.utc)  # 497 facts written then
NEW = datetime(2026, 11, 23, 15, 30, tzinfo=timezone.utc)  # 3 more, three days later
NOW = NEW + timedelta(hours=1)  # when the searches run
QUERY = "deploy pipeline"


@dataclass
class Seeded:
    backend: Backend
    url: str
    token: str
    new: set[str]


@pytest.fixture
def seeded(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> Iterator[Seeded]:
    with monkeypatch.context() as deferred:
        if backend.mirrored:  # the writes' outbox rows delivered in one bulk sync (as the worker delivers a
            # backlog) rather than pushed after each commit with a refresh: ~50 s of 500 pushes, ~2 s in one
            deferred.setattr(backend.services.backend, "changed", lambda profile_id, profile: None)
        with frozen_at(OLD):
            for i in range(497):
                backend.write(f"Deploy pipeline step {i}", f"The deploy pipeline runs stage {i} of the release.")
        with frozen_at(NEW):
            new = {backend.write(f"Deploy pipeline change {i}",
                                 f"The deploy pipeline now gates stage {i} on review.") for i in range(3)}
    if backend.mirrored:
        backend.services.backend.sync_now()
    token = backend.services.profiles.issue_token("alpha").token
    with frozen_at(NOW), running(create_app(services=backend.services)) as url:
        yield Seeded(backend, url, token, new)


def _search(seeded: Seeded, **arguments: object) -> dict:
    async def go() -> dict:
        async with mcp_client(seeded.url, "alpha", seeded.token) as client:
            return await call(client, "memory_search", query=QUERY, **arguments)

    return anyio.run(go)


def _error(seeded: Seeded, **arguments: object) -> str:
    async def go() -> str:
        async with mcp_client(seeded.url, "alpha", seeded.token) as client:
            return await call_error(client, "memory_search", query=QUERY, **arguments)

    return anyio.run(go)


def _text(seeded: Seeded, **arguments: object) -> str:
    async def go() -> str:
        async with mcp_client(seeded.url, "alpha", seeded.token) as client:
            result = await client.call_tool("memory_search", {"query": QUERY, **arguments})
            return " ".join(getattr(c, "text", "") for c in result.content)

    return anyio.run(go)


def _uids(found: dict) -> set[str]:
    return {f["uid"] for f in found["facts"]}


def test_a_window_holding_3_of_500_matches_returns_those_3(seeded: Seeded) -> None:
    """Then the query log and the facts listing on the same store (one test: the two would seed the same 500
    facts)."""
    everything = _search(seeded)
    assert everything["matched_count"] == 500 and everything["returned_count"] == 8
    for since in ["2026-11-23T15:30:00Z", "2026-11-23T17:30:00+02:00", "2026-11-23T15:30:00", "2026-11-23",
                  "2026-11-22", "2h", "90m", "1d", "2026-11-21T00:00:00.000001Z"]:
        found = _search(seeded, since=since)
        assert (found["matched_count"], _uids(found)) == (3, seeded.new), since
    older = _search(seeded, until="2026-11-20", limit=50)  # a date as `until`: through the end of that day
    assert older["matched_count"] == 497 and older["returned_count"] == 50 and not _uids(older) & seeded.new
    assert _search(seeded, since="2026-11-20", until="2026-11-23")["matched_count"] == 500
    assert _search(seeded, since="4d", until="3d")["matched_count"] == 497  # durations on both ends
    exact = _search(seeded, since="2026-11-23T15:30:00Z", until="2026-11-23T15:30:00Z")  # both ends included
    assert exact["matched_count"] == 3

    # The text an agent reads says the window as resolved (a duration as the instant it meant).
    assert _text(seeded, since="2h").startswith("matched 3, returned 3 (") and \
        "), changed since 2026-11-23T14:30:00Z\n" in _text(seeded, since="2h")
    assert "), changed since 2026-11-20T00:00:00Z until 2026-11-20T23:59:59Z\n" in \
        _text(seeded, since="2026-11-20", until="2026-11-20")
    assert _text(seeded, since="30m").endswith("), changed since 2026-11-23T16:00:00Z: memory does not know this")

    # An empty window: memory does not know.
    for window in [{"since": "30m"}, {"until": "2026-11-19"}, {"since": "2026-11-21", "until": "2026-11-22"},
                   {"since": "2030-01-01"}]:
        found = _search(seeded, **window)
        assert (found["matched_count"], found["facts"]) == (0, []), window
    assert _search(seeded, since="100000w")["matched_count"] == 500  # before the calendar's start: fine

    # Bad input: one clear error each, and no query-log row.
    headers = {"Authorization": f"Bearer {seeded.token}"}
    logged = len(httpx.get(f"{seeded.url}/api/alpha/queries", headers=headers, timeout=30).json()["queries"])
    assert "since must be an ISO 8601 date or date-time" in _error(seeded, since="last week")
    assert "until must be" in _error(seeded, until="2026-13-01")
    assert "until must be" in _error(seeded, until="-3d")
    said = _error(seeded, since="2026-11-23", until="2026-11-20")
    assert "is after until" in said and "2026-11-23T00:00:00" in said
    assert len(httpx.get(f"{seeded.url}/api/alpha/queries", headers=headers, timeout=30).json()["queries"]) == logged

    the_query_log_and_the_facts_listing_keep_the_window(seeded)


def the_query_log_and_the_facts_listing_keep_the_window(seeded: Seeded) -> None:
    headers = {"Authorization": f"Bearer {seeded.token}"}
    _search(seeded, since="2h")
    _search(seeded)
    plain, windowed = httpx.get(f"{seeded.url}/api/alpha/queries", headers=headers,
                                timeout=30).json()["queries"][:2]  # newest first
    assert (windowed["since"], windowed["until"], windowed["matched_count"]) == (
        "2026-11-23T14:30:00.000000+00:00", None, 3)
    assert (plain["since"], plain["until"], plain["matched_count"]) == (None, None, 500)
    detail = httpx.get(f"{seeded.url}/api/alpha/queries/{windowed['id']}", headers=headers,
                       timeout=30).json()["query"]
    assert detail["since"] == windowed["since"] and {r["uid"] for r in detail["results"]} == seeded.new
    services = seeded.backend.services  # `memory export` / `memory import` keep it
    document = export_profile(services.store, seeded.backend.profile)
    rows = {q["id"]: q for q in document["queries"]}
    assert rows[windowed["id"]]["since"] == windowed["since"] and "since" not in rows[plain["id"]]
    copy = services.profiles.create("copy")
    import_profile(services.store, copy, document)
    assert [q.get("since") for q in export_profile(services.store, copy)["queries"]] == [
        q.get("since") for q in document["queries"]]

    listed = httpx.get(f"{seeded.url}/api/alpha/facts", headers=headers, params={"since": "2026-11-23"},
                       timeout=30).json()
    assert {f["uid"] for f in listed["facts"]} == seeded.new and listed["next_cursor"] is None
    listed = httpx.get(f"{seeded.url}/api/alpha/facts", headers=headers, timeout=30,
                       params={"until": "2026-11-20", "limit": 200}).json()
    assert len(listed["facts"]) == 200 and not {f["uid"] for f in listed["facts"]} & seeded.new
    refused = httpx.get(f"{seeded.url}/api/alpha/facts", headers=headers, params={"since": "soon"}, timeout=30)
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "since"
    refused = httpx.get(f"{seeded.url}/api/alpha/facts", headers=headers, timeout=30,
                        params={"since": "2d", "as_of": "2026-11-22"})
    assert refused.status_code == 400 and "as_of" in refused.json()["error"]["message"]
