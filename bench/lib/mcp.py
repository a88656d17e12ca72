"""MCP clients of the benchmarks: the SDK's own streamable-HTTP client, and plain JSON-RPC POSTs on one
keep-alive connection (what the server costs, without the SDK client's own per-call work)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


@asynccontextmanager
async def mcp_client(base_url: str, profile: str, token: str | None, *, mode: str = "auto") -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60)) as http:
        async with Client(streamable_http_client(f"{base_url}/mcp/{profile}", http_client=http), mode=mode) as client:
            yield client


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """Call a tool that must succeed; return its structured content."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, f"{tool} failed: {result.content}"
    assert result.structured_content is not None
    return dict(result.structured_content)


class RawMCP:
    """MCP tool calls as plain JSON-RPC POSTs to /mcp/{profile} on one keep-alive connection: the HTTP
    requests the SDK's client sends (the server is stateless: no session to open first), without the
    client's own per-call machinery -- so the figures are the server's, plus one loopback round trip."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http, self.url, self.next_id = http, url, 0

    async def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        self.next_id += 1
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                   "params": {"name": tool, "arguments": arguments}}
        response = await self.http.post(self.url, json=request)
        result = response.json()["result"]
        assert not result.get("isError"), result
        return dict(result["structuredContent"])


@asynccontextmanager
async def raw_client(base_url: str, profile: str, token: str) -> AsyncIterator[RawMCP]:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2025-06-18"}
    async with httpx.AsyncClient(headers=headers, timeout=60) as http:
        yield RawMCP(http, f"{base_url}/mcp/{profile}")
