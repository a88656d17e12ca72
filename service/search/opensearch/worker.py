"""The background thread that keeps the mirror converging: it runs one sync cycle every interval, and
backs off exponentially (up to a minute) while cycles fail, e.g. while the cluster is down."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

MAX_BACKOFF = 60.0


class SyncWorker:
    def __init__(self, cycle: Callable[[], None], interval: float, name: str = "memory-mirror-sync") -> None:
        self._cycle = cycle
        self.interval = interval
        self.delay = interval
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def wake(self) -> None:
        """Run the next cycle now rather than at the end of the interval (a query-log row waits for it)."""
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._cycle()
                self.delay = self.interval
            except Exception as exc:  # keep the thread alive whatever happens; the outbox keeps the work
                self.delay = min(MAX_BACKOFF, max(self.interval, self.delay * 2))
                log.warning("mirror sync failed (next try in %.0f s): %s", self.delay, exc)
            self._wake.wait(self.delay)
            self._wake.clear()
