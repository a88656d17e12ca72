"""Dependencies of the REST routes: the services and the authenticated profile."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Path, Request, Security
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from service.web.credentials import authenticated, authorization
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
    return request.app.state.services


ServicesDep = Annotated[Services, Depends(services)]


async def path_profile(request: Request, svc: ServicesDep, profile: ProfileName, _: BearerDoc) -> ProfileRef:
    """The profile in the path, if the bearer token opens it; otherwise 401 (the same answer in every case)."""
    opened = await authenticated(svc.profiles, authorization(request.headers), profile)
    _parameters_as_declared(request)
    return opened


async def token_profile(request: Request, svc: ServicesDep, _: BearerDoc) -> ProfileRef:
    """The profile the bearer token opens (for /api/profiles)."""
    opened = await authenticated(svc.profiles, authorization(request.headers), None)
    _parameters_as_declared(request)
    return opened


def _parameters_as_declared(request: Request) -> None:
    """Query parameters the route declares, each once: `?limit=5&limit=6` is ambiguous and `?day=7` (for days)
    a mistake the framework would pass over silently, answering with the default; both are a 400 naming the
    parameter. Checked after the token, so a caller without one gets the same 401 as always."""
    if not request.query_params:
        return
    route = request.scope.get("route")
    declared = _declared(route.dependant) if isinstance(route, APIRoute) else None  # a walk of a few nodes
    seen: set[str] = set()
    for name, _ in request.query_params.multi_items():
        if name in seen:
            raise InvalidInput(f"{name} is given more than once: send it once", param=name)
        if declared is not None and name not in declared:
            takes = f"takes {', '.join(sorted(declared))}" if declared else "takes no query parameters"
            raise InvalidInput(f"unknown query parameter {name!r}: this endpoint {takes}", param=name)
        seen.add(name)


def _declared(dependant: Dependant) -> set[str]:
    """The query parameters a route's function and its dependencies declare (by the names a client sends)."""
    names = {field.alias for field in dependant.query_params}
    for sub in dependant.dependencies:
        names |= _declared(sub)
    return names


ProfileDep = Annotated[ProfileRef, Depends(path_profile)]
CallerDep = Annotated[ProfileRef, Depends(token_profile)]
