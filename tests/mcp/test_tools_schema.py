"""tools/list: exactly five tools, bounded input schemas, output schemas, honest annotations, short descriptions."""

from __future__ import annotations

import json

import pytest

from service.contract import KINDS
from tests.conftest import ProfileAccess
from tests.support.mcp_client import call, mcp_client

pytestmark = pytest.mark.anyio  # (the sync tests below ignore it)

FIVE = {"memory_search", "memory_write", "memory_update", "memory_forget", "memory_recent"}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_exactly_five_tools_with_schemas(base_url: str, alpha: ProfileAccess, mode: str) -> None:
    async with mcp_client(base_url, "alpha", alpha.token, mode=mode) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == FIVE
    for tool in tools.values():
        assert tool.description and len(tool.description) <= 300, tool.name
        assert tool.output_schema is not None and tool.output_schema.get("type") == "object", tool.name
        assert tool.annotations is not None and tool.annotations.open_world_hint is False, tool.name
        assert "ctx" not in tool.input_schema.get("properties", {})
        assert tool.input_schema["additionalProperties"] is False, tool.name  # unknown arguments are refused
        # no reference to resolve: clients validate each fact against its schema directly
        assert "$ref" not in json.dumps(tool.output_schema) and "$defs" not in tool.output_schema, tool.name

    search = tools["memory_search"].input_schema
    assert search["required"] == ["query"]
    assert search["properties"]["query"]["maxLength"] == 1000
    assert (search["properties"]["limit"]["minimum"], search["properties"]["limit"]["maximum"]) == (1, 50)
    assert search["properties"]["limit"]["default"] == 8
    assert search["properties"]["kind"]["enum"] == [
        "user", "preference", "project", "reference", "research", "decision"
    ]
    for tool in tools.values():  # optional arguments are left out: no `default: null` on a typed property
        for name, prop in tool.input_schema["properties"].items():
            assert prop.get("default", 0) is not None and isinstance(prop.get("type"), str), (tool.name, name)
    write = tools["memory_write"].input_schema
    assert sorted(write["required"]) == ["kind", "text", "title"]
    assert write["properties"]["title"]["maxLength"] == 200
    assert write["properties"]["text"]["maxLength"] == 8000
    assert write["properties"]["tags"]["maxItems"] == 20
    assert tools["memory_update"].input_schema["required"] == ["uid"]
    assert tools["memory_forget"].input_schema["properties"]["reason"]["maxLength"] == 500
    recent = tools["memory_recent"].input_schema
    assert recent.get("required", []) == [] and recent["properties"]["limit"]["default"] == 10

    assert tools["memory_search"].annotations.read_only_hint is True
    assert tools["memory_recent"].annotations.read_only_hint is True
    assert tools["memory_forget"].annotations.destructive_hint is False
    assert tools["memory_forget"].annotations.idempotent_hint is True
    assert tools["memory_update"].annotations.idempotent_hint is True
    assert tools["memory_write"].annotations.destructive_hint is False
    assert set(tools["memory_search"].output_schema["properties"]) >= {
        "query", "matched_count", "returned_count", "facts"
    }
    scored = tools["memory_search"].output_schema["properties"]["facts"]["items"]
    assert {"uid", "title", "text", "status", "score", "rank", "matched_by", "similarity"} <= set(scored["properties"])
    written = tools["memory_write"].output_schema["properties"]
    assert written["fact"]["properties"] == written["similar"]["items"]["properties"]
    assert written["fact"]["properties"]["kind"]["enum"] == list(KINDS)


