"""The Authorization header of a request and the profile its bearer token opens, the same way in both faces."""

from __future__ import annotations

import anyio
from starlette.datastructures import Headers

from service.domain.models import ProfileRef
from service.domain.ports.canonical import WouldWait
from service.domain.profiles import ProfileService
from service.errors import InvalidInput


def authorization(headers: Headers) -> str | None:
    """The one Authorization header, or None. More than one is refused: a proxy that reads the last one would
    authorise a different token than the service, which reads the first."""
    values = headers.getlist("authorization")
    if len(values) > 1:
        raise InvalidInput("more than one Authorization header: send exactly one", param="authorization")
    return values[0] if values else None


async def authenticated(profiles: ProfileService, header: str | None, profile: str | None) -> ProfileRef:
    """The profile the bearer token opens (Unauthorized otherwise): checked on the event loop's thread when the
    store can answer at once (SQLite: service.store.engine.Database.at_once), else on a worker thread."""
    try:
        return profiles.authenticate(header, profile, at_once=True)
    except WouldWait:
        return await anyio.to_thread.run_sync(profiles.authenticate, header, profile)
