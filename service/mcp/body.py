"""A /mcp request body, read and checked before the SDK sees it: bounded in size and in depth.

The endpoint reads the body anyway (to refuse ids the SDK would take for notifications, and to start a
search's embedding early), so every hostile body is answered here with a JSON-RPC error and a 4xx, never a
500: malformed or too deeply nested JSON is -32700 Parse error, JSON that is not one JSON-RPC message (or a
request whose id is not a string or an integer) -32600 Invalid Request, a body over the limit 413 naming it.

Depth: pydantic-core's parser (the one the SDK uses) refuses nesting beyond its recursion limit (~200) with a
ValueError, where `json.loads` raised RecursionError out of the endpoint (a 500).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pydantic_core
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.types import JSONRPCMessage, jsonrpc_message_adapter
from pydantic import ValidationError
from starlette.datastructures import Headers
from starlette.types import Message, Receive

from service.error_bodies import input_problems

MAX_BODY_BYTES = DEFAULT_MAX_REQUEST_BODY_SIZE  # 4 MiB, the SDK's own limit
# A body over the limit but under this is read to its end and dropped, so that the 413 can leave the
# connection open for the next request; a larger one is answered at once and the connection closed.
DRAIN_BYTES = 16 * 1024 * 1024
PARSE_ERROR = -32700
INVALID_REQUEST = -32600


@dataclass(frozen=True)
class Refusal:
    """Why a body is refused: the HTTP status, the service's error code, the JSON-RPC code and one line."""

    status: int
    code: str
    rpc_code: int
    message: str
    close: bool = False  # the rest of the body was not read: the connection cannot be reused


@dataclass
class Body:
    messages: list[Message]  # as received, to replay to the SDK
    message: Any = None  # the parsed JSON
    rpc: JSONRPCMessage | None = None  # the message as the SDK reads it (its own adapter), when valid
    refusal: Refusal | None = None
    disconnected: bool = False  # the client went away before sending all of it


def too_large(close: bool) -> Refusal:
    return Refusal(413, "payload_too_large", INVALID_REQUEST,
                   f"Request body too large: the limit is {MAX_BODY_BYTES} bytes ({MAX_BODY_BYTES // 1048576} MiB)",
                   close=close)


def _declared_length(headers: Headers) -> int | None:
    try:
        return int(headers["content-length"])
    except (KeyError, ValueError):
        return None


async def read(receive: Receive, headers: Headers) -> Body:
    """Read the whole body (up to MAX_BODY_BYTES) and check it: parsed, or why it is refused."""
    declared = _declared_length(headers)
    if declared is not None and declared > DRAIN_BYTES:
        return Body([], refusal=too_large(close=True))
    messages: list[Message] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            messages.append(message)
            return Body(messages, disconnected=True)
        size += len(message.get("body", b""))
        if size <= MAX_BODY_BYTES:
            messages.append(message)
        elif size > DRAIN_BYTES:
            return Body([], refusal=too_large(close=True))
        if not message.get("more_body", False):
            break
    if size > MAX_BODY_BYTES:
        return Body([], refusal=too_large(close=False))
    body = Body(messages)
    raw = b"".join(m.get("body", b"") for m in messages)
    try:
        body.message = pydantic_core.from_json(raw)
    except ValueError as exc:
        body.refusal = Refusal(400, "parse_error", PARSE_ERROR, f"Parse error: {_first_line(str(exc))}")
        return body
    if _invalid_id(body.message):
        body.refusal = Refusal(400, "invalid_request", INVALID_REQUEST,
                               "Invalid Request: a JSON-RPC request id must be a string or an integer")
        return body
    try:
        body.rpc = jsonrpc_message_adapter.validate_python(body.message, by_name=False)
    except ValidationError as exc:
        body.refusal = Refusal(400, "invalid_request", INVALID_REQUEST,
                               f"Invalid Request: not a JSON-RPC 2.0 message ({_shape(body.message, exc)})")
    return body


def _invalid_id(message: Any) -> bool:
    """A JSON-RPC request (it has a method and an id) whose id is neither a string nor an integer: the SDK
    would read it as a notification (202, never an answer)."""
    if not isinstance(message, dict) or "method" not in message or "id" not in message:
        return False
    request_id = message["id"]
    return isinstance(request_id, bool) or not isinstance(request_id, str | int)


def _shape(message: Any, exc: ValidationError) -> str:
    if not isinstance(message, dict):
        return f"expected one object, got {type(message).__name__ if message is not None else 'null'}"
    if message.get("jsonrpc") != "2.0":
        return 'expected "jsonrpc": "2.0"'
    if "method" not in message and "result" not in message and "error" not in message:
        return "expected a method"
    first = next(iter(input_problems({**e, "loc": e.get("loc", ())[1:]} for e in exc.errors())), None)
    return f"{first.where or 'message'}: {first.message}" if first else "message: invalid"


def _first_line(text: str) -> str:
    return text.splitlines()[0][:200] if text else "invalid JSON"


def search_query(message: Any) -> str | None:
    """The query of a memory_search tools/call, else None (whatever the SDK will make of the rest)."""
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    params = message.get("params")
    if not isinstance(params, dict) or params.get("name") != "memory_search":
        return None
    arguments = params.get("arguments")
    query = arguments.get("query") if isinstance(arguments, dict) else None
    return query if isinstance(query, str) else None