async def test_tags_with_plus_and_hash_and_a_schema_no_stricter_than_the_server(base_url: str,
                                                                              alpha: ProfileAccess) -> None:
    """README, The five tools: `c#`, `c++`, `f#` are tags; the input schema accepts what the server takes before
    normalising (upper case, surrounding spaces) and refuses what the server refuses."""
    import re

    from service.domain import validation
    from service.errors import InvalidInput

    async with mcp_client(base_url, "alpha", alpha.token) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        pattern = re.compile(tools["memory_write"].input_schema["properties"]["tags"]["items"]["pattern"])
        for tag in ("c#", "C++", " F# ", "lang:python", "a/b.c_d-e"):
            assert pattern.match(tag), tag
            assert validation.tags([tag]) == [tag.strip().lower()]
        for tag in ("#c", "+x", "bad tag!", "", "é"):
            assert not pattern.match(tag), tag
            with pytest.raises(InvalidInput):
                validation.tags([tag])
        result = await client.call_tool("memory_write", {"title": "Languages", "text": "Writes C# and C++ daily.",
                                                         "kind": "user", "tags": ["C#", "c++", " F# "]})
        assert not result.is_error, result.content
        assert result.structured_content["fact"]["tags"] == ["c#", "c++", "f#"]
        found = await client.call_tool("memory_search", {"query": "languages", "tags": ["c#"]})
        assert found.structured_content["matched_count"] == 1


async def test_kind_and_limits_are_taken_exactly_as_the_input_schema_says(base_url: str, alpha: ProfileAccess) -> None:
    """The input schema states exactly what the server accepts, both ways: a kind is one of the enum's six
    lower-case names (no other spelling is read as one of them), and a limit is a JSON Schema integer, which
    includes 5.0 (a number without a fraction) but not true, "5" or 2.5."""
    import jsonschema

    async with mcp_client(base_url, "alpha", alpha.token) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        write, search = tools["memory_write"].input_schema, tools["memory_search"].input_schema
        recent = tools["memory_recent"].input_schema

        def admitted(schema: dict, arguments: dict) -> bool:
            return jsonschema.Draft202012Validator(schema).is_valid(arguments)

        for kind in ("Project", "PROJECT", " project", "project "):
            arguments = {"title": "T", "text": "some text", "kind": kind}
            assert not admitted(write, arguments), kind
            refused = await client.call_tool("memory_write", arguments)
            assert refused.is_error and "unknown kind" in refused.content[0].text, kind
            refused = await client.call_tool("memory_search", {"query": "text", "kind": kind})
            assert refused.is_error and "unknown kind" in refused.content[0].text, kind
        written = await client.call_tool("memory_write", {"title": "T", "text": "some text", "kind": "project"})
        assert not written.is_error

        for limit in (5.0, 1.0, 50.0):
            assert admitted(search, {"query": "text", "limit": limit}) and admitted(recent, {"limit": limit})
            found = await client.call_tool("memory_search", {"query": "some text", "limit": limit})
            assert not found.is_error, (limit, found.content)
            assert found.structured_content["returned_count"] == 1
            recent_facts = await client.call_tool("memory_recent", {"limit": limit})
            assert not recent_facts.is_error and len(recent_facts.structured_content["facts"]) == 1
        for limit in (True, "5", 2.5, 51.0, 0.0):
            assert not admitted(search, {"query": "text", "limit": limit}), limit
            refused = await client.call_tool("memory_search", {"query": "text", "limit": limit})
            assert refused.is_error, limit


