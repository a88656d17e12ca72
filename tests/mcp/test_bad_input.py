"""Refused input is a tool error with a one-line reason; the session survives and nothing is written."""

from __future__ import annotations

import httpx
import pytest

from service.container import Services
from tests.conftest import ProfileAccess
from tests.support.mcp_client import call, call_error, mcp_client

pytestmark = pytest.mark.anyio

GOOD = {"title": "T", "text": "some text", "kind": "project"}


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("memory_write", {**GOOD, "kind": "opinion"}, "unknown kind"),
        ("memory_write", {**GOOD, "text": "   "}, "text must be 1-8000"),
        ("memory_write", {**GOOD, "text": "x" * 8001}, "text must be 1-8000"),
        ("memory_write", {**GOOD, "title": "t" * 201}, "title must be 1-200"),
        ("memory_write", {**GOOD, "tags": [f"t{i}" for i in range(21)]}, "at most 20 tags"),
        ("memory_write", {**GOOD, "tags": ["Bad Tag!"]}, "invalid tag"),
        ("memory_search", {"query": ""}, "query must be 1-1000"),
        ("memory_search", {"query": "q" * 1001}, "query must be 1-1000"),
        ("memory_search", {"query": "x", "limit": 0}, "limit must be an integer from 1 to 50"),
        ("memory_search", {"query": "x", "limit": 51}, "limit must be an integer from 1 to 50"),
        ("memory_search", {"query": "x", "kind": "nope"}, "unknown kind"),
        ("memory_recent", {"limit": 500}, "limit must be an integer from 1 to 50"),
        ("memory_update", {"uid": "f_doesnotexist"}, "unknown uid"),
        ("memory_forget", {"uid": "f_doesnotexist"}, "unknown uid"),
        ("memory_forget", {"uid": "f_x", "reason": "r" * 501}, "reason must be at most 500"),
        # One rule for types: what the input schema says, no silent coercion (true is not 1, "8" is not 8).
        ("memory_search", {"query": "x", "limit": True}, "memory_search: argument limit: input should be a valid integer (got true)"),
        ("memory_search", {"query": "x", "limit": "8"}, "argument limit: input should be a valid integer (got '8')"),
        ("memory_recent", {"limit": 2.5}, "argument limit: input should be a valid integer"),
        ("memory_search", {"query": "x", "kind": ""}, "memory_search: unknown kind ''"),
        ("memory_recent", {"kind": ""}, "unknown kind ''"),
        ("memory_write", {**GOOD, "title": 7}, "memory_write: argument title: input should be a valid string (got 7)"),
        ("memory_write", {"text": "t", "kind": "user"}, "memory_write: argument title is required"),
        ("memory_search", {}, "memory_search: argument query is required"),
        ("memory_update", {"title": "x"}, "memory_update: argument uid is required"),
        # NUL characters: PostgreSQL cannot store them, so neither store takes them.
        ("memory_write", {**GOOD, "title": "a\x00b"}, "title must not contain NUL characters"),
        ("memory_write", {**GOOD, "text": "a\x00b"}, "text must not contain NUL characters"),
        ("memory_search", {"query": "a\x00b"}, "query must not contain NUL characters"),
        # An argument the input schema does not declare is a mistake the agent hears of, not a silent default.
        ("memory_search", {"query": "x", "limt": 3},
         "memory_search: unknown argument limt; valid arguments: query, limit, kind, tags"),
        ("memory_write", {**GOOD, "tag": ["a"], "body": "b"},
         "memory_write: unknown arguments tag, body; valid arguments: title, text, kind, tags"),
        ("memory_forget", {"uid": "f_x", "why": "r"}, "memory_forget: unknown argument why; valid arguments: uid, reason"),
    ],
)
async def test_refused_input(base_url: str, alpha: ProfileAccess, services: Services, tool: str,
                             arguments: dict, expected: str) -> None:
    async with mcp_client(base_url, "alpha", alpha.token) as client:
        message = await call_error(client, tool, **arguments)
        assert expected in message and "\n" not in message.strip()
        assert message.startswith(f"{tool}: ") and "https://" not in message
        assert (await call(client, "memory_recent"))["facts"] == []  # the session still works
    queries = httpx.get(f"{base_url}/api/alpha/queries", headers=alpha.headers).json()["queries"]
    assert queries == []  # refused searches are not logged


async def test_uid_of_another_profile_is_unknown(base_url: str, alpha: ProfileAccess, beta: ProfileAccess) -> None:
    async with mcp_client(base_url, "alpha", alpha.token) as client:
        uid = (await call(client, "memory_write", **GOOD))["fact"]["uid"]
    async with mcp_client(base_url, "beta", beta.token) as client:
        foreign = await call_error(client, "memory_update", uid=uid, title="stolen")
        unknown = await call_error(client, "memory_update", uid="f_doesnotexist", title="stolen")
        assert foreign.replace(uid, "<uid>") == unknown.replace("f_doesnotexist", "<uid>")
        await call_error(client, "memory_forget", uid=uid)
        assert (await call(client, "memory_search", query="some text"))["matched_count"] == 0
    detail = httpx.get(f"{base_url}/api/alpha/facts/{uid}", headers=alpha.headers).json()
    assert detail["fact"]["title"] == "T" and detail["fact"]["status"] == "active"
    assert httpx.get(f"{base_url}/api/beta/facts/{uid}", headers=beta.headers).status_code == 404
