"""REST errors: one table from domain error to HTTP status, one JSON body shape for every error.

Body: {"error": {"status": 400, "code": "invalid_parameter", "message": "...", "param": "limit"}}
Bad query parameters are 400, never FastAPI's 422.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from service.errors import BackendUnavailable, Conflict, InvalidInput, MemoryServiceError, NotFound, Unauthorized

STATUS: dict[type[MemoryServiceError], int] = {
    InvalidInput: 400,
    Unauthorized: 401,
    NotFound: 404,
    Conflict: 409,
    BackendUnavailable: 503,
}
HTTP_CODES = {400: "bad_request", 401: "unauthorized", 404: "not_found", 405: "method_not_allowed"}


def error_body(status: int, code: str, message: str, param: str | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"status": status, "code": code, "message": message}
    if param is not None:
        error["param"] = param
    return {"error": error}


def error_response(status: int, code: str, message: str, param: str | None = None) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse(error_body(status, code, message, param), status_code=status, headers=headers)


def _status_of(exc: MemoryServiceError) -> int:
    for cls in type(exc).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return 500


def install(app: FastAPI) -> None:
    @app.exception_handler(MemoryServiceError)
    async def _domain(_: Request, exc: MemoryServiceError) -> JSONResponse:
        return error_response(_status_of(exc), exc.code, exc.message, exc.param)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        loc = [str(part) for part in first.get("loc", ()) if part not in ("query", "path", "body", "header")]
        param = loc[0] if loc else None
        message = f"invalid value for {param}: {first.get('msg', 'invalid')}" if param else "invalid request"
        return error_response(400, "invalid_parameter", message, param)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = HTTP_CODES.get(exc.status_code, "error")
        message = exc.detail if isinstance(exc.detail, str) else code
        if exc.status_code == 404:
            message = "no such endpoint"
        return error_response(exc.status_code, code, message)


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


def responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    text = {
        400: "A query parameter is invalid (out of range, zero, negative or not an integer).",
        401: "The bearer token is missing, unknown, revoked or belongs to another profile.",
        404: "No such fact or query-log row in this profile.",
    }
    return {
        s: {"description": text[s], "content": {"application/json": {"schema": ERROR_SCHEMA}}} for s in statuses
    }
