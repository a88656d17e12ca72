"""Wiring: the one place that picks the canonical store, search backend and embedder from settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from service.config import Settings
from service.domain.embed_gate import EmbedGate
from service.domain.facts import FactService
from service.domain.gap_report import GapReport
from service.domain.outbox import Outbox
from service.domain.ports import Embedder, SearchBackend
from service.domain.profiles import ProfileService
from service.domain.querylog import QueryLog
from service.domain.search import SearchService
from service.domain.stats import StoreStats
from service.store import repository as repo
from service.store.gaps import SqlMissReader
from service.store.engine import Database
from service.store.migrate import upgrade


@dataclass
class Services:
    settings: Settings
    db: Database
    embedder: Embedder
    backend: SearchBackend
    profiles: ProfileService
    facts: FactService
    search: SearchService
    query_log: QueryLog
    stats: StoreStats
    gaps: GapReport

    def readiness(self) -> dict[str, Any]:
        checks: dict[str, Any] = {}
        try:
            self.db.ping()
            checks["database"] = {"state": "ready", "dialect": self.db.dialect}
        except Exception as exc:  # readiness reports; it never raises
            checks["database"] = {"state": "error", "error": str(exc).splitlines()[0]}
        checks["search"] = self.backend.status()
        checks["embedder"] = dict(self.embedder.status())
        if self.embedder.enabled and checks["database"]["state"] == "ready":
            with self.db.read() as session:
                stale = {m: n for m, n in repo.vector_models(session).items() if m != self.embedder.model_id}
            if stale:  # the embedder was changed since these vectors were made
                checks["embedder"]["stale_vectors"] = stale
                checks["embedder"]["fix"] = "memory reindex --reembed"
        reasons = []
        if checks["database"]["state"] != "ready":
            reasons.append(f"database: {checks['database'].get('error')}")
        if checks["search"].get("state") not in ("ready", "degraded"):
            reasons.append(f"search backend {checks['search'].get('state')}")
        reasons.extend(_embedder_not_ready(checks["embedder"]))
        report: dict[str, Any] = {"ready": not reasons, "checks": checks}
        if reasons:
            report["reason"] = "; ".join(reasons)
        return report

    def close(self) -> None:
        self.search.close()
        self.backend.close()
        self.db.dispose()


def _embedder_not_ready(status: dict[str, Any]) -> list[str]:
    """Why the embedder keeps the service from being ready: still loading, or failed (with its reason).
    Searches still answer meanwhile (they wait for a loading model, then run degraded)."""
    state = status.get("state")
    if state in ("loading", "not_loaded"):
        return [f"embedder {state}: the model is not loaded yet"]
    if state == "error":
        return [f"embedder error: {status.get('error')}"]
    return []


def build_database(settings: Settings) -> Database:
    """Open the canonical store and bring its schema up to date (CLI commands need only this)."""
    db = Database(settings.resolved_database_url)
    upgrade(db.engine)
    return db


def build_embedder(settings: Settings) -> Embedder:
    from service.embedding.factory import build_embedder as factory

    return factory(settings)


def build_backend(
    settings: Settings, db: Database, embedder: Embedder, gate: EmbedGate | None = None
) -> SearchBackend:
    if settings.search == "opensearch":
        from service.search.opensearch.backend import OpenSearchBackend

        return OpenSearchBackend(settings, db, embedder)
    from service.search.embedded.backend import EmbeddedSearch

    return EmbeddedSearch(db, embedder, settings, gate)


def build_services(settings: Settings, *, embedder: Embedder | None = None) -> Services:
    db = build_database(settings)
    embedder = embedder or build_embedder(settings)
    gate = EmbedGate(embedder)
    backend = build_backend(settings, db, embedder, gate)
    outbox = Outbox(enabled=settings.search == "opensearch")
    query_log = QueryLog(db, outbox)
    return Services(
        settings=settings,
        db=db,
        embedder=embedder,
        backend=backend,
        profiles=ProfileService(db),
        facts=FactService(db, embedder, backend, outbox, gate),
        search=SearchService(db, embedder, backend, query_log, gate, embedder_wait_s=settings.embedder_wait),
        query_log=query_log,
        stats=StoreStats(db),
        gaps=GapReport(SqlMissReader(db), embedder, gate),
    )
