from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from service.api.deps import ProfileDep, ServicesDep
from service.api.params import Decimal
from service.api.schemas import DuplicateGroupBody, DuplicatesBody
from service.web.errors import authenticated

router = APIRouter(tags=["curation"])

THRESHOLD_MIN = 0.5  # below it nearly everything on one topic pairs up: groups stop meaning "says the same"

Threshold = Annotated[float | None, Query(ge=THRESHOLD_MIN, le=1.0, description=(
    f"Cosine at or above which two facts count as near-duplicates ({THRESHOLD_MIN}-1). Default: "
    "MEMORY_SIMILAR_THRESHOLD, the one memory_write's `similar` uses, so every pair it reported (and still "
    "active) is in one group.")), Decimal]


@router.get("/api/{profile}/duplicates", responses=authenticated())
def duplicates(profile: ProfileDep, svc: ServicesDep, threshold: Threshold = None) -> DuplicatesBody:
    """Groups of active facts whose meaning is nearly the same, closest pair first, each with the CLI line
    that resolves it (`memory duplicates resolve`). Exact over every pair of the profile's active facts with
    a vector; remembered until the profile's facts change."""
    report = svc.curation.duplicates(profile, threshold)
    return DuplicatesBody(
        profile=profile.name, threshold=report.threshold, compared=report.compared,
        without_vector=report.without_vector,
        groups=[DuplicateGroupBody(similarity=round(g.similarity, 4), closest=list(g.closest), keep=g.keep,
                                   command=g.command, facts=g.facts) for g in report.groups])
