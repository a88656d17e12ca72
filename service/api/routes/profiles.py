from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from service.api.deps import CallerDep, ServicesDep
from service.web.errors import authenticated
from service.api.schemas import ProfilesBody, ok
from service.clock import isoformat

router = APIRouter(tags=["profiles"])


@router.get("/api/profiles", response_model=None, responses={**ok(ProfilesBody), **authenticated()})
def list_profiles(caller: CallerDep, svc: ServicesDep) -> dict[str, Any]:
    """The caller's profile (a token opens exactly one)."""
    facts = svc.facts.count(caller, "active")
    return {"profiles": [{"name": caller.name, "facts": facts, "created_at": isoformat(caller.created_at)}]}
