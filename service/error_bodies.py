"""What a caller is told about an error, decided once, then put in the envelope of the face that answers.

`describe` decides the content: code, message, `param` (the argument at fault) and `problems` (each place
an imported document is wrong). The envelopes differ because each face's protocol fixes its own:
- REST (docs/reviewers.md, "REST API"): {"error": {"status": 400, "code": "invalid_parameter", "message": "...",
  "param": "limit"}}
- /mcp paths, refused before the MCP SDK sees the request: a JSON-RPC error object, because MCP clients (the
  Python SDK among them) show the server's message only when a non-2xx JSON body is one:
  {"jsonrpc": "2.0", "id": null, "error": {"code": -32001, "message": "...", "data": {"status": 401, ...}}}
- MCP tool errors: a tool result with isError, whose one line is the message (service/mcp/server.py puts
  the tool's name first);
- CLI: with --json {"error": {"code", "message", "param"?, "problems"?}}; without, "error: <headline>" and
  one line per problem.
- OAuth endpoints (/token, /register, /revoke): RFC 6749 §5.2's {"error": "...", "error_description": "..."},
  which OAuth clients parse (service/api/oauth/endpoints.py `oauth_error`, its one place).
Input refused by a schema (pydantic: REST parameters, tool arguments, JSON-RPC messages, settings) is read in
one place too, `input_problems`: every face names the argument and says what was wrong the same way.
Pure: no HTTP, MCP or terminal library; the HTTP faces pass the status they chose (service/web/errors.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from service.errors import MemoryServiceError

JSONRPC_INVALID_REQUEST = -32600
JSONRPC_UNAUTHORIZED = -32001  # implementation-defined server error (JSON-RPC reserves -32000..-32099)
JSONRPC_INTERNAL = -32603


@dataclass(frozen=True)
class ErrorInfo:
    code: str
    message: str
    param: str | None = None
    problems: tuple[dict[str, str], ...] | None = None  # memory import: each (where, field, problem)
    headline: str | None = None  # the line above the problems, when there are any

    def fields(self) -> dict[str, Any]:
        """code, message, then param and problems when there are any (in this order in every envelope)."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.param is not None:
            out["param"] = self.param
        if self.problems is not None:
            out["problems"] = list(self.problems)
        return out


def describe(exc: MemoryServiceError) -> ErrorInfo:
    problems = getattr(exc, "problems", None)  # InvalidDocument
    return ErrorInfo(exc.code, exc.message, exc.param, tuple(problems) if problems is not None else None,
                     getattr(exc, "summary", None))


def rest_body(status: int, info: ErrorInfo) -> dict[str, Any]:
    return {"error": {"status": status, **info.fields()}}


def jsonrpc_body(status: int, info: ErrorInfo, request_id: str | int | None = None,
                 rpc_code: int | None = None) -> dict[str, Any]:
    """The JSON-RPC error: its own numeric code and the message; the service's status and code (and param)
    travel in `data`. 401 is -32001, 5xx -32603 Internal error, any other refusal -32600 Invalid Request."""
    if rpc_code is None:
        rpc_code = JSONRPC_UNAUTHORIZED if status == 401 else JSONRPC_INTERNAL if status >= 500 \
            else JSONRPC_INVALID_REQUEST
    data = {"status": status, **{k: v for k, v in info.fields().items() if k != "message"}}
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": rpc_code, "message": info.message, "data": data}}


def tool_text(exc: MemoryServiceError) -> str:
    """The one line of an MCP tool error."""
    return describe(exc).message


def cli_body(info: ErrorInfo) -> dict[str, Any]:
    return {"error": info.fields()}


def cli_lines(info: ErrorInfo) -> list[str]:
    """The human rendering: the headline (the message when there is no list of problems), then one line per
    problem with its place."""
    lines = [info.headline or info.message]
    for problem in info.problems or ():
        field = f" {problem['field']}" if problem["field"] else ""
        lines.append(f"  {problem['where']}{field}: {problem['problem']}")
    return lines


@dataclass(frozen=True)
class InputProblem:
    """One place where input did not fit its schema, read from a pydantic error."""

    where: str | None  # the argument, parameter or variable (dotted when nested); None: a rule over several
    text: str  # pydantic's words as written (a validator's own message without pydantic's "Value error, ")
    missing: bool
    got: Any  # the refused value

    @property
    def message(self) -> str:
        """The words to put after a name: first letter lower-cased, no trailing period ("input should be ...")."""
        text = self.text.rstrip(".") or "is invalid"
        return text[:1].lower() + text[1:]

    def shown(self, width: int = 40) -> str:
        """The refused value as a caller wrote it: null, true, false, 7, '8' (cut at `width` characters)."""
        got = self.got
        text = "null" if got is None else "true" if got is True else "false" if got is False else repr(got)
        return text if len(text) <= width else text[:width - 3] + "..."


def input_problems(errors: Iterable[Mapping[str, Any]], skip: Sequence[str | int] = ()) -> list[InputProblem]:
    """pydantic's `ValidationError.errors()` as problems; `skip`: location parts that name no argument (FastAPI's
    "query", a JSON-RPC message's first part)."""
    problems = []
    for error in errors:
        loc = [str(part) for part in error.get("loc", ()) if part not in skip and part != "__root__"]
        problems.append(InputProblem(".".join(loc) or None, str(error.get("msg", "")).removeprefix("Value error, "),
                                     error.get("type") == "missing", error.get("input")))
    return problems
