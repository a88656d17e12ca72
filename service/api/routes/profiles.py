from __future__ import annotations

from fastapi import APIRouter

from service.api.deps import CallerDep, ServicesDep
from service.web.errors import authenticated
from service.api.schemas import ProfileItem, ProfilesBody
from service.clock import isoformat

router = APIRouter(tags=["profiles"])


@router.get("/api/profiles", response_model_exclude_unset=True, responses=authenticated())
def list_profiles(caller: CallerDep, svc: ServicesDep) -> ProfilesBody:
    """The caller's profile (a token opens exactly one)."""
    facts = svc.facts.count(caller, "active")
    return ProfilesBody(profiles=[ProfileItem(name=caller.name, facts=facts, created_at=isoformat(caller.created_at))])