async def test_what_the_schema_admits_the_server_takes_and_what_it_refuses_the_server_refuses(
        base_url: str, alpha: ProfileAccess) -> None:
    """Lengths and counts as sent (the schema's maxLength and maxItems count spaces and duplicates too; a tag is
    1-64 characters once trimmed, which its pattern states), the tag pattern the same in ECMA-262 and Python (explicit classes: no `\\s`, no Kelvin sign read as k), the search
    filter's tags under the same pattern as a fact's, and an explicit null limit read as "not given"."""
    import jsonschema

    async with mcp_client(base_url, "alpha", alpha.token) as client:
        tools = {t.name: t.input_schema for t in (await client.list_tools()).tools}
        uid = (await call(client, "memory_write", title="T", text="some text", kind="project"))["fact"]["uid"]
        good = {"title": "T", "text": "x", "kind": "reference"}
        cases = [
            ("memory_write", {**good, "title": "  " + "a" * 199 + "  "}, False),
            ("memory_write", {**good, "title": " " + "a" * 198 + " "}, True),
            ("memory_write", {**good, "text": " " + "x" * 8000}, False),
            ("memory_search", {"query": " " + "q" * 1000}, False),
            ("memory_forget", {"uid": uid, "reason": "  " + "r" * 499 + "  "}, False),
            ("memory_update", {"uid": " " * 20 + uid, "title": "U"}, False),
            ("memory_write", {**good, "tags": ["x"] * 21}, False),
            ("memory_write", {**good, "tags": ["T1", "t1", *[f"t{i}" for i in range(2, 20)]]}, True),
            ("memory_search", {"query": "text", "tags": ["x"] * 21}, False),
            ("memory_write", {**good, "tags": [" " + "a" * 64 + "\n"]}, True),  # 64 once trimmed
            ("memory_write", {**good, "tags": ["a" * 65]}, False),
            ("memory_write", {**good, "tags": [" " + "a" * 62 + " "]}, True),
            ("memory_write", {**good, "tags": ["\u212a"]}, False),
            ("memory_write", {**good, "tags": ["\u212aa"]}, False),
            ("memory_write", {**good, "tags": ["\x1cabc"]}, False),
            ("memory_write", {**good, "tags": ["\x85abc"]}, False),
            ("memory_write", {**good, "tags": ["\ufeffabc"]}, False),
            ("memory_write", {**good, "tags": ["\u00a0abc"]}, False),
            ("memory_write", {**good, "tags": ["\tC#\n "]}, True),
            ("memory_search", {"query": "text", "tags": ["a b"]}, False),
            ("memory_search", {"query": "text", "tags": ["-abc"]}, False),
            ("memory_search", {"query": "text", "tags": [" C# "]}, True),
            # something left once trimmed, no NUL (FILLED_PATTERN): where JavaScript's \s and Python's trim differ too
            ("memory_search", {"query": "   "}, False),
            ("memory_search", {"query": "\x1c\x85\u3000"}, False),
            ("memory_search", {"query": "\ufeff"}, True),
            ("memory_search", {"query": " text\x00 "}, False),
            ("memory_write", {**good, "title": "\t\n"}, False),
            ("memory_write", {**good, "text": "\u00a0\u2028"}, False),
            ("memory_write", {**good, "text": "a\x00"}, False),
            ("memory_update", {"uid": "  ", "title": "U"}, False),
            ("memory_update", {"uid": uid, "title": " \x1f "}, False),
            ("memory_update", {"uid": uid, "text": "\r\n"}, False),
            ("memory_forget", {"uid": uid + "\x00"}, False),
            ("memory_forget", {"uid": uid, "reason": "gone\x00"}, False),
        ]
        for tool, arguments, valid in cases:
            admitted = jsonschema.Draft202012Validator(tools[tool]).is_valid(arguments)
            result = await client.call_tool(tool, arguments)
            assert admitted is valid and result.is_error is not valid, (tool, arguments, result.content)
        written = await call(client, "memory_write", **{**good, "tags": ["\tC#\n ", "K8s"]})
        assert written["fact"]["tags"] == ["c#", "k8s"]
        for tool, default in (("memory_search", 8), ("memory_recent", 10)):
            arguments = {"query": "x", "limit": None} if tool == "memory_search" else {"limit": None}
            assert not (await client.call_tool(tool, arguments)).is_error, tool
        assert len((await call(client, "memory_recent", limit=None))["facts"]) == 7  # the default 10: all seven


def test_server_info_names_the_version_and_the_address_opens_the_dashboard(base_url: str,
                                                                           alpha: ProfileAccess) -> None:
    import httpx

    from service import __version__

    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "test", "version": "0"}}}
    headers = {**alpha.headers, "Accept": "application/json, text/event-stream"}
    answer = httpx.post(f"{base_url}/mcp/alpha", json=body, headers=headers, timeout=10).json()
    info = answer["result"]["serverInfo"]
    assert (info["name"], info["version"]) == ("memory", __version__)
    root = httpx.get(f"{base_url}/", follow_redirects=False, timeout=10)
    assert root.status_code == 307 and root.headers["location"] == "/ui/"


