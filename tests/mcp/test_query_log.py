"""Every search that runs writes exactly one query-log row, misses included, visible over REST."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import ProfileAccess
from tests.support.mcp_client import call, mcp_client

pytestmark = pytest.mark.anyio


async def test_one_row_per_search_with_counts(base_url: str, alpha: ProfileAccess) -> None:
    async with mcp_client(base_url, "alpha", alpha.token) as client:
        uids = []
        for i in range(5):
            written = await call(client, "memory_write", title=f"Kafka topic {i}", kind="reference",
                                 text=f"Kafka topic orders-{i} carries order events", tags=["kafka"])
            uids.append(written["fact"]["uid"])
        limited = await call(client, "memory_search", query="kafka topic order events", limit=2, tags=["kafka"])
        miss = await call(client, "memory_search", query="sourdough bread hydration")
        filtered = await call(client, "memory_search", query="kafka topic", kind="decision")

    assert (limited["matched_count"], limited["returned_count"], len(limited["facts"])) == (5, 2, 2)
    assert (miss["matched_count"], miss["returned_count"], miss["facts"]) == (0, 0, [])
    assert filtered["matched_count"] == 0

    rows = httpx.get(f"{base_url}/api/alpha/queries", headers=alpha.headers).json()["queries"]
    assert [r["query"] for r in rows] == ["kafka topic", "sourdough bread hydration", "kafka topic order events"]
    newest, zero, first = rows
    assert (first["matched_count"], first["returned_count"], first["tags"]) == (5, 2, ["kafka"])
    assert first["top_uid"] == limited["facts"][0]["uid"]
    assert (zero["matched_count"], zero["returned_count"], zero["top_uid"], zero["tags"]) == (0, 0, None, [])
    assert newest["kind"] == "decision"
    assert all(r["created_at"].endswith("+00:00") and r["latency_ms"] >= 0 for r in rows)

    detail = httpx.get(f"{base_url}/api/alpha/queries/{first['id']}", headers=alpha.headers).json()["query"]
    assert [r["uid"] for r in detail["results"]] == [f["uid"] for f in limited["facts"]]
    assert all(r["score"] is not None and r["lexical"] is not None for r in detail["results"])

    summary = httpx.get(f"{base_url}/api/alpha/queries/summary?days=1", headers=alpha.headers).json()
    assert summary["totals"] == {"searches": 3, "zero_match": 2, "unknown_matched": 0, "distinct_queries": 3,
                                 "retired_only": 0}
    assert summary["daily"][-1]["searches"] == 3 and summary["daily"][-1]["zero_match"] == 2
    assert {b["label"]: b["count"] for b in summary["match_buckets"]} == {"0": 2, "1": 0, "2-5": 1, "6-20": 0,
                                                                        "21+": 0}
    assert summary["top_tags"] == [{"tag": "kafka", "count": 1}]
    assert summary["top_facts"] == [{"uid": first["top_uid"], "count": 1, "title": limited["facts"][0]["title"]}]


async def test_retired_only_misses_are_counted(base_url: str, alpha: ProfileAccess) -> None:
    async with mcp_client(base_url, "alpha", alpha.token) as client:
        uid = (await call(client, "memory_write", title="Staging host", kind="reference",
                          text="Staging runs on staging-7.internal"))["fact"]["uid"]
        await call(client, "memory_forget", uid=uid, reason="decommissioned")
        miss = await call(client, "memory_search", query="staging host staging-7")
    assert miss["matched_count"] == 0
    row = httpx.get(f"{base_url}/api/alpha/queries", headers=alpha.headers).json()["queries"][0]
    assert row["inactive_matched"] == 1
    summary = httpx.get(f"{base_url}/api/alpha/queries/summary", headers=alpha.headers).json()
    assert summary["totals"]["retired_only"] == 1 and summary["totals"]["zero_match"] == 1
