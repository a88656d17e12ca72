from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from service.api.deps import ProfileDep, ServicesDep
from service.api.params import WholeNumber
from service.web.errors import authenticated
from service.api.source import set_source
from service.api.schemas import StatsBody
from service.contract import DAYS_DEFAULT, DAYS_MAX

router = APIRouter(tags=["stats"])

Days = Annotated[int, Query(ge=1, le=DAYS_MAX, description=f"Window in whole UTC days ending today (1-{DAYS_MAX})."),
                 WholeNumber]


@router.get("/api/{profile}/stats", response_model_exclude_unset=True, responses=authenticated())
def stats(profile: ProfileDep, svc: ServicesDep, response: Response, days: Days = DAYS_DEFAULT) -> StatsBody:
    """The store's shape: counts by status and kind, top tags, created/retired per day, span.

    With the OpenSearch mirror, X-Memory-Source says where the answer came from (as for the summary)."""
    result = svc.stats.sourced_stats(profile, days)
    set_source(response, result)
    return StatsBody.model_validate(result.body)
