"""OpenSearchBackend: the SearchBackend of the scale-out deployment (MEMORY_SEARCH=opensearch).

The canonical store stays the truth; this backend keeps the deployment's mirror -- two shared indices for
every profile (service.search.opensearch.templates) -- and searches there. Writes never depend on the cluster:
the domain records an outbox row in the write's own transaction, `changed()` pushes a fact change at once
(refresh=true, so the writer's next search sees it), a search's query-log row is left to the background
worker (`logged()` only wakes it: no round trip on the search's path), and the worker delivers whatever is
left. While the cluster is unreachable, searches are answered lexically from the canonical store
(matched_count null, mode "degraded") and /readyz reports why and the outbox lag.

One profile's trouble is never another's: a document the cluster refuses fails only its own outbox rows
(attempts, last_error); that profile backs off on its own (and its searches say `degraded`, its mirror being
known incomplete) while the worker goes on with the others. Creating a profile changes nothing in the cluster.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from service import clock
from service.config import Settings
from service.domain.models import ProfileRef, embedding_text
from service.domain.ports import Embedder, Hit, SearchBackend, SearchHits, SearchRequest, Sourced
from service.domain.ports.sources import MirrorSource
from service.errors import BackendUnavailable, EmbeddingUnavailable
from service.search.mode import DEGRADED
from service.search.opensearch import templates as tpl
from service.search.opensearch.client import IndexMissing, make_client, reachability, short
from service.search.opensearch.cluster import plugin_problems, version_problems
from service.search.opensearch.health import Health
from service.search.opensearch.indices import IndexManager
from service.search.opensearch.mirror import Delivery, Mirror
from service.search.opensearch.searcher import Searcher
from service.search.opensearch.summary import MirrorAggregates
from service.search.opensearch.worker import SyncWorker

log = logging.getLogger(__name__)

EMBED_BATCH = 64
LAG_DEGRADED_SECONDS = 30.0
PROFILE_BACKOFF_MAX = 60.0
UNFIT_RECHECK_SECONDS = 30.0
PREPARE_WAIT_SECONDS = 2.0  # a search waits this long for another thread's preparation, then answers degraded  # an unfit cluster (too old, a plugin or template missing) is asked again after


class ClusterUnfit(BackendUnavailable):
    """The cluster cannot serve this release (version, plugins, templates): searches answer degraded."""


class Resting(BackendUnavailable):
    """The cluster failed a moment ago: left alone for a while (Health), with the reason it failed."""


class ProfileMirrorIncomplete(BackendUnavailable):
    """The cluster refused some of this profile's documents: its searches answer degraded (others do not)."""


class ProfileBackoff:
    """Profiles whose documents the cluster refused: each waits on its own, doubling up to a minute."""

    def __init__(self, base: float) -> None:
        self.base = base
        self._lock = threading.Lock()
        self._failing: dict[int, tuple[int, float, str]] = {}  # profile id -> (failures, retry at, last error)

    def failed(self, profile_id: int, reason: str) -> None:
        with self._lock:
            failures = self._failing.get(profile_id, (0, 0.0, ""))[0] + 1
            wait = min(PROFILE_BACKOFF_MAX, self.base * 2 ** min(failures - 1, 10))
            self._failing[profile_id] = (failures, time.monotonic() + wait, reason)

    def ok(self, profile_id: int) -> None:
        with self._lock:
            self._failing.pop(profile_id, None)

    def waiting(self, profile_id: int) -> bool:
        with self._lock:
            entry = self._failing.get(profile_id)
            return entry is not None and time.monotonic() < entry[1]

    def failing(self, profile_id: int) -> bool:
        with self._lock:
            return profile_id in self._failing

    def report(self) -> dict[str, str]:
        with self._lock:
            return {str(pid): reason for pid, (_, _, reason) in self._failing.items()}


