"""Errors of both HTTP faces: one table from domain error to HTTP status, one answer for both.

The body is decided by service.error_bodies (code, message, param; the REST envelope, or on every path under
/mcp the JSON-RPC one). Bad query parameters are 400, never FastAPI's 422. Headers of an HTTP error are kept;
a 405's Allow names every method the path takes (one route per method: Starlette names only the first's).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import StringConstraints, TypeAdapter, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match, Mount

from service.error_bodies import ErrorInfo, InputProblem, describe, input_problems, jsonrpc_body, rest_body
from service.contract import PROFILE_NAME, PROFILE_NAME_MAX
from service.errors import BackendUnavailable, Conflict, InvalidInput, MemoryServiceError, NotFound, Unauthorized

STATUS: dict[type[MemoryServiceError], int] = {
    InvalidInput: 400,
    Unauthorized: 401,
    NotFound: 404,
    Conflict: 409,
    BackendUnavailable: 503,
}
HTTP_CODES = {400: "bad_request", 401: "unauthorized", 404: "not_found", 405: "method_not_allowed",
              413: "payload_too_large", 414: "uri_too_long", 421: "host_not_allowed",
              431: "header_fields_too_large", 503: "unavailable"}


def is_mcp_path(path: str) -> bool:
    return path == "/mcp" or path.startswith("/mcp/")


def unauthorized_challenge(resource_metadata: str | None = None) -> str:
    """`Bearer`, the same for a missing, unknown, revoked or other profile's token (docs/reviewers.md, "REST API":
    one answer in each case; RFC 6750's error code is a SHOULD, left out so the case does not show). With
    MEMORY_OAUTH=on the MCP endpoint adds where its protected resource metadata is (RFC 9728 §5.1), which is what
    OAuth clients read."""
    return f'Bearer resource_metadata="{resource_metadata}"' if resource_metadata is not None else "Bearer"


def error_response(path: str, status: int, code: str, message: str, param: str | None = None,
                   headers: Mapping[str, str] | None = None, rpc_code: int | None = None) -> JSONResponse:
    """The one error answer of both faces: the body shape follows the path, status and headers do not
    (`rpc_code`: the JSON-RPC code on /mcp paths when it is not the one the status implies)."""
    return _answer(path, status, ErrorInfo(code, message, param), headers, rpc_code)


# A profile name in a path, as REST's routes declare it (service.api.deps.ProfileName: the same constraints).
_PROFILE_IN_PATH = TypeAdapter(Annotated[str, StringConstraints(min_length=1, max_length=PROFILE_NAME_MAX,
                                                                pattern=PROFILE_NAME.pattern)])


_WHERE = ("query", "path", "body", "header")  # where a request's parameter came from: not part of its name


def invalid_parameter(path: str, problems: Sequence[InputProblem]) -> JSONResponse:
    """The 400 of a parameter its declared type refuses (input_problems of pydantic's errors), naming the parameter
    and the rule."""
    first = problems[0] if problems else None
    param = first.where.split(".")[0] if first and first.where else None
    message = f"invalid value for {param}: {first.message}" if first and param else "invalid request"
    return error_response(path, 400, "invalid_parameter", message, param)


def invalid_profile_name(path: str, profile: str) -> JSONResponse | None:
    """The 400 a profile name in the path gets when it cannot be one (REST's path validation, the same words on
    /mcp/{profile}), before any token is looked at; None for a valid name."""
    try:
        _PROFILE_IN_PATH.validate_python(profile)
    except ValidationError as exc:
        return invalid_parameter(path, input_problems([{**e, "loc": ("path", "profile")} for e in exc.errors()],
                                                      skip=_WHERE))
    return None


def domain_error_response(path: str, exc: MemoryServiceError, resource_metadata: str | None = None) -> JSONResponse:
    headers = {"WWW-Authenticate": unauthorized_challenge(resource_metadata)} \
        if isinstance(exc, Unauthorized) else None
    return _answer(path, _status_of(exc), describe(exc), headers)


def _answer(path: str, status: int, info: ErrorInfo, headers: Mapping[str, str] | None,
            rpc_code: int | None = None) -> JSONResponse:
    all_headers = dict(headers or {})
    if status == 401:
        all_headers.setdefault("WWW-Authenticate", "Bearer")
    body = jsonrpc_body(status, info, rpc_code=rpc_code) if is_mcp_path(path) else rest_body(status, info)
    return JSONResponse(body, status_code=status, headers=all_headers or None)


METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def allowed_methods(request: Request, allow: str) -> str:
    """The Allow header of a 405: the methods `allow` (Starlette's, of the one route that answered) names,
    and each other method a route of the app takes at this path (asked of the routes themselves, included
    routers among them; a mounted app answers its own 405s)."""
    scope = {**request.scope, "root_path": request.scope.get("app_root_path", request.scope.get("root_path", ""))}
    routes = [route for route in request.app.router.routes if not isinstance(route, Mount)]
    methods = {m.strip() for m in allow.split(",") if m.strip()} | {
        method for method in METHODS
        if any(route.matches({**scope, "method": method})[0] is Match.FULL for route in routes)}
    if "GET" in methods:
        methods.add("HEAD")  # service.api.head: HEAD wherever GET is
    return ", ".join(sorted(methods))


def _status_of(exc: MemoryServiceError) -> int:
    for cls in type(exc).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return 500


def install(app: FastAPI) -> None:
    @app.exception_handler(MemoryServiceError)
    async def _domain(request: Request, exc: MemoryServiceError) -> JSONResponse:
        return domain_error_response(request.url.path, exc)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        return invalid_parameter(request.url.path, input_problems(exc.errors(), skip=_WHERE))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = HTTP_CODES.get(exc.status_code, "error")
        message = exc.detail if isinstance(exc.detail, str) else code
        if exc.status_code == 404:
            message = "no such endpoint"
            if is_mcp_path(request.url.path):
                message = ("no such endpoint: the MCP endpoint is /mcp/<profile>, with the name of a profile "
                           "(memory profile list) in the URL")
        headers = exc.headers
        if exc.status_code == 405 and headers and "Allow" in headers:
            headers = {**headers, "Allow": allowed_methods(request, headers["Allow"])}
        return error_response(request.url.path, exc.status_code, code, message, headers=headers)


ERROR_SCHEMA = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "status": {"type": "integer"},
                "code": {"type": "string"},
                "message": {"type": "string"},
                "param": {"type": "string"},
            },
            "required": ["status", "code", "message"],
        }
    },
    "required": ["error"],
}

TEXT = {
    400: "A parameter is invalid (out of range, zero, negative, not an integer, too long), or the request carries "
         "more than one Authorization header.",
    401: "No bearer token was sent, or it is unknown, revoked or of another profile: the same answer in every case, "
         "with WWW-Authenticate: Bearer.",
    404: "No such fact or query-log row in this profile; with `as_of`, code `not_yet_created` when the fact "
         "did not exist yet at that instant.",
    414: "The request target (path and query) is over 8 KiB.",
    421: "The Host header is not one the service answers to (MEMORY_ALLOWED_HOSTS).",
    431: "The request headers are over 64 KiB.",
    503: "The database is unavailable, or more requests than MEMORY_MAX_REQUESTS are being served at once.",
}
EVERY_ROUTE = (414, 431, 503)  # answered before any route runs (service.api.limits): listed on every route
WWW_AUTHENTICATE = {"WWW-Authenticate": {"description": "Bearer",
                                         "schema": {"type": "string"}}}


def responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI entries of the error answers a route gives (every route with a token adds 400, 401 and 503)."""
    result: dict[int | str, dict[str, Any]] = {}
    for s in statuses:
        entry: dict[str, Any] = {"description": TEXT[s], "content": {"application/json": {"schema": ERROR_SCHEMA}}}
        if s == 401:
            entry["headers"] = WWW_AUTHENTICATE
        result[s] = entry
    return result


def authenticated(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The answers of a route behind the bearer token: its own statuses plus 400 (duplicated Authorization
    header, bad parameter), 401 and 503 (database unavailable)."""
    return responses(*sorted({400, 401, 503, *statuses}))
