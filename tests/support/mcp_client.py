"""The MCP SDK's own streamable-HTTP client, opened against a live test server with a bearer token
(bench/lib/mcp.py's, shared with the benchmarks), and a call that must fail."""

from __future__ import annotations

from typing import Any

from mcp import Client

from bench.lib.mcp import call, mcp_client

__all__ = ["call", "call_error", "mcp_client"]


async def call_error(client: Client, tool: str, **arguments: Any) -> str:
    """Call a tool that must fail with a tool error; return its one-line message."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, f"{tool} unexpectedly succeeded: {result.structured_content}"
    text = " ".join(getattr(c, "text", "") for c in result.content)
    return text
