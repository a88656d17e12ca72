"""The ASGI application: REST review API, MCP endpoint, health checks, one lifespan owning resources."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.openapi.utils import get_openapi
from starlette.routing import Route

from service import __version__
from service.api import oauth
from service.web import errors
from service.api.head import HeadAsGet
from service.api.limits import InFlightLimit, RequestLimits
from service.api.ui import mount_ui
from service.api.routes import curation, facts, grants, health, profiles, queries, stats
from service.config import Settings
from service.container import Services, build_services
from service.domain.ports import Embedder
from service.mcp.endpoint import MCPEndpoint, MissingProfile, build_mcp_server, transport_security

log = logging.getLogger(__name__)


def create_app(settings: Settings | None = None, *, services: Services | None = None,
               embedder: Embedder | None = None, preload_embedder: bool = False) -> FastAPI:
    """Build the app. Pass `services` to share them (tests); otherwise they are built from settings (with
    `embedder` when given, e.g. one `memory serve` already started loading)."""
    if services is None:
        services = build_services(settings or Settings(), embedder=embedder)
    settings = services.settings
    mcp_server = build_mcp_server(services)
    mcp_server.streamable_http_app(
        stateless_http=True, json_response=True, transport_security=transport_security(settings)
    )
    manager = mcp_server.session_manager

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if preload_embedder:
            if services.embedder.enabled:
                services.embedder.start()
            _warm_in_background(services)
        _warn_if_embedder_changed(services)
        services.redactions.start()
        try:
            async with manager.run():
                yield
        finally:
            services.redactions.stop()

    app = FastAPI(
        title="Agent memory service",
        version=__version__,
        description="Curated facts for software agents: five MCP tools at /mcp/{profile}, REST for reviewers.",
        lifespan=lifespan,
        redirect_slashes=False,
    )
    app.state.services = services
    errors.install(app)
    for module in (profiles, queries, stats, facts, curation, grants, health):
        app.include_router(module.router)
    mount_ui(app)
    oauth.mount(app, services)
    endpoint = MCPEndpoint(services, mcp_server)
    root = endpoint if services.oauth is not None else MissingProfile()
    # First in the table: an MCP call is every agent's every call, and the router tries routes in order (behind
    # the REST routers it was matched against each of them first). No other route takes a /mcp path.
    app.router.routes[0:0] = [
        *(Route(path, endpoint=endpoint, methods=["POST"]) for path in ("/mcp/{profile}", "/mcp/{profile}/")),
        # with MEMORY_OAUTH=on: OAuth tokens only, the grant names the profile
        *(Route(path, endpoint=root, methods=["POST"] if services.oauth else None) for path in ("/mcp", "/mcp/"))]
    app.add_middleware(HeadAsGet)  # innermost: every route sees a HEAD as the GET it stands for
    if settings.cors_origin_list:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origin_list,
            allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
            allow_headers=["Authorization", "Content-Type", "Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name",
                           "Mcp-Session-Id", "Last-Event-ID"],
            expose_headers=["Mcp-Session-Id", "X-Memory-Source"],
        )
    app.add_middleware(RequestLimits)
    app.add_middleware(InFlightLimit, limit=settings.max_requests)  # added last: outermost
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]  # FastAPI's documented way to replace the schema
    return app


def _warm_in_background(services: Services) -> None:
    """Let the search backend build its in-process indexes, and the search embed the probe questions of the
    stores' off-topic level (service.domain.ranking.level), while the server already answers."""
    warm = services.backend.capabilities.warm

    def run() -> None:
        try:
            if warm is not None:
                warm()
            services.search.warm_levels()
        except Exception:  # warming is an optimisation; a failure shows up again on the first search
            log.exception("warming the search index failed")

    threading.Thread(target=run, name="search-warmup", daemon=True).start()


def _warn_if_embedder_changed(services: Services) -> None:
    """Vectors made by another embedder are unusable: say so at start-up (and in /readyz)."""
    stale = services.readiness()["checks"]["embedder"].get("stale_vectors")
    if not stale:
        return
    if services.settings.search == "embedded":
        log.warning("facts embedded with another model %s: re-embedding them with %s in the background (searches "
                    "answer meanwhile, by words for those facts; /readyz counts what is left)", stale,
                    services.embedder.model_id)
    else:
        log.warning("facts embedded with another model %s; the OpenSearch mirror keeps serving, with searches "
                    "reporting matched_count null, until you run: memory reindex --reembed", stale)


def _openapi(app: FastAPI) -> dict[str, Any]:
    """OpenAPI without FastAPI's 422 (this API answers 400 for every bad parameter). Security is declared per
    route by the routes' bearer dependency (service.api.deps.BEARER), so /healthz and /readyz need none."""
    if app.openapi_schema:
        return app.openapi_schema
    schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
    for path_item in schema.get("paths", {}).values():
        for operation in path_item.values():
            answers = operation.setdefault("responses", {})
            answers.pop("422", None)
            for status, entry in errors.responses(*errors.EVERY_ROUTE).items():
                answers.setdefault(str(status), entry)
    for name in ("HTTPValidationError", "ValidationError"):
        schema.get("components", {}).get("schemas", {}).pop(name, None)
    app.openapi_schema = schema
    return schema
