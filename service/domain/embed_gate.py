"""When to ask the embedder: at once when it is ready; while the model is still loading, a search waits for
it (up to MEMORY_EMBEDDER_WAIT seconds) and a write does not wait at all (the load is started in the
background instead); after a failure, again only after a pause, so an embeddings endpoint that is down
costs one timeout per pause, not one per request."""

from __future__ import annotations

import threading
import time

from service.domain.ports import Embedder

RETRY_AFTER_S = 15.0
POLL_S = 0.01
LOADING = ("loading", "not_loaded")


class EmbedGate:
    def __init__(self, embedder: Embedder, retry_after_s: float = RETRY_AFTER_S) -> None:
        self.embedder = embedder
        self.retry_after_s = retry_after_s
        self._retry_at = 0.0
        self._lock = threading.Lock()

    def usable(self, wait_s: float = 0.0) -> bool:
        """May the embedder be asked now? While the model loads, wait up to `wait_s` for it."""
        if not self.embedder.enabled:
            return False
        if self.embedder.ready():
            return True
        if self.embedder.status().get("state") in LOADING:
            self.embedder.start()
            return wait_s > 0 and self._wait_for_load(wait_s)
        with self._lock:
            return time.monotonic() >= self._retry_at

    def failed(self) -> None:
        with self._lock:
            self._retry_at = time.monotonic() + self.retry_after_s

    def _wait_for_load(self, wait_s: float) -> bool:
        """True once the model is ready; False when the load failed or `wait_s` passed first."""
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if self.embedder.ready():
                return True
            if self.embedder.status().get("state") not in LOADING:
                return False  # the load failed: the search runs degraded at once
            time.sleep(POLL_S)
        return self.embedder.ready()
