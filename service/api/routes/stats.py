from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Response

from service.api.deps import ProfileDep, ServicesDep
from service.web.errors import authenticated
from service.api.source import set_source
from service.api.schemas import StatsBody, ok
from service.contract import DAYS_DEFAULT, DAYS_MAX

router = APIRouter(tags=["stats"])

Days = Annotated[int, Query(ge=1, le=DAYS_MAX, description=f"Window in whole UTC days ending today (1-{DAYS_MAX}).")]


@router.get("/api/{profile}/stats", response_model=None, responses={**ok(StatsBody), **authenticated()})
def stats(profile: ProfileDep, svc: ServicesDep, response: Response, days: Days = DAYS_DEFAULT) -> dict[str, Any]:
    """The store's shape: counts by status and kind, top tags, created/retired per day, span.

    With the OpenSearch mirror, X-Memory-Source says where the answer came from (as for the summary)."""
    result = svc.stats.stats_from(profile, days, svc.backend)
    set_source(response, result)
    return result.body
