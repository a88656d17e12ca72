from __future__ import annotations

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from service.web.credentials import authorization
from service.api.deps import ServicesDep
from service.web.errors import error_response, responses
from service.web.hosts import HostPolicy, is_loopback_client
from service.api.schemas import HealthBody, ReadyBody
from service.container import Services
from service.errors import MemoryServiceError

router = APIRouter(tags=["health"])


@router.get("/healthz", response_description="The process is up.")
def healthz() -> HealthBody:
    """The process is up."""
    return HealthBody(status="ok")


@router.get("/readyz", response_model=ReadyBody, response_description="Ready.", responses={
    503: {"description": "Not ready: a dependency is unreachable or the model is not loaded (or degraded, with "
                         "MEMORY_READY_WHEN_DEGRADED=false).",
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ReadyBody"}}}},
    **responses(421),
})
async def readyz(request: Request, svc: ServicesDep) -> JSONResponse:
    """The verdict (and each check's state) for anyone; details (counts, errors, pending changes) only for a
    loopback caller or with a valid token of any profile. The Host header must be one /mcp accepts."""
    if not HostPolicy(svc.settings).allows_scope(request.scope):
        return error_response(request.url.path, 421, "host_not_allowed",
                              HostPolicy.refusal(request.headers.get("host", "")))
    report = await anyio.to_thread.run_sync(svc.readiness)
    if not (is_loopback_client(request.scope) or await anyio.to_thread.run_sync(_token_valid, svc, request)):
        report = {"ready": report["ready"], "degraded": report["degraded"],
                  "checks": {name: {"state": check.get("state")} for name, check in report["checks"].items()}}
    body = ReadyBody.model_validate(report)  # its status is chosen here: answered as is, not through FastAPI's
    return JSONResponse(body.model_dump(mode="json", exclude_unset=True), status_code=200 if body.ready else 503)


def _token_valid(svc: Services, request: Request) -> bool:
    try:
        svc.profiles.authenticate(authorization(request.headers), None)
    except MemoryServiceError:  # no, a wrong or a duplicated token, or no database: the public answer
        return False
    return True
