"""Dependencies of the REST routes: the services and the authenticated profile."""

from __future__ import annotations

from typing import Annotated

import anyio
from fastapi import Depends, Path, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from service.web.credentials import authorization
from service.container import Services
from service.contract import PROFILE_NAME, PROFILE_NAME_MAX
from service.domain.profiles import ProfileRef
from service.errors import InvalidInput

# Documents the bearer requirement on each route that depends on it (OpenAPI per-route security); the header
# itself is read by credentials.authorization, which also refuses duplicates.
BEARER = HTTPBearer(auto_error=False, scheme_name="bearer", description="A token of the profile in the path.")
BearerDoc = Annotated[HTTPAuthorizationCredentials | None, Security(BEARER)]
ProfileName = Annotated[str, Path(min_length=1, max_length=PROFILE_NAME_MAX, pattern=PROFILE_NAME.pattern,
                                  description=f"Profile name: 1-{PROFILE_NAME_MAX} characters of a-z 0-9 _ -, "
                                              "starting with a letter or digit.")]


def services(request: Request) -> Services:
    return request.app.state.services  # type: ignore[no-any-return]


ServicesDep = Annotated[Services, Depends(services)]


async def path_profile(request: Request, svc: ServicesDep, profile: ProfileName, _: BearerDoc) -> ProfileRef:
    """The profile in the path, if the bearer token opens it; otherwise 401 (the same answer in every case)."""
    opened = await anyio.to_thread.run_sync(svc.profiles.authenticate, authorization(request.headers), profile)
    _each_parameter_once(request)
    return opened


async def token_profile(request: Request, svc: ServicesDep, _: BearerDoc) -> ProfileRef:
    """The profile the bearer token opens (for /api/profiles)."""
    opened = await anyio.to_thread.run_sync(svc.profiles.authenticate, authorization(request.headers), None)
    _each_parameter_once(request)
    return opened


def _each_parameter_once(request: Request) -> None:
    """`?limit=5&limit=6` is ambiguous (the framework would take one silently): a 400 naming it. Checked after
    the token, so a caller without one gets the same 401 as always."""
    seen: set[str] = set()
    for name, _ in request.query_params.multi_items():
        if name in seen:
            raise InvalidInput(f"{name} is given more than once: send it once", param=name)
        seen.add(name)


ProfileDep = Annotated[ProfileRef, Depends(path_profile)]
CallerDep = Annotated[ProfileRef, Depends(token_profile)]
