"""The Authorization header of a request, read the same way by both faces."""

from __future__ import annotations

from starlette.datastructures import Headers

from service.errors import InvalidInput


def authorization(headers: Headers) -> str | None:
    """The one Authorization header, or None. More than one is refused: a proxy that reads the last one would
    authorise a different token than the service, which reads the first."""
    values = headers.getlist("authorization")
    if len(values) > 1:
        raise InvalidInput("more than one Authorization header: send exactly one", param="authorization")
    return values[0] if values else None