async def test_readme_marks_exactly_the_arguments_each_tool_requires(base_url: str, alpha: ProfileAccess) -> None:
    """README's "The five tools" table says `(required` after each argument a tool's input schema requires, and
    after no other (a client author reads the table, not the schema)."""
    import re
    from pathlib import Path

    async with mcp_client(base_url, "alpha", alpha.token) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("\n## The five tools\n", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `(memory_\w+)` \| ([^|]*) \|", section, re.M))
    assert set(rows) == FIVE
    for name, tool in tools.items():
        marked = set(re.findall(r"`(\w+)` \(required", rows[name]))
        assert marked == set(tool.input_schema.get("required", [])), (name, rows[name])


TOOLS_LIST_BEFORE_WINDOW = 13_399  # characters of tools/list (compact JSON) before since/until (issue 59)


async def test_tools_list_stays_short(base_url: str, alpha: ProfileAccess) -> None:
    """What every agent reads at connect: the time window grew it by under 10 %."""
    async with mcp_client(base_url, "alpha", alpha.token) as client:
        listed = await client.list_tools()
    size = len(json.dumps(listed.model_dump(mode="json", by_alias=True, exclude_none=True), separators=(",", ":")))
    print(f"tools/list: {size} characters ({size / TOOLS_LIST_BEFORE_WINDOW - 1:+.1%} since the time window)")
    assert size < TOOLS_LIST_BEFORE_WINDOW * 1.10
    search = next(t for t in listed.tools if t.name == "memory_search").input_schema["properties"]
    for end in ("since", "until"):
        assert search[end]["type"] == "string" and search[end]["maxLength"] == 64 and "required" not in search[end]
    assert "7d" in search["since"]["description"] and "ISO 8601" in search["since"]["description"]


# ECMA-262's WhiteSpace and LineTerminator code points: what `\s` means to a JSON Schema validator in JavaScript
ECMA_SPACE = frozenset("\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
                       "\u2028\u2029\u202f\u205f\u3000\ufeff")


def test_the_filled_pattern_is_the_servers_rule_in_python_and_in_javascript() -> None:
    """FILLED_PATTERN (query, title, text, uid) admits exactly the strings the server takes (something left once
    trimmed, no NUL), for every character alone and around a space, read by Python's `re` and as ECMA-262 reads its
    class (its `\\s` modelled by ECMA_SPACE: U+FEFF in, U+001C-U+001F and U+0085 out)."""
    import re

    from service.contract import FILLED_PATTERN, NO_NUL_PATTERN
    from service.domain import validation
    from service.errors import InvalidInput

    def server_takes(value: str) -> bool:
        try:
            validation.query(value)
        except InvalidInput:
            return False
        return True

    def ecma_admits(value: str) -> bool:  # the pattern's class read with ECMA's \s
        kept_out = ECMA_SPACE | {"\x00", "\x1c", "\x1d", "\x1e", "\x1f", "\x85"}
        return "\x00" not in value and any(ch not in kept_out or ch == "\ufeff" for ch in value)

    assert {chr(c) for c in range(0x110000) if chr(c).isspace()} - ECMA_SPACE == set("\x1c\x1d\x1e\x1f\x85")
    pattern, no_nul = re.compile(FILLED_PATTERN), re.compile(NO_NUL_PATTERN)
    for code in [*range(0x3100), 0xfeff, 0x1f600, 0x10ffff]:
        for value in (chr(code), f" {chr(code)} ", f"a{chr(code)}"):
            takes = server_takes(value)
            assert bool(pattern.search(value)) is takes, (hex(code), value)
            assert ecma_admits(value) is takes, (hex(code), value)
            assert bool(no_nul.search(value)) is (chr(code) != "\x00")
