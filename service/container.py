"""Wiring: the one place that picks the canonical store, search backend and embedder from settings.

The application (service.domain) sees the canonical store only through its port (CanonicalStore, built here
by build_store over the Database); the search adapters and the readiness check use the Database itself.

Faces (REST, MCP, CLI) and bench/ build what they need here; no other module constructs a backend. The
heavy imports happen inside the builders, so that `memory serve` can start loading the model (which needs
only build_embedder) before the web stack and the database layer are imported.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from service.config import Settings, unknown_variables
from service.errors import MemoryServiceError

if TYPE_CHECKING:
    from service.domain.as_of import AsOfService
    from service.domain.curation import CurationService
    from service.domain.embed_gate import EmbedGate
    from service.domain.facts import FactService
    from service.domain.gap_report import GapReport
    from service.domain.oauth.clients import ClientRegistry
    from service.domain.oauth.consent import ConsentService
    from service.domain.oauth.grants import GrantService
    from service.domain.oauth.policy import Resources
    from service.domain.oauth.tokens import TokenService
    from service.domain.ports import Embedder, SearchBackend
    from service.domain.ports.canonical import CanonicalStore, Committed
    from service.domain.profiles import ProfileService
    from service.domain.querylog import QueryLog
    from service.domain.ranking.weights import Weights
    from service.domain.redaction_watch import RedactionWatch
    from service.domain.search import SearchService
    from service.domain.stats import StoreStats
    from service.search.embedded.backend import EmbeddedSearch
    from service.search.opensearch.maintenance import MirrorMaintenance
    from service.store.engine import Database

log = logging.getLogger(__name__)


@dataclass
class OAuthServer:
    """The authorization server of MEMORY_OAUTH=on (service.domain.oauth)."""

    resources: Resources
    clients: ClientRegistry
    consent: ConsentService
    tokens: TokenService


@dataclass
class Services:
    settings: Settings
    db: Database
    store: CanonicalStore
    embedder: Embedder
    backend: SearchBackend
    profiles: ProfileService
    facts: FactService
    search: SearchService
    query_log: QueryLog
    stats: StoreStats
    gaps: GapReport
    as_of: AsOfService
    curation: CurationService
    grants: GrantService  # OAuth grants: listed and revoked whether or not MEMORY_OAUTH is on now
    oauth: OAuthServer | None  # MEMORY_OAUTH=on
    redactions: RedactionWatch  # a running server's caches of recent texts, emptied after a redaction

    def readiness(self) -> dict[str, Any]:
        checks: dict[str, Any] = {}
        try:
            self.db.ping()
            checks["database"] = {"state": "ready", "dialect": self.db.dialect}
        except MemoryServiceError as exc:  # readiness reports; it never raises (the detail is in the log)
            checks["database"] = {"state": "error", "error": exc.message}
        except Exception:
            log.exception("database check failed")
            checks["database"] = {"state": "error", "error": "database unavailable"}
        checks["search"] = self.backend.status()
        checks["embedder"] = dict(self.embedder.status())
        if self.embedder.enabled and checks["database"]["state"] == "ready":
            from service.store import vectors

            with self.db.read() as session:
                stale = {m: n for m, n in vectors.models(session).items() if m != self.embedder.model_id}
            if stale:  # the embedder was changed since these vectors were made
                checks["embedder"]["stale_vectors"] = stale
                checks["embedder"]["fix"] = "re-embedding in the background (or now: memory reindex --reembed)" \
                    if self.settings.search == "embedded" else "memory reindex --reembed"
        unknown = unknown_variables()
        if unknown:  # `memory serve` started with MEMORY_UNKNOWN_SETTINGS=warn: named, not fatal
            checks["settings"] = {"state": "warning", "unknown_variables": unknown}
        reasons = []
        if checks["database"]["state"] != "ready":
            reasons.append(f"database: {checks['database'].get('error')}")
        if checks["search"].get("state") not in ("ready", "degraded"):
            reasons.append(f"search backend {checks['search'].get('state')}")
        reasons.extend(_embedder_not_ready(checks["embedder"]))
        degraded = [f"search: {problem}" for problem in checks["search"].get("problems", [])] \
            if checks["search"].get("state") == "degraded" else []
        if degraded and not self.settings.ready_when_degraded:
            reasons.append("degraded (MEMORY_READY_WHEN_DEGRADED=false): " + "; ".join(degraded))
        report: dict[str, Any] = {"ready": not reasons, "degraded": bool(degraded), "checks": checks}
        if degraded:
            report["degraded_reasons"] = degraded
        if reasons:
            report["reason"] = "; ".join(reasons)
        return report

    def close(self) -> None:
        self.search.close()
        self.backend.close()
        self.db.dispose()

    def __enter__(self) -> Services:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
    from service.store.engine import Database
    from service.store.migrate import upgrade
    from service.store.opening import opening

    chosen_by = ("MEMORY_DATABASE_URL", None) if settings.database_url else ("MEMORY_DATA_DIR", str(settings.data_dir))
    with opening(settings.resolved_database_url, named=chosen_by[0], shown=chosen_by[1]):  # one line: setting, fix
        db = Database(settings.resolved_database_url, synchronous=settings.sqlite_synchronous)
        upgrade(db.engine)
    return db


def build_embedder(settings: Settings) -> Embedder:
    """The embedder MEMORY_EMBEDDER names ("minilm" | "openai" | "none"). Cheap: no model is loaded here;
    call `start()` to load it in the background."""
    if settings.embedder == "minilm":
        from service.embedding.minilm import MiniLMEmbedder

        return MiniLMEmbedder(settings)
    if settings.embedder == "openai":
        from service.embedding.openai import OpenAIEmbedder

        return OpenAIEmbedder(settings)
    if settings.embedder == "none":
        from service.embedding.disabled import DisabledEmbedder

        return DisabledEmbedder()
    raise ValueError(f"unknown embedder {settings.embedder!r} (expected minilm, openai or none)")


def build_store(settings: Settings, db: Database | None = None) -> CanonicalStore:
    """The canonical store as the application sees it, over `db` (opened with build_database when not given);
    its transactional outbox is enabled only when a mirror consumes it (MEMORY_SEARCH=opensearch)."""
    from service.store.changes import Outbox
    from service.store.sql import SqlStore

    return SqlStore(db or build_database(settings), Outbox(enabled=settings.search == "opensearch"))


def build_backend(
    settings: Settings, db: Database, embedder: Embedder, gate: EmbedGate | None = None
) -> SearchBackend:
    if settings.search == "opensearch":
        from service.embedding.disabled import DisabledEmbedder
        from service.search.opensearch.backend import OpenSearchBackend
        from service.store.canonical import Canonical

        # While the cluster is unreachable, searches are answered lexically from the canonical store.
        fallback = embedded_search(db, DisabledEmbedder(), settings)
        return OpenSearchBackend(settings, Canonical(db, embedder.model_id), embedder, fallback=fallback)
    return embedded_search(db, embedder, settings, gate)


def embedded_search(db: Database, embedder: Embedder, settings: Settings,
                    gate: EmbedGate | None = None) -> EmbeddedSearch:
    """The in-process backend over the canonical store's IndexSource port."""
    from service.search.embedded.backend import EmbeddedSearch
    from service.store.index_source import SqlIndexSource

    return EmbeddedSearch(SqlIndexSource(db), embedder, settings, gate)


