"""The SDK's MCPServer with two changes: every tool error is one line that starts with the tool's name, and a
call whose arguments do not fit the input schema names the argument; an argument the schema does not declare
is refused (`additionalProperties: false`) instead of ignored, so `limt` is a mistake the agent learns of.

The SDK reports argument errors as pydantic's multi-line dump (with a documentation URL) and prefixes our own
errors with "Error executing tool"; agents relay both badly. Crashes keep the SDK's generic message (their
detail stays in the server log); the protocol and everything else are the SDK's own.
"""

from __future__ import annotations

from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
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


class MemoryMCPServer(MCPServer):
    def finish_schemas(self) -> None:
        """Every tool's input schema says `additionalProperties: false` (call_tool refuses what it does not
        declare). The SDK builds the schemas from the functions' signatures and has no option for it. Output
        schemas are published without references (`inlined`)."""
        for tool in self._tool_manager.list_tools():
            tool.parameters["additionalProperties"] = False
            if tool.fn_metadata.output_schema is not None:  # read live by the SDK (FuncMetadata)
                tool.fn_metadata.output_schema = inlined(tool.fn_metadata.output_schema)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None
                        ) -> CallToolResult | InputRequiredResult:
        tool = self._tool_manager.get_tool(name)
        if tool is not None and (refusal := unknown_arguments(name, arguments or {}, tool.parameters)):
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
