"""MirrorUpkeep: keeps the cluster able to serve and the mirror caught up with the canonical store.

Its jobs: check that the cluster can serve this release (version, plugins, templates), install or check the
templates and pipeline, create the shared indices (backfilled from the canonical store when new), deliver
each profile's pending outbox rows (at once after a change, and in the background worker's cycles), embed
facts still lacking a vector, and keep the state of it all -- the cluster's health (service.search.opensearch
.health) and each profile's backoff -- that the searching side (backend.py) reads before it asks the cluster.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from opensearchpy import OpenSearch

from service.config import Settings
from service.domain.models import embedding_text
from service.domain.ports import Embedder
from service.domain.ports.sources import MirrorSource
from service.errors import BackendUnavailable, EmbeddingUnavailable
from service.search.opensearch.backoff import ProfileBackoff
from service.search.opensearch.client import IndexMissing, short
from service.search.opensearch.connection import PermissionMissing
from service.search.opensearch.cluster import ClusterVersion, plugin_problems, read_version
from service.search.opensearch.health import Health
from service.search.opensearch.indices import IndexManager
from service.search.opensearch.mirror import Delivery, Mirror
from service.search.opensearch.permissions import denials, problems as permission_problems
from service.search.opensearch.worker import SyncWorker

log = logging.getLogger(__name__)

EMBED_BATCH = 64
# An unfit cluster (too old, a plugin missing, templates not installed with MEMORY_OPENSEARCH_INSTALL=check) is
# asked again after this; the worker's cycle (every MEMORY_OPENSEARCH_SYNC_INTERVAL, 2 s) does not back off for it,
# so an administrator's `memory opensearch install` is noticed within 5 s.
UNFIT_RECHECK_SECONDS = 3.0
PERMISSIONS_RECHECK_SECONDS = 60.0  # the role's permissions are tried again after (at once after a 403)
PREPARE_WAIT_SECONDS = 2.0  # a search waits this long for another thread's preparation, then answers degraded


class ClusterUnfit(BackendUnavailable):
    """The cluster cannot serve this release (version, plugins, templates): searches answer degraded."""


class Resting(BackendUnavailable):
    """The cluster failed a moment ago: left alone for a while (Health), with the reason it failed."""


class ProfileMirrorIncomplete(BackendUnavailable):
    """The cluster refused some of this profile's documents: its searches answer degraded (others do not)."""