def open_mirror_maintenance(settings: Settings, db: Database, embedder: Embedder) -> MirrorMaintenance:
    """The OpenSearch mirror's maintenance over the canonical store's MirrorSource port (close it after use)."""
    from service.search.opensearch.maintenance import MirrorMaintenance
    from service.store.canonical import Canonical

    return MirrorMaintenance(settings, Canonical(db, embedder.model_id), embedder)


@contextmanager
def mirror_maintenance(settings: Settings, db: Database, embedder: Embedder) -> Iterator[MirrorMaintenance | None]:
    """The OpenSearch mirror's maintenance (reindex, check, sync after an import); None in embedded mode."""
    if settings.search != "opensearch":
        yield None
        return
    mirror = open_mirror_maintenance(settings, db, embedder)
    try:
        yield mirror
    finally:
        mirror.close()


def opensearch_role(settings: Settings, *, legacy: bool) -> dict[str, Any]:
    """The least-privilege role of the service's OpenSearch user for settings' prefix and install mode (no
    cluster needed)."""
    from service.search.opensearch.role import role
    from service.search.opensearch.templates import Names

    return role(Names(settings.opensearch_prefix), install=settings.opensearch_install, legacy=legacy)


def build_profiles(settings: Settings, store: CanonicalStore) -> tuple[ProfileService, GrantService,
                                                                      OAuthServer | None]:
    """Profiles and their tokens, with the OAuth server when MEMORY_OAUTH=on: its access tokens open the MCP
    endpoint, and revoking a static token revokes the grants approved with it (on or off)."""
    from service.domain.oauth.clients import ClientRegistry
    from service.domain.oauth.consent import ConsentService
    from service.domain.oauth.grants import GrantService
    from service.domain.oauth.policy import Resources
    from service.domain.oauth.tokens import TokenService
    from service.domain.profiles import ProfileService

    grants = GrantService(store)
    if not settings.oauth:
        return ProfileService(store, on_token_revoked=grants.revoke_approved_with), grants, None
    resources = Resources(settings.issuer)
    tokens = TokenService(store, resources)
    profiles = ProfileService(store, access=tokens.access, on_token_revoked=grants.revoke_approved_with)
    server = OAuthServer(resources, ClientRegistry(store), ConsentService(store, profiles, resources), tokens)
    return profiles, grants, server


