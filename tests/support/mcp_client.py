"""The MCP SDK's own streamable-HTTP client, opened against a live test server with a bearer token."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

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


async def call_error(client: Client, tool: str, **arguments: Any) -> str:
    """Call a tool that must fail with a tool error; return its one-line message."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, f"{tool} unexpectedly succeeded: {result.structured_content}"
    text = " ".join(getattr(c, "text", "") for c in result.content)
    return text
