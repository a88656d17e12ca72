"""The profile's OAuth grants (MEMORY_OAUTH=on; hosted MCP clients): list, one, revoke. Behind the profile's
static token only (an OAuth access token opens the MCP endpoint, not this API)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path

from service.api.deps import ProfileDep, ServicesDep
from service.web.errors import ERROR_SCHEMA, authenticated
from service.api.schemas import GrantBody, GrantsBody

router = APIRouter(tags=["grants"])

GrantId = Annotated[str, Path(min_length=20, max_length=20, pattern=r"^grt_[0-9a-f]{16}$",
                              description="A grant's id, as listed (`grt_` and 16 hex digits).")]
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"description": "No such grant in this profile.",
                   "content": {"application/json": {"schema": ERROR_SCHEMA}}}}


@router.get("/api/{profile}/grants", response_model_exclude_unset=True, responses=authenticated())
def list_grants(profile: ProfileDep, svc: ServicesDep) -> GrantsBody:
    """The profile's grants to hosted MCP clients, newest first, revoked ones included."""
    return GrantsBody(profile=profile.name, grants=svc.grants.listing(profile.name))


@router.get("/api/{profile}/grants/{grant_id}", response_model_exclude_unset=True,
            responses={**authenticated(), **NOT_FOUND})
def get_grant(profile: ProfileDep, svc: ServicesDep, grant_id: GrantId) -> GrantBody:
    """One grant."""
    return GrantBody(profile=profile.name, grant=svc.grants.get(profile.name, grant_id))


@router.delete("/api/{profile}/grants/{grant_id}", response_model_exclude_unset=True,
               response_description="The grant, revoked (revoking it again answers the same).",
               responses={**authenticated(), **NOT_FOUND})
def revoke_grant(profile: ProfileDep, svc: ServicesDep, grant_id: GrantId) -> GrantBody:
    """Revoke a grant: every token it issued stops working at once."""
    revoked = svc.grants.revoke(grant_id, profile.name, "revoked through the REST API (or the dashboard)")
    return GrantBody(profile=profile.name, grant=revoked)
