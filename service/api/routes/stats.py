from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Response

from service.api.deps import ProfileDep, ServicesDep
from service.api.errors import authenticated
from service.api.schemas import StatsBody, ok
from service.domain.querylog import DAYS_DEFAULT, DAYS_MAX

router = APIRouter(tags=["stats"])

Days = Annotated[int, Query(ge=1, le=DAYS_MAX, description="Window in whole UTC days ending today (1-365).")]


@router.get("/api/{profile}/stats", response_model=None, responses={**ok(StatsBody), **authenticated()})
def stats(profile: ProfileDep, svc: ServicesDep, response: Response, days: Days = DAYS_DEFAULT) -> dict[str, Any]:
    """The store's shape: counts by status and kind, top tags, created/retired per day, span.

    With the OpenSearch mirror, X-Memory-Source says where the answer came from (as for the summary)."""
    result = svc.stats.stats_from(profile, days, svc.backend)
    if result.source:
        response.headers["X-Memory-Source"] = result.source
    return result.body
