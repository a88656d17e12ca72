"""The whole fact lifecycle through the SDK's client over real HTTP, checked against REST."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import ProfileAccess
from tests.support.mcp_client import call, call_error, mcp_client

pytestmark = pytest.mark.anyio


def rest(base_url: str, access: ProfileAccess, path: str) -> dict:
    response = httpx.get(f"{base_url}{path}", headers=access.headers, timeout=10)
    assert response.status_code == 200, response.text
    return response.json()


async def test_lifecycle(base_url: str, alpha: ProfileAccess) -> None:
    async with mcp_client(base_url, "alpha", alpha.token) as client:
        written = await call(client, "memory_write", title="Billing database", kind="project",
                             text="The billing service stores invoices in PostgreSQL 15.", tags=["billing", "DB "])
        first = written["fact"]
        assert first["status"] == "active" and first["tags"] == ["billing", "db"]
        assert first["created_at"].endswith("+00:00") and first["supersedes"] is None

        found = await call(client, "memory_search", query="billing database postgresql")
        assert found["matched_count"] == 1 and found["facts"][0]["uid"] == first["uid"]

        updated = await call(client, "memory_update", uid=first["uid"],
                             text="The billing service stores invoices in PostgreSQL 16 since the November upgrade.")
        second = updated["fact"]
        assert updated["superseded_uid"] == first["uid"]
        assert second["uid"] != first["uid"] and second["supersedes"] == first["uid"]
        assert second["title"] == "Billing database" and second["tags"] == ["billing", "db"]

        old = rest(base_url, alpha, f"/api/alpha/facts/{first['uid']}")
        assert old["fact"]["status"] == "superseded" and old["fact"]["superseded_by"] == second["uid"]
        assert [f["uid"] for f in old["chain"]] == [first["uid"], second["uid"]]
        assert [f["uid"] for f in rest(base_url, alpha, f"/api/alpha/facts/{second['uid']}")["chain"]] == [
            first["uid"], second["uid"]
        ]

        amended = await call(client, "memory_update", uid=second["uid"], title="Billing DB version",
                             tags=["billing", "postgres"])
        assert amended["superseded_uid"] is None and amended["fact"]["uid"] == second["uid"]
        assert amended["fact"]["title"] == "Billing DB version"
        assert amended["fact"]["updated_at"] > second["updated_at"]
        detail = rest(base_url, alpha, f"/api/alpha/facts/{second['uid']}")
        assert [(r["revision"], r["title"], r["tags"]) for r in detail["revisions"]] == [
            (1, "Billing database", ["billing", "db"])
        ]

        same = await call(client, "memory_update", uid=second["uid"], title="Billing DB version",
                          text=amended["fact"]["text"])
        assert same["fact"] == amended["fact"] and same["superseded_uid"] is None
        assert len(rest(base_url, alpha, f"/api/alpha/facts/{second['uid']}")["revisions"]) == 1

        forgotten = await call(client, "memory_forget", uid=second["uid"], reason="billing moved to a vendor")
        assert forgotten["fact"]["status"] == "retired" and forgotten["fact"]["retired_at"]
        again = await call(client, "memory_forget", uid=second["uid"])
        assert again["fact"] == forgotten["fact"]

        gone = await call(client, "memory_search", query="billing database postgresql")
        assert gone["matched_count"] == 0 and gone["facts"] == []
        assert (await call(client, "memory_recent"))["facts"] == []
        kept = rest(base_url, alpha, f"/api/alpha/facts/{second['uid']}")["fact"]
        assert kept["status"] == "retired" and kept["retire_reason"] == "billing moved to a vendor"

        message = await call_error(client, "memory_update", uid=first["uid"], text="something else")
        assert second["uid"] in message and "superseded" in message
        message = await call_error(client, "memory_forget", uid=first["uid"])
        assert second["uid"] in message
        message = await call_error(client, "memory_update", uid=second["uid"], title="x")
        assert "retired" in message

    listing = rest(base_url, alpha, "/api/alpha/facts")
    assert {f["status"] for f in listing["facts"]} == {"superseded", "retired"}
    stats = rest(base_url, alpha, "/api/alpha/stats")
    assert (stats["facts"], stats["retired"], stats["superseded"]) == (0, 1, 1)


async def test_recent_lists_newest_updated_first(base_url: str, alpha: ProfileAccess) -> None:
    async with mcp_client(base_url, "alpha", alpha.token) as client:
        uids = []
        for i in range(3):
            written = await call(client, "memory_write", title=f"Fact {i}", text=f"Statement number {i}",
                                 kind="project" if i != 1 else "decision")
            uids.append(written["fact"]["uid"])
        await call(client, "memory_update", uid=uids[0], tags=["touched"])
        recent = await call(client, "memory_recent", limit=2)
        assert [f["uid"] for f in recent["facts"]] == [uids[0], uids[2]]
        decisions = await call(client, "memory_recent", kind="decision")
        assert [f["uid"] for f in decisions["facts"]] == [uids[1]]


async def test_write_reports_similar_facts(base_url: str, alpha: ProfileAccess) -> None:
    async with mcp_client(base_url, "alpha", alpha.token) as client:
        first = await call(client, "memory_write", title="Deploy window", kind="preference",
                           text="Production deploys happen on Tuesday mornings after the standup meeting.")
        await call(client, "memory_write", title="Coffee", kind="user", text="The user drinks espresso.")
        second = await call(client, "memory_write", title="Deploy day", kind="preference",
                            text="Production deploys happen Tuesday mornings, after standup.")
        assert [f["uid"] for f in second["similar"]] == [first["fact"]["uid"]]


async def test_a_superseded_fact_points_at_the_latest_version_of_its_chain(base_url: str,
                                                                           alpha: ProfileAccess) -> None:
    """A -> B -> C: updating or forgetting A names C (what the agent can act on), not B, itself superseded;
    once C is retired, the advice says so instead of naming a fact the action cannot take."""
    async with mcp_client(base_url, "alpha", alpha.token) as client:
        a = (await call(client, "memory_write", title="Runtime", text="Runs on Python 3.10.", kind="project"))["fact"]
        b = (await call(client, "memory_update", uid=a["uid"], text="Runs on Python 3.11."))["fact"]
        c = (await call(client, "memory_update", uid=b["uid"], text="Runs on Python 3.12."))["fact"]
        message = await call_error(client, "memory_update", uid=a["uid"], title="x")
        assert f"superseded by {b['uid']}, whose latest version is {c['uid']}; update {c['uid']} instead" in message
        message = await call_error(client, "memory_forget", uid=b["uid"])
        assert message.endswith(f"superseded by {c['uid']}; forget {c['uid']} instead")
        await call(client, "memory_forget", uid=c["uid"])
        message = await call_error(client, "memory_update", uid=a["uid"], title="x")
        assert f"latest version is {c['uid']}, retired; record the current knowledge with memory_write" in message
        message = await call_error(client, "memory_forget", uid=a["uid"])
        assert message.endswith("retired; nothing left to forget")


async def test_the_same_tags_in_another_order_change_nothing(base_url: str, alpha: ProfileAccess) -> None:
    async with mcp_client(base_url, "alpha", alpha.token) as client:
        fact = (await call(client, "memory_write", title="T", text="Tagged.", kind="project",
                           tags=["go", "payments"]))["fact"]
        same = await call(client, "memory_update", uid=fact["uid"], tags=["payments", "GO", "go"])
        assert same["fact"] == fact
        changed = await call(client, "memory_update", uid=fact["uid"], tags=["payments"])
        assert changed["fact"]["tags"] == ["payments"] and changed["fact"]["uid"] == fact["uid"]
    detail = rest(base_url, alpha, f"/api/alpha/facts/{fact['uid']}")
    assert [r["tags"] for r in detail["revisions"]] == [["go", "payments"]]
