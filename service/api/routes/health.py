from __future__ import annotations

from typing import Any

import anyio
from fastapi import APIRouter
from fastapi.responses import JSONResponse

from service.api.deps import ServicesDep

router = APIRouter(tags=["health"])


@router.get("/healthz")
def healthz() -> dict[str, Any]:
    """The process is up."""
    return {"status": "ok"}


@router.get("/readyz", responses={503: {"description": "Not ready: a dependency is unreachable."}})
async def readyz(svc: ServicesDep) -> JSONResponse:
    """Database and search backend reachable; embedder state (loading, ready, disabled)."""
    report = await anyio.to_thread.run_sync(svc.readiness)
    return JSONResponse(report, status_code=200 if report["ready"] else 503)
