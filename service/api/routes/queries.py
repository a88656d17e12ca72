from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response

from service import contract
from service.api.deps import ProfileDep, ServicesDep
from service.api.params import WholeNumber
from service.web.errors import authenticated
from service.api.source import set_source
from service.api.schemas import GapsBody, GapSearchesBody, QueriesBody, QueryBody, SummaryBody
from service.contract import DAYS_DEFAULT, DAYS_MAX, LISTING_DEFAULT, LISTING_MAX

router = APIRouter(tags=["query log"])

Limit = Annotated[int, Query(ge=1, le=LISTING_MAX, description=f"Rows to return, newest first (1-{LISTING_MAX})."),
                  WholeNumber]
Days = Annotated[int, Query(ge=1, le=DAYS_MAX, description=f"Window in whole UTC days ending today (1-{DAYS_MAX})."),
                 WholeNumber]


@router.get("/api/{profile}/queries", response_model_exclude_unset=True, responses=authenticated())
def list_queries(profile: ProfileDep, svc: ServicesDep, limit: Limit = LISTING_DEFAULT) -> QueriesBody:
    """The query log, newest first, capped at the 500 newest rows (contract.LISTING_MAX)."""
    return QueriesBody(profile=profile.name, queries=svc.query_log.listing(profile, limit))


@router.get("/api/{profile}/queries/summary", response_model_exclude_unset=True, responses=authenticated())
def summary(profile: ProfileDep, svc: ServicesDep, response: Response, days: Days = DAYS_DEFAULT) -> SummaryBody:
    """Aggregates of the query log over a window of whole days (docs/reviewers.md "The summary" has every field).

    With the OpenSearch mirror, the header X-Memory-Source says where the answer came from: `opensearch`, or
    `postgres; reason=mirror-lagging` when the mirror's totals disagreed with the canonical store."""
    result = svc.query_log.sourced_summary(profile, days)
    set_source(response, result)
    return SummaryBody.model_validate(result.body)


@router.get("/api/{profile}/queries/gaps", response_model_exclude_unset=True, responses=authenticated())
def gaps(profile: ProfileDep, svc: ServicesDep, response: Response, days: Days = DAYS_DEFAULT) -> GapsBody:
    """Knowledge gaps: the window's zero-match searches grouped into topics (near-identical or paraphrased
    queries form one group), apart from those where only retired facts matched (docs/reviewers.md "Knowledge gaps").

    Always computed from the canonical store, in either search mode; with the OpenSearch mirror, the header
    X-Memory-Source says so (`postgres`)."""
    result = svc.gaps.sourced_report(profile, days)
    set_source(response, result)
    return GapsBody.model_validate(result.body)


@router.get("/api/{profile}/queries/gaps/{group}", response_model_exclude_unset=True,
            responses=authenticated(404))
def gap_searches(
    profile: ProfileDep, svc: ServicesDep,
    group: Annotated[str, Path(pattern=r"^[zr][0-9a-f]{15}$", description="A group id from the gap report.")],
    days: Days = DAYS_DEFAULT, limit: Limit = LISTING_DEFAULT,
) -> GapSearchesBody:
    """One group of the gap report (over the same window) and its searches, newest first."""
    return GapSearchesBody.model_validate(svc.gaps.searches(profile, days, group, limit))


@router.get("/api/{profile}/queries/{query_id}", response_model_exclude_unset=True,
            responses=authenticated(404))
def one_query(
    profile: ProfileDep, svc: ServicesDep,
    query_id: Annotated[int, Path(ge=1, le=contract.MAX_ROW_ID, description="Query-log row id."), WholeNumber],
) -> QueryBody:
    """One query-log row with what it handed back: uids with lexical, vector and fused scores."""
    return QueryBody(profile=profile.name, query=svc.query_log.get(profile, query_id))
