"""Dependencies of the REST routes: the services and the authenticated profile."""

from __future__ import annotations

from typing import Annotated

import anyio
from fastapi import Depends, Path, Request

from service.container import Services
from service.domain.profiles import ProfileRef


def services(request: Request) -> Services:
    return request.app.state.services  # type: ignore[no-any-return]


ServicesDep = Annotated[Services, Depends(services)]


async def path_profile(
    request: Request, svc: ServicesDep, profile: Annotated[str, Path(description="Profile name.")]
) -> ProfileRef:
    """The profile in the path, if the bearer token opens it; otherwise 401 (the same answer in every case)."""
    return await anyio.to_thread.run_sync(svc.profiles.authenticate, request.headers.get("authorization"), profile)


async def token_profile(request: Request, svc: ServicesDep) -> ProfileRef:
    """The profile the bearer token opens (for /api/profiles)."""
    return await anyio.to_thread.run_sync(svc.profiles.authenticate, request.headers.get("authorization"), None)


ProfileDep = Annotated[ProfileRef, Depends(path_profile)]
CallerDep = Annotated[ProfileRef, Depends(token_profile)]