def build_curation(settings: Settings, store: CanonicalStore) -> CurationService:
    """The curation service of a process that does not serve (the CLI): the running server's search index
    follows the canonical store by itself (the outbox, the embedded index's change sequence)."""
    from service.domain.curation import CurationService

    return CurationService(store, model_id=build_embedder(settings).model_id,
                           threshold=settings.similar_threshold)


def index_follows(backend: SearchBackend) -> Callable[[Committed], None]:
    """The store's after-commit hook for a serving process: memory_write's fact handed to the backend's index at
    once (only a shortcut: a failure is logged, and the next sync reads the fact from the store), then the
    backend told that the profile changed (the mirror delivers its outbox)."""
    def committed(change: Committed) -> None:
        if change.written is not None and change.model is not None:
            try:
                backend.written(change.profile_id, change.written, change.model)
            except Exception:
                log.exception("could not hand the written fact to the search index")
        backend.changed(change.profile_id, change.profile)

    return committed


def build_services(settings: Settings, *, embedder: Embedder | None = None, ranking: Weights | None = None) -> Services:
    """`ranking`: the second ranking stage's weights (default: the shipped ones, read now -- a file that does not
    fit the code stops the start, naming it)."""
    from service.domain import wording
    from service.domain.as_of import AsOfService
    from service.domain.curation import CurationService
    from service.domain.embed_gate import EmbedGate
    from service.domain.facts import FactService
    from service.domain.gap_report import GapReport
    from service.domain.querylog import QueryLog
    from service.domain.ranking.weights import shipped
    from service.domain.redaction_watch import RedactionWatch
    from service.domain.search import SearchService
    from service.domain.stats import StoreStats
    from service.store.gaps import SqlMissReader

    db = build_database(settings)
    embedder = embedder or build_embedder(settings)
    gate = EmbedGate(embedder)
    backend = build_backend(settings, db, embedder, gate)
    store = build_store(settings, db)
    store.after_commit(index_follows(backend))  # every committed change of facts reaches the search backend
    capabilities = backend.capabilities  # read once, here: each part goes to the service that uses it
    query_log = QueryLog(store, capabilities.aggregates)
    profiles, grants, oauth = build_profiles(settings, store)
    return Services(
        settings=settings,
        db=db,
        store=store,
        embedder=embedder,
        backend=backend,
        profiles=profiles,
        facts=FactService(store, embedder, backend, gate),
        search=SearchService(store, embedder, backend, query_log, gate, embedder_wait_s=settings.embedder_wait,
                             weights=ranking or shipped(), names_with_search=capabilities.names_with_search),
        query_log=query_log,
        stats=StoreStats(store, capabilities.aggregates),
        gaps=GapReport(SqlMissReader(db), embedder, gate, mirrored=capabilities.mirrored),
        as_of=AsOfService(store),
        curation=CurationService(store, model_id=embedder.model_id, threshold=settings.similar_threshold),
        grants=grants,
        oauth=oauth,
        redactions=RedactionWatch(store, [embedder.forget_queries, backend.forget_queries, wording.forget]),
    )
