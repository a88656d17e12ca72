"""NUL bytes (issue 24): PostgreSQL cannot store or even compare text holding one, SQLite can. Every text a
caller can send, on every face, gets the same answer on both stores: a 400 (or a tool error) naming the field,
never a 500 on one store and a 404 or a stored row on the other."""

from __future__ import annotations

import httpx
import pytest

from service.container import Services
from tests.conftest import ProfileAccess
from tests.support.mcp_client import call, mcp_client

pytestmark = pytest.mark.anyio

GOOD = {"title": "T", "text": "hello world", "kind": "project"}


async def test_every_tool_argument_refuses_a_nul_naming_it(base_url: str, alpha: ProfileAccess,
                                                           services: Services) -> None:
    async with mcp_client(base_url, "alpha", alpha.token) as client:
        uid = (await call(client, "memory_write", **GOOD))["fact"]["uid"]
        cases = [
            ("memory_write", {**GOOD, "title": "a\x00b"}, "title"),
            ("memory_write", {**GOOD, "text": "a\x00b"}, "text"),
            ("memory_write", {**GOOD, "tags": ["a\x00b"]}, "tag"),
            ("memory_write", {**GOOD, "kind": "project\x00"}, "kind"),
            ("memory_search", {"query": "hello\x00"}, "query"),
            ("memory_search", {"query": "hello", "tags": ["a\x00"]}, "tag"),
            ("memory_search", {"query": "hello", "kind": "user\x00"}, "kind"),
            ("memory_update", {"uid": uid + "\x00"}, "uid"),
            ("memory_update", {"uid": uid, "title": "a\x00"}, "title"),
            ("memory_update", {"uid": uid, "text": "a\x00"}, "text"),
            ("memory_update", {"uid": uid, "tags": ["x\x00"]}, "tag"),
            ("memory_forget", {"uid": uid, "reason": "r\x00"}, "reason"),
            ("memory_forget", {"uid": "\x00"}, "uid"),
            ("memory_recent", {"kind": "user\x00"}, "kind"),
        ]
        for tool, arguments, field in cases:
            result = await client.call_tool(tool, arguments)
            message = result.content[0].text  # type: ignore[union-attr]
            assert result.is_error and message.startswith(f"{tool}: ") and field in message, (tool, message)
        assert [f["uid"] for f in (await call(client, "memory_recent"))["facts"]] == [uid]  # nothing else written
    headers = alpha.headers
    for path, param in (("/api/alpha/facts/f_%00x", "uid"), ("/api/alpha/facts?tag=a%00", "tag"),
                        ("/api/alpha/facts?cursor=%00", "cursor"), ("/api/alpha/facts?as_of=2026%00", "as_of"),
                        (f"/api/alpha/facts/{uid}?as_of=2026%00", "as_of"),
                        ("/api/alpha/queries/gaps/z%00", "group")):
        response = httpx.get(f"{base_url}{path}", headers=headers)
        assert response.status_code == 400, (path, response.text)
        assert response.json()["error"]["param"] == param
    queries = httpx.get(f"{base_url}/api/alpha/queries", headers=headers).json()["queries"]
    assert queries == []  # refused searches are not logged
