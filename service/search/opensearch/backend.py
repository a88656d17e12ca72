"""OpenSearchBackend: the SearchBackend of the scale-out deployment (MEMORY_SEARCH=opensearch).

The canonical store stays the truth; this backend keeps a per-profile mirror in OpenSearch and searches
there. Writes never depend on the cluster: the domain records an outbox row in the write's own transaction,
`changed()` pushes it at once (refresh=true, so the writer's next search sees it), and a background
worker delivers whatever is left. While the cluster is unreachable, searches are answered lexically from
the canonical store (matched_count null, mode "degraded") and /readyz reports the outbox lag.

Indices: created at start-up for every profile, and lazily on first use (a profile created by the CLI gets
its indices within one worker interval, or at its first write or search); an index that had to be created
while the profile already has data, e.g. after a cluster was lost, is backfilled from the canonical store.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from service import clock
from service.config import Settings
from service.domain.models import embedding_text
from service.domain.ports import Embedder, Hit, SearchBackend, SearchHits, SearchRequest, Sourced
from service.domain.models import ProfileRef
from service.errors import BackendUnavailable, EmbeddingUnavailable
from service.search.mode import DEGRADED
from service.search.opensearch import templates as tpl
from service.store.canonical import Canonical
from service.search.opensearch.client import IndexMissing, make_client, reachability, short
from service.search.opensearch.health import Health
from service.search.opensearch.indices import IndexManager
from service.search.opensearch.mirror import Mirror
from service.search.opensearch.searcher import Searcher
from service.search.opensearch.summary import MirrorAggregates
from service.search.opensearch.worker import SyncWorker
from service.store import repository as repo
from service.store.engine import Database

log = logging.getLogger(__name__)

EMBED_BATCH = 64
LAG_DEGRADED_SECONDS = 30.0


class OpenSearchBackend:
    name = "opensearch"

    def __init__(self, settings: Settings, db: Database, embedder: Embedder, *, fallback: SearchBackend,
                 start_worker: bool = True) -> None:
        self.settings, self.db, self.embedder = settings, db, embedder
        self.client = make_client(settings)
        self.health = Health(quiet_seconds=settings.opensearch_sync_interval)
        self.indices = IndexManager(self.client, settings, embedder)
        self.canonical = Canonical(db, embedder.model_id)
        self.mirror = Mirror(self.client, self.canonical, embedder.enabled, self.dimension)
        self.searcher = Searcher(self.client, settings, embedder)
        self.aggregates = MirrorAggregates(self.client, self.canonical, self.health)
        self.fallback = fallback  # lexical, from the canonical store (built by service.container)
        self._dimension: int | None = None
        self._installed = False
        self._ready: set[str] = set()  # profiles whose two aliases are known to exist
        self._locks: defaultdict[str, threading.RLock] = defaultdict(threading.RLock)
        self._guard = threading.Lock()
        self._cycling = threading.Lock()  # one sync cycle at a time (the worker's, `memory check`'s, a test's)
        self.worker = SyncWorker(self._cycle, settings.opensearch_sync_interval)
        if start_worker:
            self.worker.start()

    # --- SearchBackend ----------------------------------------------------------------------------

    def search(self, request: SearchRequest) -> SearchHits:
        try:
            self._usable()
            try:
                found = self._search(request)
            except IndexMissing:  # dropped since this process built it (a rename freed the name, a lost
                self._forget(request.profile)  # cluster): rebuilt from the canonical store, asked again
                found = self._search(request)
            self.health.ok()
            return found
        except (BackendUnavailable, EmbeddingUnavailable) as exc:
            self._failed(request.profile, exc)
            hits = self.fallback.search(SearchRequest(
                profile_id=request.profile_id, profile=request.profile, query=request.query, limit=request.limit,
                kind=request.kind, tags=request.tags, vector=None))
            # The mirror is unavailable: answered lexically from the canonical store, counts unknown.
            return SearchHits(None, None, hits.hits, DEGRADED)

    def _search(self, request: SearchRequest) -> SearchHits:
        self.ensure_profile(request.profile)
        return self.searcher.search(request, dimension=self.dimension(), pipeline_error=self.indices.pipeline_error)

    def similar(self, profile_id: int, profile: str, uid: str, limit: int) -> list[Hit]:
        with self.db.read() as session:
            row = repo.fact_row(session, profile_id, uid)
        if row is None or row.id is None:
            return []
        try:
            self._usable()
            self.ensure_profile(profile)
            ((_, vector),) = self.canonical.facts(profile_id, ids=[row.id])
            if vector is not None and int(vector.shape[0]) != self.dimension():
                vector = None
            return self.searcher.similar(profile, uid, limit, vector=vector, title=row.title, text=row.text)
        except (BackendUnavailable, EmbeddingUnavailable) as exc:
            self._failed(profile, exc)
            return self.fallback.similar(profile_id, profile, uid, limit)

    def changed(self, profile_id: int, profile: str) -> None:
        """Push the profile's pending outbox rows now. Never raises: the change is committed already, and
        whatever cannot be delivered now stays in the outbox for the worker."""
        if not self.health.usable():
            return
        try:
            self.push(profile_id, profile, wait=True)
            self.health.ok()
        except Exception as exc:
            self._failed(profile, exc)
            log.warning("mirror push for %s deferred to the worker: %s", profile, short(exc))

    def profile_created(self, profile_id: int, profile: str) -> None:
        """Create the profile's indices now (also done lazily and by the worker)."""
        self.ensure_profile(profile)

    def status(self) -> dict[str, Any]:
        problems = []
        try:
            pending, oldest = self.canonical.lag()
        except BackendUnavailable as exc:  # the database check of /readyz reports it; keep this one going
            pending, oldest = -1, None
            problems.append(f"outbox unreadable: {exc.message}")
        age = round((clock.utcnow() - oldest).total_seconds(), 3) if oldest is not None else 0.0
        reachable, problem = reachability(self.client)  # why not: refused credentials, TLS, ... (not only down)
        if not reachable or self.health.down:
            problems.append(f"{problem or self.health.report()['last_error'] or 'cluster unreachable'}; "
                            "searches answered lexically from the canonical store")
        if age > LAG_DEGRADED_SECONDS:
            problems.append(f"outbox lagging: {pending} changes pending, oldest {age:.0f} s")
        if self.indices.pipeline_error and self.embedder.enabled:
            problems.append(f"hybrid pipeline unavailable: {self.indices.pipeline_error}")
        report = self.health.report()
        report["reachable"] = reachable and report["reachable"]
        return {
            "backend": self.name,
            "state": "degraded" if problems else "ready",
            "problems": problems,
            **report,
            "outbox": {"pending": pending, "oldest_pending_age_s": age},
            "template_version": tpl.TEMPLATE_VERSION,
            "pipeline": tpl.PIPELINE_ID if self.embedder.enabled else None,
            "profiles_ready": len(self._ready),
            "aggregates": self.aggregates.report(),
        }

    def close(self) -> None:
        self.worker.stop()
        self.fallback.close()
        self.client.close()

    # --- aggregates (service.domain.querylog.AggregateMirror) --------------------------------------

    def query_summary(self, profile: ProfileRef, days: int, canonical: Callable[[], dict[str, Any]]) -> Sourced:
        return self.aggregates.query_summary(profile, days, canonical)

    def store_stats(self, profile: ProfileRef, days: int, canonical: Callable[[], dict[str, Any]]) -> Sourced:
        return self.aggregates.store_stats(profile, days, canonical)

    # --- mirror upkeep ----------------------------------------------------------------------------

    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = self.indices.dimension()
        return self._dimension

    def install(self) -> dict[str, Any]:
        report = self.indices.install()
        self._installed = True
        return report

    def ensure_profile(self, profile: str) -> None:
        """The profile's aliases exist (created, and backfilled from the canonical store, if they did not)."""
        if profile in self._ready:
            return
        with self._locks[profile]:
            if profile in self._ready:
                return
            if not self._installed or not self.indices.installed():
                self.install()  # before any index is created, or it would miss its mappings
            self._settle_renames()  # a renamed profile's new name may hold an older profile's indices
            created = self.indices.ensure(profile)
            if created:
                profile_id = self._profile_id(profile)
                if profile_id is not None:
                    self.mirror.backfill(profile_id, profile, facts_index=tpl.alias(tpl.FACTS, profile),
                                         queries_index=tpl.alias(tpl.QUERIES, profile), aliases=True)
                    self.indices.refresh(tpl.alias(tpl.FACTS, profile))  # searchable before the next search
                log.info("mirror: created %s", ", ".join(created))
            with self._guard:
                self._ready.add(profile)

    def push(self, profile_id: int, profile: str, *, wait: bool) -> None:
        with self._locks[profile]:
            self.ensure_profile(profile)
            try:
                self.mirror.push(profile_id, profile, wait=wait)
            except IndexMissing:  # the cluster lost the index since we looked: rebuild it, then deliver
                self._forget(profile)
                self.ensure_profile(profile)
                self.mirror.push(profile_id, profile, wait=wait)

    def sync_now(self) -> None:
        """One full sync cycle in the caller's thread (tests, `memory check`)."""
        self._cycle()

    def _cycle(self) -> None:
        """Install templates, make sure every profile has its indices (new profiles, a restarted cluster),
        deliver every pending outbox row, and embed facts still lacking a vector."""
        with self._cycling:  # two at once would both embed the same unembedded facts and enqueue them twice
            self._cycle_once()

    def _cycle_once(self) -> None:
        try:
            if not self._installed:
                self.install()
            self._settle_renames()
            existing = self.indices.existing_aliases()
            for _, name in self.canonical.profiles():
                if tpl.alias(tpl.FACTS, name) not in existing or tpl.alias(tpl.QUERIES, name) not in existing:
                    self._forget(name)
                self.ensure_profile(name)
            for profile_id, name in self.canonical.profiles_with_pending():
                self.push(profile_id, name, wait=False)
            if self._embed_missing():  # re-enqueued with their vectors: deliver them now
                for profile_id, name in self.canonical.profiles_with_pending():
                    self.push(profile_id, name, wait=False)
            self.health.ok()
        except Exception as exc:
            self.health.failed(short(exc))
            raise

    def _embed_missing(self) -> bool:
        """Embed facts written while the embedder was loading or failing (a batch per cycle), store the
        vectors and enqueue the facts again. True when some were."""
        if not (self.embedder.enabled and self.embedder.ready()):
            return False
        rows = self.canonical.unembedded(EMBED_BATCH)
        if not rows:
            return False
        try:
            vectors = self.embedder.embed_documents([embedding_text(r.title, r.text) for r in rows])
        except EmbeddingUnavailable as exc:  # not the cluster's fault: try again next cycle
            log.warning("mirror: %d facts still without a vector: %s", len(rows), exc)
            return False
        by_profile: defaultdict[int, dict[int, Any]] = defaultdict(dict)
        for row, vector in zip(rows, vectors, strict=True):
            assert row.id is not None
            by_profile[row.profile_id][row.id] = vector
        for profile_id, found in by_profile.items():
            self.canonical.store_vectors(profile_id, found)
        return True

    # --- helpers ----------------------------------------------------------------------------------

    def _usable(self) -> None:
        if not self.health.usable():
            raise BackendUnavailable("opensearch: unreachable a moment ago")

    def _failed(self, profile: str, exc: BaseException) -> None:
        if isinstance(exc, IndexMissing):
            self._forget(profile)
        elif isinstance(exc, BackendUnavailable) and not isinstance(exc, EmbeddingUnavailable):
            self.health.failed(short(exc))  # the cluster's failure; an embedder's says nothing about it

    def _settle_renames(self) -> None:
        """Follow `memory profile rename`: the old and new names' indices are dropped (and forgotten here);
        the profile is rebuilt under its new name by ensure_profile, here or at its next use."""
        for name in self.mirror.settle_renames(self.indices.drop_profile):
            self._forget(name)

    def _forget(self, profile: str) -> None:
        with self._guard:
            self._ready.discard(profile)

    def _profile_id(self, profile: str) -> int | None:
        return next((pid for pid, name in self.canonical.profiles() if name == profile), None)
