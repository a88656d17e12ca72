"""The SDK's MCPServer with two changes: every tool error is one line that starts with the tool's name, and a
call whose arguments do not fit the input schema names the argument; an argument the schema does not declare
is refused (`additionalProperties: false`) instead of ignored, so `limt` is a mistake the agent learns of.

The SDK reports argument errors as pydantic's multi-line dump (with a documentation URL) and prefixes our own
errors with "Error executing tool"; agents relay both badly. Crashes keep the SDK's generic message (their
detail stays in the server log); the protocol and everything else are the SDK's own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, InputRequiredResult
from pydantic import ValidationError

from service.error_bodies import input_problems

MAX_LISTED = 3  # problems named in one message


def describe(tool: str, error: ValidationError) -> str:
    """`memory_search: argument limit: must be an integer (got true); argument query: is required`."""
    problems = input_problems(error.errors())
    parts = [f"argument {p.where or 'arguments'} is required" if p.missing else
             f"argument {p.where or 'arguments'}: {p.message} (got {p.shown()})" for p in problems[:MAX_LISTED]]
    more = len(problems) - MAX_LISTED
    if more > 0:
        parts.append(f"and {more} more")
    return f"{tool}: " + "; ".join(parts)


def unknown_arguments(tool: str, arguments: dict[str, Any], schema: dict[str, Any]) -> str | None:
    """`memory_search: unknown argument limt; valid arguments: query, limit, kind, tags, since, until`, or None."""
    valid = list(schema.get("properties", {}))
    unknown = [name for name in arguments if name not in valid]
    if not unknown:
        return None
    shown = ", ".join(repr(n)[1:-1][:40] for n in unknown[:MAX_LISTED])
    plural = "s" if len(unknown) > 1 else ""
    return f"{tool}: unknown argument{plural} {shown}; valid arguments: {', '.join(valid)}"


def inlined(schema: Any, defs: dict[str, Any] | None = None) -> Any:
    """The schema with every `{"$ref": "#/$defs/X"}` replaced by X itself and `$defs` gone (pydantic has no
    option for it; our output models are not recursive). A client validates each returned fact against the
    fact's schema with no reference to resolve (jsonschema: ~15 % less time on a ten-fact search result), and
    clients that do not resolve references at all read the whole shape."""
    if isinstance(schema, dict):
        defs = schema.get("$defs", defs)
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and defs is not None:
            return inlined(defs[ref.removeprefix("#/$defs/")], defs)
        return {key: inlined(value, defs) for key, value in schema.items() if key != "$defs"}
    if isinstance(schema, list):
        return [inlined(item, defs) for item in schema]
    return schema


def finished(tool: Tool) -> Tool:
    """The tool as served: its input schema says `additionalProperties: false` (call_tool refuses what it does not
    declare; the SDK builds the schema from the function's signature and has no option for it), and its output
    schema is published without references (`inlined`)."""
    metadata = tool.fn_metadata
    if metadata.output_schema is not None:  # what the SDK publishes and checks results against
        metadata = metadata.model_copy(update={"output_schema": inlined(metadata.output_schema)})
    return tool.model_copy(update={"parameters": {**tool.parameters, "additionalProperties": False},
                                   "fn_metadata": metadata})


class MemoryMCPServer(MCPServer[dict[str, Any]]):
    """Serves `tools` (finished) through the SDK's public constructor, and remembers its lifespan's state while
    the SDK's session manager runs it (the manager enters the server's lifespan when it starts, leaves it when
    it stops): service.mcp.exchange answers a call only then, with that state, as the manager's own path does."""

    def __init__(self, name: str, *, tools: list[Tool], **settings: Any) -> None:
        served = [finished(tool) for tool in tools]
        self.input_schemas: dict[str, dict[str, Any]] = {tool.name: tool.parameters for tool in served}
        self.lifespan_state: dict[str, Any] | None = None
        super().__init__(name, tools=served, lifespan=self.remembered_lifespan, **settings)

    @asynccontextmanager
    async def remembered_lifespan(self, _server: MCPServer[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
        """The SDK's default lifespan (an empty state), remembered while it lasts."""
        state: dict[str, Any] = {}
        self.lifespan_state = state
        try:
            yield state
        finally:
            self.lifespan_state = None

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None
                        ) -> CallToolResult | InputRequiredResult:
        schema = self.input_schemas.get(name)
        if schema is not None and (refusal := unknown_arguments(name, arguments or {}, schema)):
            raise ToolError(refusal)
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(describe(name, cause)) from cause
            if isinstance(cause, ToolError):  # raised by the tool itself: its own one-line reason
                raise ToolError(f"{name}: {cause}") from cause
            raise