class MirrorUpkeep:
    def __init__(self, client: OpenSearch, settings: Settings, canonical: MirrorSource, embedder: Embedder,
                 indices: IndexManager, health: Health, *, start_worker: bool = True,
                 also: Callable[[], None] = lambda: None) -> None:
        self.client, self.settings, self.canonical, self.embedder = client, settings, canonical, embedder
        self.also = also  # the backend's own upkeep, first in every cycle, whatever the cluster's state
        self.indices, self.names, self.health = indices, indices.names, health
        self.mirror = Mirror(client, canonical, embedder.enabled, self.dimension, self.names)
        self.backoff = ProfileBackoff(settings.opensearch_sync_interval)
        self.unfit: list[str] = []  # why the cluster cannot serve this release, as last checked
        self.lacking: list[str] = []  # plugins it lacks (searches run by words only, or no vectors)
        self.denied: list[str] = []  # permissions of the role the cluster refuses this user (permissions.py)
        self._permissions_due = 0.0
        self.version: ClusterVersion | None = None  # what the cluster said it is, as last checked
        self._dimension: int | None = None
        self._prepared = False
        self._unfit_until = 0.0
        self._preparing = threading.Lock()
        self._pushing: defaultdict[int, threading.Lock] = defaultdict(threading.Lock)
        self._cycling = threading.Lock()  # one sync cycle at a time (the worker's, `memory check`'s, a test's)
        self.worker = SyncWorker(self._cycle, settings.opensearch_sync_interval)
        if start_worker:
            self.worker.start()

    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = self.indices.dimension()
        return self._dimension

    def usable(self, profile_id: int) -> None:
        """Raise unless the cluster may be asked about this profile now: it failed a moment ago (Resting),
        or this profile's mirror is known incomplete (ProfileMirrorIncomplete)."""
        if not self.health.usable():
            raise Resting(f"opensearch, a moment ago: {self.health.report()['last_error']}")
        if self.backoff.failing(profile_id):
            raise ProfileMirrorIncomplete("opensearch: this profile's documents were refused (see /readyz)")

    def failed(self, exc: BaseException) -> None:
        """Account for a failure of any path: a missing index is rebuilt at the next preparation; a failure of
        the cluster itself rests it (an embedder's failure, or one already accounted for, says nothing)."""
        if isinstance(exc, PermissionMissing):
            self._permissions_due = 0.0  # which permission, on what: tried again at the next cycle
        if isinstance(exc, IndexMissing):
            self._prepared = False
        elif isinstance(exc, BackendUnavailable) and not isinstance(
                exc, EmbeddingUnavailable | ClusterUnfit | ProfileMirrorIncomplete | Resting):
            self.health.failed(short(exc))

    def unprepare(self) -> None:
        """An index went missing since this process built it (a lost cluster): rebuilt at the next prepare."""
        self._prepared = False

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
            if self.unfit and time.monotonic() < self._unfit_until:  # asked a moment ago: still unfit
                raise ClusterUnfit(f"opensearch: {self.unfit[0]}")
            self._unfit_until = time.monotonic() + UNFIT_RECHECK_SECONDS
            version = read_version(self.client)
            if version.note and (self.version is None or self.version.number != version.number):
                log.warning("%s", version.note)  # once per version seen: used all the same
            self.version = version
            before = self.unfit
            self.unfit = list(version.problems)
            self.lacking = [] if self.unfit else plugin_problems(self.client, vectors=self.embedder.enabled)
            if not self.unfit:
                self.check_permissions(force=True)
            if not self.unfit and self.settings.opensearch_install == "check":
                self.unfit = [f"{d}: an administrator runs `memory opensearch install`"
                              for d in self.indices.differences()]
            if self.unfit:
                if self.unfit != before:
                    log.warning("the cluster cannot serve this release (searches answer degraded): %s",
                                "; ".join(self.unfit))
                raise ClusterUnfit(f"opensearch: {self.unfit[0]}")
            if before:
                log.info("the cluster can serve this release now")
            if self.settings.opensearch_install == "auto":
                self.indices.install()
            self.mirror.fill_created(self.indices.ensure())
            self._prepared = True
        finally:
            self._preparing.release()

    def check_permissions(self, *, force: bool = False) -> None:
        """Try the role's permissions (permissions.py) when due: at preparation, every
        PERMISSIONS_RECHECK_SECONDS, and at the next cycle after a 403. A cluster that cannot be asked keeps the
        last findings (the reachability check names why)."""
        if not force and time.monotonic() < self._permissions_due:
            return
        self._permissions_due = time.monotonic() + PERMISSIONS_RECHECK_SECONDS
        try:
            found = permission_problems(denials(self.client, self.names), self.names)
        except BackendUnavailable:
            return
        if found and found != self.denied:
            for line in found:
                log.warning("%s", line)
        self.denied = found

    def install(self) -> dict[str, Any]:
        report = self.indices.install()
        self._prepared = False
        return report

    def changed(self, profile_id: int, profile: str) -> None:
        """Push the profile's pending outbox rows now. Never raises: the change is committed already, and
        whatever cannot be delivered now stays in the outbox for the worker."""
        if not self.health.usable() or self.backoff.waiting(profile_id):
            return
        try:
            self.push(profile_id)
            self.health.ok()
        except Exception as exc:
            self.failed(exc)
            log.warning("mirror push for %s deferred to the worker: %s", profile, short(exc))

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

    def stop(self) -> None:
        self.worker.stop()

    def _cycle(self) -> None:
        """The backend's own upkeep (`also`), then: check and prepare the cluster, deliver every profile's
        pending outbox rows (profiles backing off wait their turn), and embed facts still lacking a vector."""
        with self._cycling:  # two at once would both embed the same unembedded facts and enqueue them twice
            self.also()
            try:
                try:
                    self.prepare()
                except ClusterUnfit:  # said once (prepare logs it), asked again every UNFIT_RECHECK_SECONDS
                    return
                self.check_permissions()
                self.mirror.settle_renames()
                self._deliver_pending()
                if self._embed_missing():  # re-enqueued with their vectors: deliver them now
                    self._deliver_pending()
                self.health.ok()
            except Exception as exc:
                self.failed(exc)
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
            vectors = self.embedder.embed_facts([embedding_text(r.title, r.text, r.tags) for r in rows])
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
