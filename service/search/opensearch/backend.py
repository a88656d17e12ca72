"""OpenSearchBackend: the SearchBackend of the scale-out deployment (MEMORY_SEARCH=opensearch), made of three
parts with one job each: the Searcher (hybrid search and similar() on the cluster), the MirrorUpkeep (the
cluster fit to serve, the outbox delivered, the worker) and the MirrorAggregates (summary and stats, declared
in its Capabilities). This class only composes them and answers from the canonical store when they cannot.

The canonical store stays the truth; this backend keeps the deployment's mirror -- two shared indices for
every profile (service.search.opensearch.templates) -- and searches there. Writes never depend on the cluster:
the store records an outbox row in the write's own transaction, `changed()` (the store's after-commit hook,
wired by service.container) pushes a fact change at once
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
from typing import Any

import numpy as np

from service import clock
from service.config import Settings
from service.domain.ports import Capabilities, Embedder, Hit, SearchBackend, SearchHits, SearchRequest
from service.domain.ports.sources import ChangedFact, MirrorSource
from service.errors import BackendUnavailable, EmbeddingUnavailable
from service.search.mode import DEGRADED
from service.search.opensearch import templates as tpl
from service.search.opensearch.candidates import CandidateCache
from service.search.opensearch.client import IndexMissing, make_client, reachability
from service.search.opensearch.health import Health
from service.search.opensearch.indices import IndexManager
from service.search.opensearch.searcher import Searcher
from service.search.opensearch.summary import MirrorAggregates
from service.search.opensearch.upkeep import MirrorUpkeep

log = logging.getLogger(__name__)

LAG_DEGRADED_SECONDS = 30.0


class OpenSearchBackend:
    name = "opensearch"

    def __init__(self, settings: Settings, canonical: MirrorSource, embedder: Embedder, *, fallback: SearchBackend,
                 start_worker: bool = True) -> None:
        self.settings, self.embedder = settings, embedder
        self.canonical = canonical  # the canonical store, through its port (service.store.canonical)
        self.client = make_client(settings)
        self.health = Health(quiet_seconds=settings.opensearch_sync_interval)
        self.indices = IndexManager(self.client, settings, embedder)
        self.names = self.indices.names
        self.candidates = CandidateCache(canonical.facts_with_vectors, canonical.redactions_after,
                                         max_bytes=settings.opensearch_candidate_cache_mb * 1024 * 1024)
        self.upkeep = MirrorUpkeep(self.client, settings, canonical, embedder, self.indices, self.health,
                                   start_worker=start_worker, also=self.candidates.forget_redacted)
        self.searcher = Searcher(self.client, settings, embedder, self.names.facts, self.candidates)
        self.aggregates = MirrorAggregates(self.client, canonical, self.health, self.names.facts,
                                           self.names.queries)
        self.fallback = fallback  # lexical, from the canonical store (built by service.container)
        self.capabilities = Capabilities(aggregates=self.aggregates, names_with_search=True)

    def search(self, request: SearchRequest) -> SearchHits:
        try:
            self.upkeep.usable(request.profile_id)
            try:
                found = self._search(request)
            except IndexMissing:  # dropped since this process built it (a lost cluster): rebuilt, asked again
                self.upkeep.unprepare()
                found = self._search(request)
            self.health.ok()
            return found
        except (BackendUnavailable, EmbeddingUnavailable) as exc:
            self.upkeep.failed(exc)
            hits = self.fallback.search(SearchRequest(
                profile_id=request.profile_id, profile=request.profile, query=request.query, limit=request.limit,
                kind=request.kind, tags=request.tags, window=request.window, vector=None))
            # The mirror is unavailable (or this profile's is incomplete): answered lexically from the
            # canonical store, counts unknown.
            return SearchHits(None, None, hits.hits, DEGRADED)

    def _search(self, request: SearchRequest) -> SearchHits:
        self.upkeep.prepare()
        return self.searcher.search(request, dimension=self.upkeep.dimension(),
                                    pipeline_error=self.indices.pipeline_error)

    def holding(self, profile_id: int, profile: str, terms: list[str]) -> tuple[int, ...]:
        """One search of the active facts' per-term counts (Searcher.holding); a failure is the caller's to
        handle (it embeds the whole query), after the mirror's health has heard of it."""
        try:
            self.upkeep.usable(profile_id)
            self.upkeep.prepare()
            return self.searcher.holding(profile_id, terms)
        except BackendUnavailable as exc:
            self.upkeep.failed(exc)
            raise

    def closest(self, profile_id: int, profile: str, vectors: np.ndarray) -> np.ndarray:
        """One _msearch of exact knn_score searches (Searcher.closest); a failure is the caller's to handle
        (it reads the profile's last level), after the mirror's health has heard of it."""
        try:
            self.upkeep.usable(profile_id)
            self.upkeep.prepare()
            if int(vectors.shape[1]) != self.upkeep.dimension():  # the index holds other vectors (`memory reindex`)
                return np.zeros(vectors.shape[0], dtype=np.float32)
            return self.searcher.closest(profile_id, vectors)
        except BackendUnavailable as exc:
            self.upkeep.failed(exc)
            raise

    def similar(self, profile_id: int, profile: str, uid: str, limit: int) -> list[Hit]:
        row = self.canonical.fact(profile_id, uid)
        if row is None or row.id is None:
            return []
        try:
            self.upkeep.usable(profile_id)
            self.upkeep.prepare()
            ((_, vector),) = self.canonical.facts(profile_id, ids=[row.id])
            if vector is not None and int(vector.shape[0]) != self.upkeep.dimension():
                vector = None
            return self.searcher.similar(profile_id, uid, limit, vector=vector, title=row.title, text=row.text)
        except (BackendUnavailable, EmbeddingUnavailable) as exc:
            self.upkeep.failed(exc)
            return self.fallback.similar(profile_id, profile, uid, limit)

    def changed(self, profile_id: int, profile: str) -> None:
        """The change is committed: its outbox rows are pushed now (never raises; the worker retries)."""
        self.upkeep.changed(profile_id, profile)

    def written(self, profile_id: int, fact: ChangedFact, model: str) -> None:
        """Nothing here: changed() right after pushes the fact from the outbox, and the lexical fallback's index
        (when built) catches up from the store at its next use."""

    def logged(self, profile_id: int, profile: str) -> None:
        """A search's query-log row is committed: the worker delivers it at its next cycle (within
        MEMORY_OPENSEARCH_SYNC_INTERVAL), off the search's path and batched with the others."""

    def forget_queries(self) -> None:
        """The searcher keeps no query words; the lexical fallback's indexes do."""
        self.fallback.forget_queries()

    def sync_now(self) -> None:
        """One full sync cycle in the caller's thread (tests, `memory check`)."""
        self.upkeep.sync_now()

    def status(self) -> dict[str, Any]:
        problems = [*self.upkeep.unfit, *self.upkeep.denied, *self.upkeep.lacking]
        version = self.upkeep.version
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
        failing = self.upkeep.backoff.report()
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
            "cluster_version": version.number if version else None,
            "notes": [version.note] if version and version.note else [],
            "profiles_failing": failing,
            "aggregates": self.aggregates.report(),
            "candidate_cache": self.candidates.report(),
        }

    def close(self) -> None:
        self.upkeep.stop()
        self.fallback.close()
        self.client.close()
