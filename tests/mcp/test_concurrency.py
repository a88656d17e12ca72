"""20 agents writing and searching at once: no error, no lost write, every search logged exactly once."""

from __future__ import annotations

import anyio
import httpx
import pytest

from service.container import Services
from tests.conftest import ProfileAccess
from tests.support.mcp_client import call, mcp_client

pytestmark = pytest.mark.anyio

CLIENTS, WRITES, SEARCHES = 20, 3, 3


async def test_twenty_clients_at_once(base_url: str, alpha: ProfileAccess, services: Services) -> None:
    written: list[str] = []
    searched: list[str] = []

    async def agent(n: int) -> None:
        async with mcp_client(base_url, "alpha", alpha.token) as client:
            for i in range(WRITES):
                fact = await call(client, "memory_write", title=f"Agent {n} fact {i}", kind="project",
                                  text=f"agent{n} recorded item{i} about the rollout", tags=[f"agent{n}"])
                written.append(fact["fact"]["uid"])
                query = f"agent{n} item{i} rollout"
                found = await call(client, "memory_search", query=query)
                assert fact["fact"]["uid"] in [f["uid"] for f in found["facts"]]  # read-your-writes
                searched.append(query)

    async with anyio.create_task_group() as group:
        for n in range(CLIENTS):
            group.start_soon(agent, n)

    assert len(written) == len(set(written)) == CLIENTS * WRITES
    facts = httpx.get(f"{base_url}/api/alpha/facts?limit=200", headers=alpha.headers).json()["facts"]
    assert {f["uid"] for f in facts} == set(written)
    rows = httpx.get(f"{base_url}/api/alpha/queries?limit=500", headers=alpha.headers).json()["queries"]
    assert sorted(r["query"] for r in rows) == sorted(searched)
    summary = httpx.get(f"{base_url}/api/alpha/queries/summary?days=1", headers=alpha.headers).json()
    assert summary["totals"]["searches"] == CLIENTS * SEARCHES
