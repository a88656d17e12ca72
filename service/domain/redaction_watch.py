"""A running server's copies of words kept outside the store and its search indexes, dropped once a redaction is
recorded.

`memory redact` (as a rule another process than `memory serve`) rewrites the store. The search indexes follow
the store on their own: the embedded index drops a redacted fact at its next sync, the OpenSearch candidates at
the mirror worker's next cycle. What no index owns are the caches of recent texts: the embedder's recent queries
(which a redaction's `--match` rewrites in the query log), the second ranking stage's stems and word sets of
facts and queries (service.domain.wording) and the backends' stems of query terms. The watch reads the store's
redaction mark (the newest record and the searches redacted in all) every CHECK_SECONDS and, whenever it
moved, empties every one of those caches: they fill again from what the store holds now.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from service.domain.ports.canonical import CanonicalStore

log = logging.getLogger(__name__)

CHECK_SECONDS = 2.0


class RedactionWatch:
    def __init__(self, store: CanonicalStore, forget: Sequence[Callable[[], None]]) -> None:
        self.store = store
        self.forget = list(forget)
        self.seen: tuple[int, int] | None = None  # None until the first check: the caches are emptied then too
        self.emptied = 0  # how many times the caches were emptied
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def check(self) -> bool:
        """Empty the caches if the mark moved since the last check (or at the first); True when they were."""
        with self.store.read() as uow:
            mark = uow.redactions.mark()
        if mark == self.seen:
            return False
        for forget in self.forget:
            forget()
        self.seen = mark  # only once every cache is empty: a failure above is retried at the next check
        self.emptied += 1
        return True

    def start(self, every: float = CHECK_SECONDS) -> None:
        """Check every `every` seconds in a daemon thread until stop() (one thread, however often started)."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, args=(every,), name="redaction-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None

    def _run(self, every: float) -> None:
        while True:
            try:
                self.check()
            except Exception as exc:  # the database unreachable, say: the next check tries again
                log.warning("could not check for redactions (next try in %.0f s): %s", every, exc)
            if self._stop.wait(every):
                return
