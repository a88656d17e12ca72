"""The five MCP tools. Thin: read arguments, call one domain service, render structured + short text.

Bounds are published in the input schemas (from service.contract), and checked by the domain
(service.domain.validation, from the same limits) so that a refused call is a tool error with a one-line
reason the agent can act on.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from typing import Annotated, Any, TypeVar

import anyio
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, BeforeValidator, Field, StrictInt, WithJsonSchema
from pydantic_core import PydanticCustomError

from service.container import Services
from service import contract as c
from service.domain.models import Fact, ScoredFact
from service.domain.profiles import ProfileRef
from service.error_bodies import tool_text
from service.errors import MemoryServiceError
from service.mcp import schemas as out

PROFILE_SCOPE_KEY = "memory.profile"
T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

FILLED = {"type": "string", "minLength": 1, "pattern": c.FILLED_PATTERN}  # something once trimmed, no NUL
Query = Annotated[str, WithJsonSchema({**FILLED, "maxLength": c.QUERY_MAX,
                                       "description": "What you want to know, in words or an identifier."})]
Uid = Annotated[str, WithJsonSchema({**FILLED, "maxLength": c.UID_MAX,
                                     "description": "uid of the fact, as returned by search, write or recent."})]
Title = Annotated[str, WithJsonSchema({**FILLED, "maxLength": c.TITLE_MAX, "description": "Short name of the fact."})]
Text = Annotated[str, WithJsonSchema({**FILLED, "maxLength": c.TEXT_MAX,
                                      "description": "The fact itself, self-contained."})]
Kind = Annotated[str, WithJsonSchema({"type": "string", "enum": list(c.KINDS)})]


def _no_null_default(schema: dict[str, Any]) -> None:
    """An optional argument is simply left out: no `default: null` on a typed property (a strict client would
    refuse the schema's own default). Not a `["string", "null"]` type either: single-type dialects (Gemini's
    function declarations) reject type arrays. The server still reads an explicit null as "not given"."""
    if "default" in schema and schema["default"] is None:
        del schema["default"]


OPTIONAL = Field(json_schema_extra=_no_null_default)
OptTitle = Annotated[str | None, WithJsonSchema({**FILLED, "maxLength": c.TITLE_MAX}), OPTIONAL]
OptText = Annotated[str | None, WithJsonSchema({**FILLED, "maxLength": c.TEXT_MAX,
                                                "description": "New text; a change supersedes the fact."}), OPTIONAL]
OptKind = Annotated[str | None, WithJsonSchema({"type": "string", "enum": list(c.KINDS)}), OPTIONAL]
TAG_ITEM = {"type": "string", "minLength": 1, "pattern": c.TAG_INPUT_PATTERN}  # the pattern bounds its length
Tags = Annotated[list[str] | None, WithJsonSchema({
    "type": "array", "maxItems": c.TAGS_MAX,
    "items": {**TAG_ITEM, "description": f"1-{c.TAG_MAX} characters after trimming, lower-cased by the server: "
                                         f"{c.TAG_CHARACTERS}"}}),
    OPTIONAL]
FilterTags = Annotated[list[str] | None, WithJsonSchema({
    "type": "array", "maxItems": c.TAGS_MAX, "description": "Only facts carrying all of these tags.",
    "items": TAG_ITEM}), OPTIONAL]

WINDOW_FORMS = "ISO 8601 date or date-time (a date is that whole UTC day), or a duration back from now: 7d, 24h, 2w."
Since = Annotated[str | None, WithJsonSchema({
    "type": "string", "minLength": 1, "maxLength": c.WINDOW_END_MAX,
    "description": f"Only facts written or last changed at or after this: {WINDOW_FORMS}"}), OPTIONAL]
Until = Annotated[str | None, WithJsonSchema({
    "type": "string", "minLength": 1, "maxLength": c.WINDOW_END_MAX,
    "description": "... and at or before this (same forms)."}), OPTIONAL]


def _json_integer_or(default: int) -> BeforeValidator:
    """A limit as JSON Schema's integer: any number without a fraction, so 5.0 is 5 (a client that validates
    against the schema lets it through); true/false, "8" and 2.5 are refused, not read as 1, 8 and 2; an
    explicit null is "not given", as for every optional argument."""

    def json_integer(value: object) -> object:
        if value is None:
            return default
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise PydanticCustomError("int_type", "Input should be a valid integer")
        return value

    return BeforeValidator(json_integer)


SearchLimit = Annotated[StrictInt, _json_integer_or(c.SEARCH_LIMIT_DEFAULT), WithJsonSchema(
    {"type": "integer", "minimum": 1, "maximum": c.SEARCH_LIMIT_MAX, "default": c.SEARCH_LIMIT_DEFAULT})]
RecentLimit = Annotated[StrictInt, _json_integer_or(c.RECENT_LIMIT_DEFAULT), WithJsonSchema(
    {"type": "integer", "minimum": 1, "maximum": c.RECENT_LIMIT_MAX, "default": c.RECENT_LIMIT_DEFAULT})]
Reason = Annotated[str | None, WithJsonSchema({"type": "string", "maxLength": c.REASON_MAX, "pattern": c.NO_NUL_PATTERN,
                                               "description": "Why it no longer holds."}), OPTIONAL]


DESCRIPTIONS = {
    "memory_search": (
        "Search long-term memory (keyword + semantic). Call before assuming anything about how the user works, "
        "what a project uses or why a past decision was made. matched_count 0 means memory does not know. "
        "Every returned fact matched: by words, by meaning (similarity = cosine), or both; best first."
    ),
    "memory_write": (
        "Record a durable fact useful in future sessions: who the user is, preferences, project state, "
        "references, research findings, decisions. Not for transient task state or what the repo records. "
        "Check `similar` to avoid duplicates."
    ),
    "memory_update": (
        "Amend a fact by uid when it is outdated or wrong. New text supersedes it under a new uid (the old one "
        "stays on record); title/kind/tags changes keep the uid."
    ),
    "memory_forget": (
        "Retire a fact that no longer holds. Soft: it stays on record but leaves search and recent. "
        "Give a short reason."
    ),
    "memory_recent": "List the most recently written or updated active facts, newest first.",
}


def _result(model: BaseModel, text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=out.dump(model))


def _line(fact: Fact, *, why: str = "", rank: int | None = None) -> str:
    tags = f" #{' #'.join(fact.tags)}" if fact.tags else ""
    head = f"[{fact.uid}] ({fact.kind}{', ' + fact.status if fact.status != 'active' else ''}) {fact.title}{tags}"
    numbered = f"{rank}. {head}" if rank is not None else head
    return f"{numbered}{' — ' + why if why else ''}\n  {fact.text}"


def _instant(at: datetime) -> str:
    return at.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _why(found: ScoredFact) -> str:
    """What an agent can read: how the fact matched, and how close it is in meaning."""
    words, meaning = found.lexical is not None, found.vector is not None
    closeness = f"similarity {found.vector:.2f}" if found.vector is not None else ""
    if words and meaning:
        return f"matched by words and meaning ({closeness})"
    if meaning:
        return f"matched by meaning ({closeness})"
    return "matched by words" if words else ""


def memory_tools(services: Services) -> list[Tool]:
    """The five tools, built by the SDK's Tool.from_function from the functions below (what its `@server.tool`
    decorator does), for MemoryMCPServer to finish and serve."""
    tools: list[Tool] = []

    def tool(description: str, annotations: ToolAnnotations) -> Callable[[F], F]:
        def add(fn: F) -> F:
            tools.append(Tool.from_function(fn, description=description, annotations=annotations))
            return fn
        return add

    def profile_of(ctx: Context) -> ProfileRef:
        request = ctx.request_context.request
        profile = request.scope.get(PROFILE_SCOPE_KEY) if request is not None else None
        if profile is None:
            raise ToolError("no authenticated profile for this request")
        return profile

    async def call(fn: Callable[[], T]) -> T:
        try:
            return await anyio.to_thread.run_sync(fn)
        except MemoryServiceError as exc:
            raise ToolError(tool_text(exc)) from exc

    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @tool(description=DESCRIPTIONS["memory_search"], annotations=read_only)
    async def memory_search(
        query: Query, ctx: Context, limit: SearchLimit = c.SEARCH_LIMIT_DEFAULT, kind: OptKind = None,
        tags: FilterTags = None, since: Since = None, until: Until = None
    ) -> Annotated[CallToolResult, out.SearchOut]:
        profile = profile_of(ctx)
        found = await call(lambda: services.search.search(profile, query, limit=limit, kind=kind, tags=tags,
                                                          since=since, until=until))
        model = out.SearchOut(
            query=found.query, matched_count=found.matched_count, returned_count=found.returned_count,
            mode=found.mode, facts=[out.ScoredFactOut.scored(s, rank) for rank, s in enumerate(found.facts, 1)],
        )
        matched = "unknown" if found.matched_count is None else str(found.matched_count)
        head = f"matched {matched}, returned {found.returned_count} ({found.mode})"
        if found.since is not None or found.until is not None:  # the window as resolved: `7d` becomes a date
            ends = [f"since {_instant(found.since)}" if found.since else "",
                    f"until {_instant(found.until)}" if found.until else ""]
            head += ", changed " + " ".join(e for e in ends if e)
        if found.matched_count == 0:
            head += ": memory does not know this"
        body = "\n".join(_line(f.fact, why=_why(f), rank=rank) for rank, f in enumerate(found.facts, 1))
        return _result(model, f"{head}\n{body}".rstrip())

    @tool(
        description=DESCRIPTIONS["memory_write"],
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                                    open_world_hint=False),
    )
    async def memory_write(
        title: Title, text: Text, kind: Kind, ctx: Context, tags: Tags = None
    ) -> Annotated[CallToolResult, out.WriteOut]:
        profile = profile_of(ctx)
        written = await call(lambda: services.facts.write(profile, title=title, text=text, kind=kind, tags=tags))
        model = out.WriteOut(fact=written.fact, similar=written.similar)
        text_out = f"written {written.fact.uid}"
        if written.similar:
            text_out += "\nsimilar facts (update one of them instead of keeping duplicates?):\n" + "\n".join(
                _line(f) for f in written.similar
            )
        return _result(model, text_out)

    @tool(
        description=DESCRIPTIONS["memory_update"],
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                    open_world_hint=False),
    )
    async def memory_update(
        uid: Uid, ctx: Context, text: OptText = None, title: OptTitle = None, kind: OptKind = None, tags: Tags = None
    ) -> Annotated[CallToolResult, out.UpdateOut]:
        profile = profile_of(ctx)
        updated = await call(
            lambda: services.facts.update(profile, uid, text=text, title=title, kind=kind, tags=tags)
        )
        model = out.UpdateOut(fact=updated.fact, superseded_uid=updated.superseded_uid)
        if updated.superseded_uid:
            summary = f"{updated.superseded_uid} superseded by {updated.fact.uid}"
        elif updated.changed:
            summary = f"amended {updated.fact.uid} in place"
        else:
            summary = f"no change to {updated.fact.uid}"
        return _result(model, summary)

    @tool(
        description=DESCRIPTIONS["memory_forget"],
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                    open_world_hint=False),
    )
    async def memory_forget(uid: Uid, ctx: Context, reason: Reason = None) -> Annotated[CallToolResult, out.ForgetOut]:
        profile = profile_of(ctx)
        fact = await call(lambda: services.facts.forget(profile, uid, reason=reason))
        return _result(out.ForgetOut(fact=fact), f"retired {fact.uid}")

    @tool(description=DESCRIPTIONS["memory_recent"], annotations=read_only)
    async def memory_recent(
        ctx: Context, limit: RecentLimit = c.RECENT_LIMIT_DEFAULT, kind: OptKind = None
    ) -> Annotated[CallToolResult, out.RecentOut]:
        profile = profile_of(ctx)
        facts = await call(lambda: services.facts.recent(profile, limit=limit, kind=kind))
        model = out.RecentOut(facts=facts)
        return _result(model, "\n".join(_line(f) for f in facts) or "no active facts")

    return tools

