"""When to ask the embedder: at once when it is ready; never while the model is still loading (the load is
started in the background instead); after a failure, again only after a pause, so an embeddings endpoint
that is down costs one timeout per pause, not one per request."""

from __future__ import annotations

import threading
import time

from service.domain.ports import Embedder

RETRY_AFTER_S = 15.0


class EmbedGate:
    def __init__(self, embedder: Embedder, retry_after_s: float = RETRY_AFTER_S) -> None:
        self.embedder = embedder
        self.retry_after_s = retry_after_s
        self._retry_at = 0.0
        self._lock = threading.Lock()

    def usable(self) -> bool:
        if not self.embedder.enabled:
            return False
        if self.embedder.ready():
            return True
        if self.embedder.status().get("state") in ("loading", "not_loaded"):
            self.embedder.start()
            return False
        with self._lock:
            return time.monotonic() >= self._retry_at

    def failed(self) -> None:
        with self._lock:
            self._retry_at = time.monotonic() + self.retry_after_s