class OpenSearchBackend:
    name = "opensearch"

    def __init__(self, settings: Settings, canonical: MirrorSource, embedder: Embedder, *, fallback: SearchBackend,
                 start_worker: bool = True) -> None:
        self.settings, self.embedder = settings, embedder
        self.client = make_client(settings)
        self.health = Health(quiet_seconds=settings.opensearch_sync_interval)
        self.indices = IndexManager(self.client, settings, embedder)
        self.names = self.indices.names
        self.canonical = canonical  # the canonical store, through its port (service.store.canonical)
        self.mirror = Mirror(self.client, self.canonical, embedder.enabled, self.dimension, self.names)
        self.searcher = Searcher(self.client, settings, embedder, self.names.facts, self.canonical.vectors_of)
        self.aggregates = MirrorAggregates(self.client, self.canonical, self.health, self.names.facts,
                                           self.names.queries)
        self.fallback = fallback  # lexical, from the canonical store (built by service.container)
        self.backoff = ProfileBackoff(settings.opensearch_sync_interval)
        self._dimension: int | None = None
        self._prepared = False
        self._unfit: list[str] = []  # why the cluster cannot serve this release, as last checked
        self._lacking: list[str] = []  # plugins it lacks (searches run by words only, or no vectors)
        self._unfit_until = 0.0
        self._preparing = threading.Lock()
        self._pushing: defaultdict[int, threading.Lock] = defaultdict(threading.Lock)
        self._cycling = threading.Lock()  # one sync cycle at a time (the worker's, `memory check`'s, a test's)
        self.worker = SyncWorker(self._cycle, settings.opensearch_sync_interval)
        if start_worker:
            self.worker.start()

    # --- SearchBackend ----------------------------------------------------------------------------

    def search(self, request: SearchRequest) -> SearchHits:
        try:
            self._usable(request.profile_id)
            try:
                found = self._search(request)
            except IndexMissing:  # dropped since this process built it (a lost cluster): rebuilt, asked again
                self._prepared = False
                found = self._search(request)
            self.health.ok()
            return found
        except (BackendUnavailable, EmbeddingUnavailable) as exc:
            self._failed(exc)
            hits = self.fallback.search(SearchRequest(
                profile_id=request.profile_id, profile=request.profile, query=request.query, limit=request.limit,
                kind=request.kind, tags=request.tags, vector=None))
            # The mirror is unavailable (or this profile's is incomplete): answered lexically from the
            # canonical store, counts unknown.
            return SearchHits(None, None, hits.hits, DEGRADED)

    def _search(self, request: SearchRequest) -> SearchHits:
        self.prepare()
        return self.searcher.search(request, dimension=self.dimension(), pipeline_error=self.indices.pipeline_error)

    def similar(self, profile_id: int, profile: str, uid: str, limit: int) -> list[Hit]:
        row = self.canonical.fact(profile_id, uid)
        if row is None or row.id is None:
            return []
        try:
            self._usable(profile_id)
            self.prepare()
            ((_, vector),) = self.canonical.facts(profile_id, ids=[row.id])
            if vector is not None and int(vector.shape[0]) != self.dimension():
                vector = None
            return self.searcher.similar(profile_id, uid, limit, vector=vector, title=row.title, text=row.text)
        except (BackendUnavailable, EmbeddingUnavailable) as exc:
            self._failed(exc)
            return self.fallback.similar(profile_id, profile, uid, limit)

    def changed(self, profile_id: int, profile: str) -> None:
        """Push the profile's pending outbox rows now. Never raises: the change is committed already, and
        whatever cannot be delivered now stays in the outbox for the worker."""
        if not self.health.usable() or self.backoff.waiting(profile_id):
            return
        try:
            self.push(profile_id)
            self.health.ok()
        except Exception as exc:
            self._failed(exc)
            log.warning("mirror push for %s deferred to the worker: %s", profile, short(exc))

    def logged(self, profile_id: int, profile: str) -> None:
        """A search's query-log row is committed: the worker delivers it at its next cycle (within
        MEMORY_OPENSEARCH_SYNC_INTERVAL), off the search's path and batched with the others."""

    def status(self) -> dict[str, Any]:
        problems = [*self._unfit, *self._lacking]
        try:
            pending, oldest = self.canonical.lag()
        except BackendUnavailable as exc:  # the database check of /readyz reports it; keep this one going
            pending, oldest = -1, None
            problems.append(f"outbox unreadable: {exc.message}")
        age = round((clock.utcnow() - oldest).total_seconds(), 3) if oldest is not None else 0.0
        reachable, problem = reachability(self.client)  # why not: refused credentials, TLS, ... (not only down)
        report = self.health.report()
        if not reachable or self.health.down:  # down: reachable, yet the mirror could not be used (403, ...)
            problems.append(f"{problem or report['last_error'] or 'cluster unreachable'}; "
                            "searches answered lexically from the canonical store")
        if age > LAG_DEGRADED_SECONDS:
            problems.append(f"outbox lagging: {pending} changes pending, oldest {age:.0f} s")
        if self.indices.pipeline_error and self.embedder.enabled:
            problems.append(f"hybrid pipeline unavailable: {self.indices.pipeline_error}")
        failing = self.backoff.report()
        if failing:
            problems.append(f"{len(failing)} profile(s) with documents the cluster refused (their searches answer "
                            f"degraded): {next(iter(failing.values()))}")
        report["reachable"] = reachable and report["reachable"]
        return {
            "backend": self.name,
            "state": "degraded" if problems else "ready",
            "problems": problems,
            **report,
            "outbox": {"pending": pending, "oldest_pending_age_s": age},
            "indices": {"facts": self.names.facts, "queries": self.names.queries, "pipeline": self.names.pipeline
                        if self.embedder.enabled else None},
            "template_version": tpl.TEMPLATE_VERSION,
            "profiles_failing": failing,
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

    def prepare(self) -> None:
        """The cluster can serve this release, the templates and pipeline are in place (put them, or checked
        with MEMORY_OPENSEARCH_INSTALL=check), and the shared indices exist (created and backfilled from the
        canonical store if they did not). Once per process, again after an index went missing."""
        if self._prepared:
            return
        if not self._preparing.acquire(timeout=PREPARE_WAIT_SECONDS):  # another thread builds the mirror (a
            raise Resting("opensearch: the mirror is being built from the canonical store")  # backfill): degraded
        try:
            if self._prepared:
                return
            if self._unfit and time.monotonic() < self._unfit_until:  # asked a moment ago: still unfit
                raise ClusterUnfit(f"opensearch: {self._unfit[0]}")
            self._unfit_until = time.monotonic() + UNFIT_RECHECK_SECONDS
            self._unfit = version_problems(self.client)
            self._lacking = [] if self._unfit else plugin_problems(self.client, vectors=self.embedder.enabled)
            if not self._unfit and self.settings.opensearch_install == "check":
                self._unfit = [f"{d}: an administrator runs `memory opensearch install`"
                               for d in self.indices.differences()]
            if self._unfit:
                raise ClusterUnfit(f"opensearch: {self._unfit[0]}")
            if self.settings.opensearch_install == "auto":
                self.indices.install()
            created = self.indices.ensure()
            if created:
                for profile_id, _ in self.canonical.profiles():
                    self.mirror.backfill(profile_id, facts_index=self.names.facts, queries_index=self.names.queries,
                                         aliases=True)
                self.indices.refresh(self.names.facts)  # searchable before the next search
                log.info("mirror: created %s", ", ".join(created))
            self._prepared = True
        finally:
            self._preparing.release()

    def install(self) -> dict[str, Any]:
        report = self.indices.install()
        self._prepared = False
        return report

    def push(self, profile_id: int) -> Delivery:
        with self._pushing[profile_id]:
            self.prepare()
            try:
                done = self.mirror.push(profile_id)
            except IndexMissing:  # the cluster lost the index since we looked: rebuild it, then deliver
                self._prepared = False
                self.prepare()
                done = self.mirror.push(profile_id)
        if done.failed:
            self.backoff.failed(profile_id, next(iter(done.errors.values()), "documents refused"))
        else:
            self.backoff.ok(profile_id)
        return done

    def sync_now(self) -> None:
        """One full sync cycle in the caller's thread (tests, `memory check`)."""
        self._cycle()

    def _cycle(self) -> None:
        """Check and prepare the cluster, deliver every profile's pending outbox rows (profiles backing off
        wait their turn), and embed facts still lacking a vector."""
        with self._cycling:  # two at once would both embed the same unembedded facts and enqueue them twice
            self._cycle_once()

    def _cycle_once(self) -> None:
        try:
            self.prepare()
            self.mirror.settle_renames()
            self._deliver_pending()
            if self._embed_missing():  # re-enqueued with their vectors: deliver them now
                self._deliver_pending()
            self.health.ok()
        except Exception as exc:
            self._failed(exc)
            raise

    def _deliver_pending(self) -> None:
        for profile_id, _ in self.canonical.profiles_with_pending():
            if not self.backoff.waiting(profile_id):
                self.push(profile_id)

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

    def _usable(self, profile_id: int) -> None:
        if not self.health.usable():
            raise Resting(f"opensearch, a moment ago: {self.health.report()['last_error']}")
        if self.backoff.failing(profile_id):
            raise ProfileMirrorIncomplete("opensearch: this profile's documents were refused (see /readyz)")

    def _failed(self, exc: BaseException) -> None:
        if isinstance(exc, IndexMissing):
            self._prepared = False
        elif isinstance(exc, BackendUnavailable) and not isinstance(
                exc, EmbeddingUnavailable | ClusterUnfit | ProfileMirrorIncomplete | Resting):
            self.health.failed(short(exc))  # the cluster's failure; an embedder's says nothing about it
